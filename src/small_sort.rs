//! Sorts that add little code to the wasm module (each use of the standard library's sorts adds
//! kilobytes of it): an insertion sort, for the lists that are short or nearly sorted (a key's
//! versions, a level's SSTs with a compaction's outputs added), and a radix sort of times, for an
//! SST's expiry times (as many as its rows).

use alloc::vec::Vec;

/// Sorts `items` so that no item is `before` the one ahead of it; stable. Quadratic in the worst
/// case, linear on a sorted list.
pub(crate) fn insertion_sort_by<T>(items: &mut [T], before: impl Fn(&T, &T) -> bool) {
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 && before(&items[j], &items[j - 1]) {
            items.swap(j, j - 1);
            j -= 1;
        }
    }
}

/// Sorts `times` ascending: a least-significant-byte-first radix sort, one pass of 256 buckets per
/// byte in which the times differ. Times written together share their high bytes (a day's worth
/// of milliseconds spans four bytes), so an SST's expiry times take three or four passes over the
/// list, where a comparison sort takes a pass per doubling of its length.
pub(crate) fn radix_sort_times(times: &mut Vec<i64>) {
    // As unsigned numbers in the same order: the sign bit flipped.
    let ordered = |t: i64| (t as u64) ^ (1 << 63);
    let Some(&first) = times.first() else {
        return;
    };
    let differing = times
        .iter()
        .fold(0u64, |acc, &t| acc | (ordered(t) ^ ordered(first)));
    if differing == 0 {
        // All equal (an SST whose rows were all given one expiry time): sorted already.
        return;
    }
    let mut scratch = alloc::vec![0i64; times.len()];
    for shift in (0..64).step_by(8) {
        if (differing >> shift) & 0xff == 0 {
            continue;
        }
        let bucket = |t: i64| ((ordered(t) >> shift) & 0xff) as usize;
        let mut starts = [0usize; 256];
        for &t in times.iter() {
            if let Some(n) = starts.get_mut(bucket(t)) {
                *n += 1;
            }
        }
        let mut next = 0;
        for start in starts.iter_mut() {
            let count = *start;
            *start = next;
            next += count;
        }
        for &t in times.iter() {
            if let Some(at) = starts.get_mut(bucket(t)) {
                if let Some(slot) = scratch.get_mut(*at) {
                    *slot = t;
                }
                *at += 1;
            }
        }
        core::mem::swap(times, &mut scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    #[test]
    fn radix_sort_times_leaves_equal_times_and_single_times_as_they_are() {
        for mut times in [vec![], vec![7i64], vec![-3i64; 5], vec![i64::MIN, i64::MIN]] {
            let expected = times.clone();
            radix_sort_times(&mut times);
            assert_eq!(times, expected);
        }
    }

    proptest! {
        #[test]
        fn sorts_like_the_standard_stable_sort(items in proptest::collection::vec((0u8..8, any::<u16>()), 0..60)) {
            let mut ours = items.clone();
            insertion_sort_by(&mut ours, |a, b| a.0 < b.0);
            let mut std_sorted: Vec<(u8, u16)> = items;
            std_sorted.sort_by_key(|item| item.0);
            prop_assert_eq!(ours, std_sorted);
        }

        #[test]
        fn radix_sort_times_sorts_any_times_like_the_standard_sort(mut times in proptest::collection::vec(any::<i64>(), 0..300)) {
            let mut expected = times.clone();
            expected.sort_unstable();
            radix_sort_times(&mut times);
            prop_assert_eq!(times, expected);
        }

        #[test]
        fn radix_sort_times_sorts_times_that_share_their_high_bytes(
            base in any::<i64>(),
            offsets in proptest::collection::vec(0i64..5_000_000, 0..300),
        ) {
            let mut times: Vec<i64> = offsets.iter().map(|o| base.saturating_add(*o)).collect();
            let mut expected = times.clone();
            expected.sort_unstable();
            radix_sort_times(&mut times);
            prop_assert_eq!(times, expected);
        }
    }
}
