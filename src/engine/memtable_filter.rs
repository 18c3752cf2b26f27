//! [`MemtableFilter`]: a Bloom filter over the keys a memtable holds, so that a point read of a
//! key the memtable does not hold (most reads: the memtable holds the newest writes only) skips
//! the map's search, about fifteen whole-key comparisons. It is built in memory as keys are
//! written; it is not part of the format.
//!
//! With the `memtable-filter` feature off (the browser's engine, where its code would cost more
//! bytes than the package has to spare, and a read that misses the memtable mostly waits on
//! IndexedDB) it holds nothing and rules nothing out.

#[cfg(feature = "memtable-filter")]
use alloc::vec::Vec;

/// A Bloom filter over a memtable's keys, probed with their [`hash`](Self::hash): "no" is
/// certain.
///
/// Blocked: a key's three bits lie in one 64-bit word. At least [`MIN_BITS_PER_KEY`] bits a key
/// (it doubles, rebuilt from the map's keys, when it would fall below), so about 1 % of the keys
/// it does not hold answer "maybe". Keys a rollback removes stay in it ("maybe", harmlessly). Not
/// charged to the memtable's bytes: 2 to 4 bytes a key, against a key's charge of 48 and more.
#[derive(Default, Debug)]
pub(crate) struct MemtableFilter {
    /// A power of two in length, or empty before the first key.
    #[cfg(feature = "memtable-filter")]
    words: Vec<u64>,
    /// Keys added (the map's distinct keys, and any a rollback removed since).
    #[cfg(feature = "memtable-filter")]
    keys: usize,
}

/// The fewest filter bits a key is given.
#[cfg(feature = "memtable-filter")]
const MIN_BITS_PER_KEY: usize = 16;

/// The words of a database's first filter (2 KiB, for 1,024 keys): a memtable that takes more
/// keys rebuilds its filter once per doubling, hashing its keys again; the next memtable starts
/// at the size the last one's reached (`Memtable::following`).
#[cfg(feature = "memtable-filter")]
const FIRST_WORDS: usize = 256;

#[cfg(feature = "memtable-filter")]
impl MemtableFilter {
    /// The hash the filter is built from and probed with. Not the SSTs' XXH3: every key a write
    /// puts in a memtable is hashed, and in WebAssembly XXH3's 128-bit products cost more. A
    /// multiply per eight bytes, then MurmurHash3's finalizer, which carries every input bit to
    /// every output bit: the low bits choose the word and the high bits the bits in it.
    pub(crate) fn hash(key: &[u8]) -> u64 {
        const K: u64 = 0x9E37_79B9_7F4A_7C15;
        let mix = |h: u64, word: [u8; 8]| {
            (h ^ u64::from_le_bytes(word))
                .wrapping_mul(K)
                .rotate_left(31)
        };
        let mut h = key.len() as u64;
        // Whole words read as words (one load each), the last part word padded with zeros.
        let mut words = key.chunks_exact(8);
        for word in &mut words {
            h = mix(h, word.try_into().unwrap_or_default());
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last.iter_mut().zip(rest).for_each(|(to, from)| *to = *from);
            h = mix(h, last);
        }
        h ^= h >> 33;
        h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
        h ^= h >> 33;
        h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
        h ^ (h >> 33)
    }

    /// False only if no key with this hash was added.
    pub(crate) fn may_hold(&self, hash: u64) -> bool {
        if self.words.is_empty() {
            return false;
        }
        let (word, mask) = probe(hash, self.words.len());
        self.words.get(word).is_some_and(|w| w & mask == mask)
    }

    /// Note a key just added to the memtable's map (`hash` its [`hash`](Self::hash)), first
    /// doubling the filter, rebuilt from every key `keys` yields (the map's, the new one among
    /// them), if it would hold fewer than [`MIN_BITS_PER_KEY`] bits a key.
    pub(crate) fn add<'k, K: Iterator<Item = &'k [u8]>>(
        &mut self,
        hash: u64,
        keys: impl FnOnce() -> K,
    ) {
        self.keys += 1;
        if self.keys * MIN_BITS_PER_KEY <= self.words.len() * 64 {
            self.set(hash);
            return;
        }
        let words = (self.words.len() * 2).max(FIRST_WORDS);
        self.words.clear();
        self.words.resize(words, 0);
        self.keys = 0;
        for key in keys() {
            self.keys += 1;
            self.set(Self::hash(key));
        }
    }

    /// An empty filter of this one's size.
    pub(crate) fn empty_like(&self) -> MemtableFilter {
        MemtableFilter {
            words: alloc::vec![0; self.words.len()],
            keys: 0,
        }
    }

    fn set(&mut self, hash: u64) {
        let (word, mask) = probe(hash, self.words.len());
        if let Some(w) = self.words.get_mut(word) {
            *w |= mask;
        }
    }
}

/// The word of `hash` and the mask of its bits in it, in a filter of `words` words (a power of
/// two, not zero).
#[cfg(feature = "memtable-filter")]
fn probe(hash: u64, words: usize) -> (usize, u64) {
    // The low bits choose the word; three 6-bit fields of the high half choose the bits.
    let word = (hash as usize) & (words - 1);
    let bit = |shift: u32| 1u64 << ((hash >> shift) & 63);
    (word, bit(32) | bit(38) | bit(44))
}

/// Without the feature: nothing is kept, every key may be held.
#[cfg(not(feature = "memtable-filter"))]
impl MemtableFilter {
    pub(crate) fn hash(_key: &[u8]) -> u64 {
        0
    }

    pub(crate) fn may_hold(&self, _hash: u64) -> bool {
        true
    }

    pub(crate) fn add<'k, K: Iterator<Item = &'k [u8]>>(
        &mut self,
        _hash: u64,
        _keys: impl FnOnce() -> K,
    ) {
    }

    pub(crate) fn empty_like(&self) -> MemtableFilter {
        MemtableFilter {}
    }
}

#[cfg(all(test, feature = "memtable-filter"))]
mod tests {
    use super::*;
    use alloc::collections::BTreeMap;
    use alloc::format;

    fn key(i: u32) -> Vec<u8> {
        format!("session:{i:08}").into_bytes()
    }

    /// Add keys `0..n` as a memtable would: each into the map, then into the filter.
    fn filled(n: u32) -> (MemtableFilter, BTreeMap<Vec<u8>, ()>) {
        let mut map = BTreeMap::new();
        let mut filter = MemtableFilter::default();
        for i in 0..n {
            map.insert(key(i), ());
            filter.add(MemtableFilter::hash(&key(i)), || {
                map.keys().map(Vec::as_slice)
            });
        }
        (filter, map)
    }

    #[test]
    fn an_empty_filter_holds_nothing() {
        assert!(!MemtableFilter::default().may_hold(MemtableFilter::hash(b"k")));
    }

    #[test]
    fn every_key_added_is_held_across_every_rebuild() {
        // 20,000 keys: the filter doubles from 256 words five times on the way.
        let (filter, _) = filled(20_000);
        assert_eq!(filter.words.len(), 8_192);
        for i in 0..20_000 {
            assert!(
                filter.may_hold(MemtableFilter::hash(&key(i))),
                "key {i} lost"
            );
        }
    }

    #[test]
    fn about_one_percent_of_keys_not_added_are_let_through() {
        for n in [1_000, 5_000, 20_000] {
            let (filter, _) = filled(n);
            let through = (n..n + 100_000)
                .filter(|&i| filter.may_hold(MemtableFilter::hash(&key(i))))
                .count();
            // At 16 to 32 bits a key; at 16, blocked, about 0.8 %.
            assert!(
                through < 2_000,
                "{through} of 100,000 absent keys let through at {n} keys"
            );
        }
    }
}
