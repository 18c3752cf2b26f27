//! A search aid over sorted keys that lie scattered in memory (a page's rows, an SST's page
//! boundaries): [`KeyPrefixes`] keeps, in one contiguous array, the eight bytes of each key that
//! follow the prefix all the keys share. A binary search then reads that small array, not each
//! probed key where it lies, and compares whole keys only among the few whose eight bytes equal
//! the sought key's. It is built in memory from keys already read; it is not part of the format.
//!
//! [`SearchAid`] is what a page or an SST holds: its keys' prefixes, built once searches of it
//! show it is read often ([`SEARCHES_BEFORE_PREFIXES`]) and shared by every clone. With the
//! `search-prefixes` feature off (the browser's engine, where 1.4 KB of gzipped code would cost
//! more than it saves a page read from IndexedDB) it holds nothing and narrows nothing, and
//! searches read the keys themselves.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::ops::Range;

use super::key_order::{key_below, keys_equal};
#[cfg(feature = "search-prefixes")]
use {
    alloc::rc::Rc,
    core::cell::{Cell, OnceCell},
};

/// How many searches of a key list go without prefixes before one builds them. Building reads
/// every key once, as a few plain searches do: a page searched once or twice (a purge's, a
/// write's lookup, a scan's seek) would pay more than it saves.
pub const SEARCHES_BEFORE_PREFIXES: u32 = 3;

/// A lazily built [`KeyPrefixes`] over a fixed list of sorted keys, shared by clones.
#[derive(Clone, Debug, Default)]
pub struct SearchAid(#[cfg(feature = "search-prefixes")] Rc<Aid>);

#[cfg(feature = "search-prefixes")]
#[derive(Debug, Default)]
struct Aid {
    /// Searches made without prefixes so far.
    searches: Cell<u32>,
    /// `None` once built if the keys could not be read (searches then read them themselves,
    /// and report the damage).
    prefixes: OnceCell<Option<KeyPrefixes>>,
}

impl SearchAid {
    /// Where the first of `len` sorted keys that is `>= key` lies, as [`KeyPrefixes::narrow`]
    /// says; `keys` lists them when the prefixes are built (`None` if they cannot be read).
    /// The whole `0..len` for the first [`SEARCHES_BEFORE_PREFIXES`] searches, without the
    /// `search-prefixes` feature, or if the keys could not be read.
    #[cfg_attr(not(feature = "search-prefixes"), allow(unused_variables))]
    pub fn narrow<'k>(
        &self,
        key: &[u8],
        len: usize,
        keys: impl FnOnce() -> Option<Vec<&'k [u8]>>,
    ) -> Range<usize> {
        #[cfg(feature = "search-prefixes")]
        {
            let aid = &self.0;
            let built = match aid.prefixes.get() {
                Some(built) => built.as_ref(),
                None if aid.searches.get() < SEARCHES_BEFORE_PREFIXES => {
                    aid.searches.set(aid.searches.get() + 1);
                    None
                }
                None => aid
                    .prefixes
                    .get_or_init(|| keys().map(|k| KeyPrefixes::new(&k)))
                    .as_ref(),
            };
            if let Some(prefixes) = built {
                return prefixes.narrow(key);
            }
        }
        0..len
    }
}

/// The eight bytes after each key's shared prefix, big-endian, zero-padded past a key's end.
///
/// Read as numbers, these words keep the keys' order: if one key's word is below another's, the
/// key is below the other (all keys begin with the same shared prefix, and a padding zero sorts
/// at or below any byte). Equal words say nothing, so [`narrow`](Self::narrow) leaves those keys
/// to be compared whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPrefixes {
    /// The bytes every key begins with.
    shared: Box<[u8]>,
    words: Box<[u64]>,
}

/// The eight bytes of `tail` from its start, big-endian, zero-padded.
fn word(tail: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    for (to, from) in bytes.iter_mut().zip(tail) {
        *to = *from;
    }
    u64::from_be_bytes(bytes)
}

impl KeyPrefixes {
    /// The words of `keys`, which must be sorted ascending (equal keys allowed).
    pub fn new(keys: &[&[u8]]) -> KeyPrefixes {
        let shared: &[u8] = match (keys.first(), keys.last()) {
            // The first and the last key share what every key between them shares.
            (Some(first), Some(last)) => {
                let len = first.iter().zip(*last).take_while(|(a, b)| a == b).count();
                first.get(..len).unwrap_or_default()
            }
            _ => &[],
        };
        let words = keys
            .iter()
            .map(|key| word(key.get(shared.len()..).unwrap_or_default()))
            .collect::<Vec<u64>>();
        KeyPrefixes {
            shared: shared.into(),
            words: words.into_boxed_slice(),
        }
    }

    /// The indices where the first key `>= key` can be: every key before the range is below
    /// `key`, every key after it is above. Keys inside it must be compared whole.
    pub fn narrow(&self, key: &[u8]) -> Range<usize> {
        let all = self.words.len();
        match key.get(..self.shared.len()) {
            Some(head) if keys_equal(head, &self.shared) => {
                let sought = word(key.get(self.shared.len()..).unwrap_or_default());
                let start = self.words.partition_point(|&w| w < sought);
                let rest = self.words.get(start..).unwrap_or_default();
                // Most runs of equal words are none or one long: look at the first few before
                // searching the rest.
                let equal = match rest.iter().take(4).position(|&w| w != sought) {
                    Some(n) => n,
                    None => rest.partition_point(|&w| w == sought),
                };
                start..start + equal
            }
            // Not beginning with the shared prefix, `key` is below every key or above them all.
            _ if key_below(key, &self.shared) => 0..0,
            _ => all..all,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use proptest::prelude::*;

    /// The answer [`KeyPrefixes::narrow`] must allow: the first index whose key is `>= key`.
    fn lower_bound(keys: &[&[u8]], key: &[u8]) -> usize {
        keys.partition_point(|k| *k < key)
    }

    fn check(keys: &[&[u8]], probes: &[&[u8]]) {
        let prefixes = KeyPrefixes::new(keys);
        for key in probes.iter().copied().chain(keys.iter().copied()) {
            let range = prefixes.narrow(key);
            let within = keys.get(range.clone()).unwrap();
            assert_eq!(
                range.start + within.partition_point(|k| *k < key),
                lower_bound(keys, key),
                "key {key:?} in {keys:?}: range {range:?}"
            );
        }
    }

    #[test]
    fn narrowing_then_comparing_whole_keys_finds_the_lower_bound() {
        let probes: Vec<&[u8]> = vec![
            b"",
            b"\0",
            b"a",
            b"ab",
            b"ab\0",
            b"abc",
            b"abd",
            b"b",
            b"session:",
            b"session:0000",
            b"session:00000099",
            b"session:00000100",
            b"session:000001000",
            b"session;",
            b"\xff",
        ];
        check(&[], &probes);
        check(&[b"only"], &probes);
        check(&[b"a", b"ab", b"ab\0", b"ab\0\0", b"abc", b"b"], &probes);
        // Keys with a long shared prefix, so that the words are what follows it.
        let sessions: Vec<Vec<u8>> = (90..=110)
            .map(|i| alloc::format!("session:{i:08}").into_bytes())
            .collect();
        let sessions: Vec<&[u8]> = sessions.iter().map(Vec::as_slice).collect();
        check(&sessions, &probes);
        // Equal keys (the versions of one key in a page) and keys equal in their first eight
        // bytes after the shared prefix.
        check(
            &[
                b"k",
                b"k",
                b"k",
                b"k12345678a",
                b"k12345678b",
                b"k12345678b",
                b"k2",
            ],
            &[
                b"k1234567",
                b"k12345678",
                b"k12345678a\0",
                b"k12345679",
                b"j",
                b"l",
            ],
        );
    }

    proptest! {
        /// Keys over three byte values, some long: shared prefixes, equal words and equal keys.
        #[test]
        fn narrowing_agrees_with_a_plain_search_over_any_sorted_keys(
            mut keys in proptest::collection::vec(proptest::collection::vec(0u8..3, 0..12), 0..40),
            probes in proptest::collection::vec(proptest::collection::vec(0u8..3, 0..12), 1..20),
        ) {
            keys.sort();
            let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            let probes: Vec<&[u8]> = probes.iter().map(Vec::as_slice).collect();
            check(&keys, &probes);
        }
    }

    #[cfg(feature = "search-prefixes")]
    #[test]
    fn a_search_aid_builds_the_prefixes_once_a_list_was_searched_often_and_shares_them() {
        let keys: Vec<&[u8]> = vec![b"a1", b"a2", b"a3", b"a4"];
        let aid = SearchAid::default();
        let listed = core::cell::Cell::new(0);
        let list = || {
            listed.set(listed.get() + 1);
            Some(keys.clone())
        };
        for _ in 0..SEARCHES_BEFORE_PREFIXES {
            assert_eq!(aid.narrow(b"a3", keys.len(), list), 0..4);
        }
        assert_eq!(listed.get(), 0, "no list read before the threshold");
        let clone = aid.clone();
        assert_eq!(aid.narrow(b"a3", keys.len(), list), 2..3);
        assert_eq!(clone.narrow(b"a0", keys.len(), list), 0..0);
        assert_eq!(clone.narrow(b"a9", keys.len(), list), 4..4);
        assert_eq!(listed.get(), 1, "built once, shared by the clone");
        // Keys that cannot be read: plain searches from then on, never a second attempt.
        let broken = SearchAid::default();
        for _ in 0..SEARCHES_BEFORE_PREFIXES + 3 {
            assert_eq!(broken.narrow(b"a3", 4, || None), 0..4);
        }
    }

    #[test]
    fn a_key_outside_the_shared_prefix_lands_before_or_after_every_key() {
        let prefixes = KeyPrefixes::new(&[b"mango1", b"mango2"]);
        assert_eq!(prefixes.narrow(b"apple"), 0..0);
        assert_eq!(prefixes.narrow(b"man"), 0..0);
        assert_eq!(prefixes.narrow(b"mangn"), 0..0);
        assert_eq!(prefixes.narrow(b"mangp"), 2..2);
        assert_eq!(prefixes.narrow(b"zebra"), 2..2);
    }
}
