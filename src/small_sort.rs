//! Insertion sort, for the lists that are short or nearly sorted (a key's versions, a level's
//! SSTs with a compaction's outputs added). Each use of the standard library's sorts adds
//! kilobytes of code to the wasm module; this adds a few hundred bytes, and on such lists it is
//! as fast.

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

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sorts_like_the_standard_stable_sort(items in proptest::collection::vec((0u8..8, any::<u16>()), 0..60)) {
            let mut ours = items.clone();
            insertion_sort_by(&mut ours, |a, b| a.0 < b.0);
            let mut std_sorted: Vec<(u8, u16)> = items;
            std_sorted.sort_by_key(|item| item.0);
            prop_assert_eq!(ours, std_sorted);
        }
    }
}
