//! The order of keys, wherever the engine sorts or searches them (a memtable's map, a point
//! read's and a scan's searches, a write's plan, a page's rows as they are written, a
//! compaction's merge, the row cache's slots): bytewise, exactly `[u8]`'s own `Ord` and `Eq`,
//! computed eight bytes a step.
//!
//! `[u8]`'s comparisons call `memcmp` (`bcmp` for equality). Natively that is the C library's,
//! reached through a call the compiler cannot inline, which costs more than comparing a key of
//! a few dozen bytes here: the native load of 1M random keys went from 561k–619k to 684k–717k
//! keys a second with the memtable's, the flush's and the merge's comparisons moved here. In
//! the WebAssembly engines the binding's `memcmp` and `bcmp` (`bindings/web/src/compare.rs`)
//! are this function, since the target's own walk one byte a step; called directly it can be
//! inlined there too. Keys often share a long prefix (the namespace's four bytes, then
//! `session:000…`): each step skips eight equal bytes, and the first word that differs names
//! its first differing byte.

use core::cmp::Ordering;

/// `a.cmp(b)` for byte strings.
///
/// It compares words and single bytes, never slices: a slice comparison would call `memcmp`,
/// which in the wasm build is this function (`bindings/web/src/compare.rs`), and recurse.
pub fn compare_keys(a: &[u8], b: &[u8]) -> Ordering {
    let (mut x, mut y) = (a, b);
    while let (Some((wx, rx)), Some((wy, ry))) =
        (x.split_first_chunk::<8>(), y.split_first_chunk::<8>())
    {
        let (wx, wy) = (u64::from_le_bytes(*wx), u64::from_le_bytes(*wy));
        if wx != wy {
            // The lowest differing bit of little-endian words is in the first differing byte.
            let shift = (wx ^ wy).trailing_zeros() & !7;
            return ((wx >> shift) as u8).cmp(&((wy >> shift) as u8));
        }
        (x, y) = (rx, ry);
    }
    for (p, q) in x.iter().zip(y) {
        if p != q {
            return p.cmp(q);
        }
    }
    x.len().cmp(&y.len())
}

/// `a < b` for byte strings.
pub fn key_below(a: &[u8], b: &[u8]) -> bool {
    compare_keys(a, b) == Ordering::Less
}

/// `a == b` for byte strings.
pub fn keys_equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && compare_keys(a, b) == Ordering::Equal
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    /// Every pair of short strings over a small alphabet, and pairs that differ only past the
    /// first words, in each byte of a word.
    fn pairs() -> Vec<(Vec<u8>, Vec<u8>)> {
        let alphabet = [0u8, 1, 0x7f, 0x80, 0xff];
        let mut strings: Vec<Vec<u8>> = vec![Vec::new()];
        for len in 1..=3 {
            let mut more = Vec::new();
            for s in strings.iter().filter(|s| s.len() == len - 1) {
                for &b in &alphabet {
                    let mut t = s.clone();
                    t.push(b);
                    more.push(t);
                }
            }
            strings.extend(more);
        }
        let mut pairs = Vec::new();
        for a in &strings {
            for b in &strings {
                pairs.push((a.clone(), b.clone()));
            }
        }
        let base: Vec<u8> = b"\0\0\0\x01session:00012345-tail".to_vec();
        for at in 0..base.len() {
            for delta in [1u8, 0x80, 0xff] {
                let mut other = base.clone();
                other[at] = other[at].wrapping_add(delta);
                pairs.push((base.clone(), other.clone()));
                pairs.push((other, base.clone()));
            }
            pairs.push((base[..at].to_vec(), base.clone()));
            pairs.push((base.clone(), base[..at].to_vec()));
        }
        pairs
    }

    #[test]
    fn orders_and_equates_byte_strings_as_slices_do() {
        for (a, b) in pairs() {
            assert_eq!(compare_keys(&a, &b), a.cmp(&b), "{a:?} vs {b:?}");
            assert_eq!(key_below(&a, &b), a < b, "{a:?} < {b:?}");
            assert_eq!(keys_equal(&a, &b), a == b, "{a:?} == {b:?}");
        }
    }

    proptest! {
        #[test]
        fn orders_arbitrary_keys_as_slices_do(
            shared in proptest::collection::vec(any::<u8>(), 0..24),
            a in proptest::collection::vec(any::<u8>(), 0..24),
            b in proptest::collection::vec(any::<u8>(), 0..24),
        ) {
            let a = [shared.as_slice(), &a].concat();
            let b = [shared.as_slice(), &b].concat();
            prop_assert_eq!(compare_keys(&a, &b), a.cmp(&b));
            prop_assert_eq!(keys_equal(&a, &b), a == b);
        }
    }
}
