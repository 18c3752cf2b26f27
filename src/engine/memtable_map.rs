//! The engine's ordered map of byte-string keys (the memtable's, and a write's read and planned
//! rows): in sorted chunks of at most [`CHUNK`] entries, with a finger on the chunk the last
//! insert went to.
//!
//! Writes come in ascending runs: a write's rows are sorted before they are applied, its
//! expiry-index rows follow in an ascending run of their own, and ingests are often in key order.
//! With the finger, an insert that extends a run costs two or three key comparisons where a
//! B-tree searches from its root (a few dozen comparisons at a memtable's size, two inserts a put
//! with a TTL). A full chunk a run reaches is split where the run goes on (a chunk that fills at
//! its end starts the next; keys of another run above it move out), so ordered ingests leave
//! chunks full; a full chunk any other insert reaches is split in halves, so no pattern of inserts
//! leaves chunks of a few keys. Any other insert finds its chunk by a binary search over
//! the chunks' last keys, then its place in the chunk; a point read is the same two searches.
//! Entries leave only through [`ChunkedMap::retain`] (a rollback), which drops emptied chunks.

use alloc::vec::Vec;
use core::ops::Bound;

use super::map_key::MapKey;
use crate::format::key_order::{key_below, keys_equal};

/// Most entries a chunk holds: a binary search of a few steps, and an insert in its middle moves
/// at most this many entries.
const CHUNK: usize = 64;

/// A key, held in place when it is short (`map_key.rs`: a search then reads it where its entry
/// is), and its value.
type Entry<V> = (MapKey, V);

/// An ordered map from byte strings, in sorted chunks (see the module docs).
#[derive(Debug)]
pub(crate) struct ChunkedMap<V> {
    /// Each chunk non-empty and sorted, every key of a chunk below every key of the next.
    chunks: Vec<Vec<Entry<V>>>,
    /// The chunk the last insert went to.
    finger: usize,
    /// The place just after the key the last insert added in the finger's chunk (`usize::MAX`
    /// if the last call added none): an insert there continues a run.
    run_at: usize,
}

impl<V> Default for ChunkedMap<V> {
    fn default() -> Self {
        ChunkedMap {
            chunks: Vec::new(),
            finger: 0,
            run_at: usize::MAX,
        }
    }
}

/// A place between entries: before entry `at` of chunk `chunk` (`at` may be the chunk's length).
#[derive(Clone, Copy)]
struct Place {
    chunk: usize,
    at: usize,
}

impl<V> ChunkedMap<V> {
    /// Whether no key is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Number of keys (counted: a chunk at a time).
    pub(crate) fn len(&self) -> usize {
        self.chunks.iter().map(Vec::len).sum()
    }

    /// Put `value` under `key`, in place of any value it had.
    pub(crate) fn insert(&mut self, key: MapKey, value: V) {
        let p = self.place_for_insert(&key);
        if self.holds_at(p, &key) {
            let p = self.touched(p);
            self.chunks[p.chunk][p.at].1 = value;
        } else {
            self.add(p, key, value);
        }
    }

    /// The value of `key`.
    pub(crate) fn get(&self, key: &[u8]) -> Option<&V> {
        let p = self.place(key, false);
        self.entry(p)
            .filter(|(k, _)| keys_equal(k, key))
            .map(|(_, v)| v)
    }

    /// The value of `key`, made by `make` and inserted under `key` if it was absent, and whether
    /// it was.
    pub(crate) fn get_or_insert_with(
        &mut self,
        key: MapKey,
        make: impl FnOnce() -> V,
    ) -> (&mut V, bool) {
        let p = self.place_for_insert(&key);
        let found = self.holds_at(p, &key);
        let p = if found {
            self.touched(p)
        } else {
            self.add(p, key, make())
        };
        (&mut self.chunks[p.chunk][p.at].1, !found)
    }

    /// Whether the entry at place `p` is `key`'s.
    fn holds_at(&self, p: Place, key: &[u8]) -> bool {
        self.entry(p).is_some_and(|(k, _)| keys_equal(k, key))
    }

    /// Note that the entry at place `p` was found, not added; `p`. A run goes on past the key
    /// it added last, found again.
    fn touched(&mut self, p: Place) -> Place {
        let last_added = p.chunk == self.finger && p.at + 1 == self.run_at;
        if !last_added {
            self.run_at = usize::MAX;
        }
        self.finger = p.chunk;
        p
    }

    /// Add `key` with `value` at place `p` (where [`Self::place_for_insert`] put it); the place
    /// it went to.
    fn add(&mut self, p: Place, key: MapKey, value: V) -> Place {
        // `make_room` answers a place within a chunk that exists.
        let p = self.make_room(p);
        self.chunks[p.chunk].insert(p.at, (key, value));
        self.finger = p.chunk;
        self.run_at = p.at + 1;
        p
    }

    /// Where an insert of `key` goes: its place in the finger's chunk if `key` falls within its
    /// reach (after the previous chunk's keys, before the next's; extending a run is then one
    /// comparison with the chunk's last key), else its place in the first chunk whose last key
    /// is at or after it — or the end of the chunk before, if `key` falls in the gap between
    /// them and that chunk has room, so that a run keeps extending one chunk.
    fn place_for_insert(&self, key: &[u8]) -> Place {
        let f = self.finger;
        let last_of = |c: usize| self.chunks.get(c).and_then(|c| c.last());
        let first_of = |c: usize| self.chunks.get(c).and_then(|c| c.first());
        let end_of = |c: usize| Place {
            chunk: c,
            at: self.chunks.get(c).map_or(0, Vec::len),
        };
        let after_previous = f == 0 || last_of(f - 1).is_some_and(|(k, _)| key_below(k, key));
        let before_next = first_of(f + 1).is_none_or(|(k, _)| key_below(key, k));
        if let (Some(c), true, true) = (self.chunks.get(f), after_previous, before_next) {
            if c.last().is_some_and(|(k, _)| key_below(k, key)) {
                return end_of(f);
            }
            return Place {
                chunk: f,
                at: index_in(c, key, false),
            };
        }
        let p = self.place(key, false);
        if p.chunk == self.chunks.len() {
            return end_of(p.chunk.saturating_sub(1));
        }
        let in_gap = p.chunk > 0 && first_of(p.chunk).is_some_and(|(k, _)| key_below(key, k));
        let room_before = self
            .chunks
            .get(p.chunk.wrapping_sub(1))
            .is_some_and(|c| c.len() < CHUNK);
        if in_gap && room_before {
            end_of(p.chunk - 1)
        } else {
            p
        }
    }

    /// Room for one entry at place `p`; the place it then goes to. A full chunk is split: where
    /// the entry goes if it continues a run (it follows the last insert's key, or goes after the
    /// last chunk's), the keys above it moving to a chunk of their own (an empty one at the
    /// chunk's end), so that the run goes on filling the chunk it is in and ordered runs leave
    /// chunks full; else in halves, so that no pattern of inserts leaves chunks of a few entries
    /// each.
    fn make_room(&mut self, p: Place) -> Place {
        let last = p.chunk + 1 == self.chunks.len();
        let run = p.chunk == self.finger && p.at == self.run_at || last && p.at == CHUNK;
        let Some(c) = self.chunks.get_mut(p.chunk) else {
            // The first chunk grows as it needs: a write's read rows are often one key.
            self.chunks.push(Vec::new());
            return Place {
                chunk: self.chunks.len() - 1,
                at: 0,
            };
        };
        if c.len() < CHUNK {
            return p;
        }
        if run && p.at == CHUNK {
            self.chunks.insert(p.chunk + 1, Vec::with_capacity(CHUNK));
            return Place {
                chunk: p.chunk + 1,
                at: 0,
            };
        }
        let split = if run { p.at } else { CHUNK / 2 };
        let upper = c.split_off(split);
        self.chunks.insert(p.chunk + 1, upper);
        if p.at <= split {
            p
        } else {
            Place {
                chunk: p.chunk + 1,
                at: p.at - split,
            }
        }
    }

    /// The entry at place `p`.
    fn entry(&self, p: Place) -> Option<&Entry<V>> {
        self.chunks.get(p.chunk).and_then(|c| c.get(p.at))
    }

    /// Every key, in order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &[u8]> {
        self.chunks.iter().flatten().map(|(k, _)| k.as_slice())
    }

    /// Every value, in the order of the keys.
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.chunks.iter().flatten().map(|(_, v)| v)
    }

    /// The keys within `(lower, upper)` with their values, in order (reversible). Bounds that
    /// cross yield nothing.
    pub(crate) fn range(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Range<'_, V> {
        let front = match lower {
            Bound::Included(k) => self.place(k, false),
            Bound::Excluded(k) => self.place(k, true),
            Bound::Unbounded => Place { chunk: 0, at: 0 },
        };
        let back = match upper {
            Bound::Included(k) => self.place(k, true),
            Bound::Excluded(k) => self.place(k, false),
            Bound::Unbounded => Place {
                chunk: self.chunks.len(),
                at: 0,
            },
        };
        Range {
            chunks: &self.chunks,
            front,
            back,
        }
    }

    /// The place of the first key above `key` (`past`), or at or above it. Always within a
    /// chunk (`at` below its length), or the end `(chunks, 0)`.
    fn place(&self, key: &[u8], past: bool) -> Place {
        let chunk = self
            .chunks
            .partition_point(|c| c.last().is_some_and(|(k, _)| below(k, key, past)));
        let at = self.chunks.get(chunk).map_or(0, |c| index_in(c, key, past));
        Place { chunk, at }
    }

    /// Keep the entries `keep` answers true for (it may change their values); chunks left empty
    /// go.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&[u8], &mut V) -> bool) {
        for c in &mut self.chunks {
            c.retain_mut(|(k, v)| keep(k, v));
        }
        self.chunks.retain(|c| !c.is_empty());
        self.finger = 0;
        self.run_at = usize::MAX;
    }
}

/// Whether `k` comes before the place sought: below `key`, or at it too if `past`.
fn below(k: &[u8], key: &[u8], past: bool) -> bool {
    if past {
        !key_below(key, k)
    } else {
        key_below(k, key)
    }
}

/// The index in chunk `c` of its first key above `key` (`past`), or at or above it.
fn index_in<V>(c: &[Entry<V>], key: &[u8], past: bool) -> usize {
    c.partition_point(|(k, _)| below(k, key, past))
}

impl<V> IntoIterator for ChunkedMap<V> {
    type Item = (MapKey, V);
    type IntoIter = core::iter::Flatten<alloc::vec::IntoIter<Vec<Entry<V>>>>;

    /// Every entry, in key order.
    fn into_iter(self) -> Self::IntoIter {
        self.chunks.into_iter().flatten()
    }
}

/// The entries between two places of a [`ChunkedMap`], from either end.
pub(crate) struct Range<'a, V> {
    chunks: &'a [Vec<Entry<V>>],
    /// The next entry from the front: within a chunk, or the end.
    front: Place,
    /// Just after the next entry from the back: within a chunk, or the end.
    back: Place,
}

impl<V> Range<'_, V> {
    fn is_done(&self) -> bool {
        (self.front.chunk, self.front.at) >= (self.back.chunk, self.back.at)
    }
}

impl<'a, V> Iterator for Range<'a, V> {
    type Item = (&'a [u8], &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        if self.is_done() {
            return None;
        }
        let c = self.chunks.get(self.front.chunk)?;
        let (k, v) = c.get(self.front.at)?;
        self.front.at += 1;
        if self.front.at == c.len() {
            self.front = Place {
                chunk: self.front.chunk + 1,
                at: 0,
            };
        }
        Some((k, v))
    }
}

impl<V> DoubleEndedIterator for Range<'_, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.is_done() {
            return None;
        }
        if self.back.at == 0 {
            let chunk = self.back.chunk.checked_sub(1)?;
            let at = self.chunks.get(chunk).map_or(0, Vec::len);
            self.back = Place { chunk, at };
        }
        self.back.at = self.back.at.checked_sub(1)?;
        let (k, v) = self.chunks.get(self.back.chunk)?.get(self.back.at)?;
        Some((k, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeMap;
    use alloc::format;

    /// Key `i`: ascending in `i`, and held in place by the map but for every third, which is
    /// too long to be (`MapKey`), so every test meets both kinds side by side.
    fn key(i: u32) -> Vec<u8> {
        if i % 3 == 0 {
            format!("k{i:07}-held-on-the-heap-by-the-map").into_bytes()
        } else {
            format!("k{i:07}").into_bytes()
        }
    }

    /// Inserts `order`'s keys into a chunked map and a `BTreeMap` alike, each with its first
    /// insert's number, checking what every insert answers.
    fn both(order: impl IntoIterator<Item = u32>) -> (ChunkedMap<u32>, BTreeMap<Vec<u8>, u32>) {
        let mut map = ChunkedMap::default();
        let mut model = BTreeMap::new();
        for i in order {
            let absent = !model.contains_key(&key(i));
            let expected = *model.entry(key(i)).or_insert(i);
            let (v, added) = map.get_or_insert_with(key(i).into(), || i);
            assert_eq!((*v, added), (expected, absent), "key {i}");
        }
        (map, model)
    }

    fn agree(map: &ChunkedMap<u32>, model: &BTreeMap<Vec<u8>, u32>) {
        let all: Vec<_> = map.range(Bound::Unbounded, Bound::Unbounded).collect();
        let expected: Vec<_> = model.iter().map(|(k, v)| (k.as_slice(), v)).collect();
        assert_eq!(all, expected);
        assert!(map.keys().eq(model.keys().map(Vec::as_slice)));
        for c in &map.chunks {
            assert!(!c.is_empty() && c.len() <= CHUNK);
        }
    }

    /// Whether the chunks are at least half full on average (one chunk of slack at each end).
    fn half_full(map: &ChunkedMap<u32>) -> bool {
        let keys = map.keys().count();
        map.chunks.len() <= 2 * keys / CHUNK + 2
    }

    /// A seeded source of numbers below `n`.
    fn numbers(seed: u64) -> impl FnMut(usize) -> usize {
        let mut s = seed;
        move |n| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) as usize % n
        }
    }

    /// A seeded shuffle of `0..n`.
    fn shuffled(n: u32, seed: u64) -> Vec<u32> {
        let mut v: Vec<u32> = (0..n).collect();
        let mut below = numbers(seed);
        for i in (1..v.len()).rev() {
            v.swap(i, below(i + 1));
        }
        v
    }

    #[test]
    fn holds_what_a_btree_map_holds_in_any_insert_order() {
        let orders: Vec<Vec<u32>> = alloc::vec![
            (0..1_000).collect(),
            (0..1_000).rev().collect(),
            shuffled(1_000, 7),
            // Two interleaved ascending runs, as a write's rows and their expiry-index rows.
            (0..20)
                .flat_map(|b| (0..25)
                    .map(move |i| b * 25 + i)
                    .chain((0..25).map(move |i| 500 + b * 25 + i)))
                .collect(),
            // Keys inserted twice.
            (0..300).chain(0..300).chain(shuffled(300, 3)).collect(),
        ];
        for order in orders {
            let (map, model) = both(order);
            agree(&map, &model);
            for i in 0..1_100 {
                assert_eq!(map.get(&key(i)), model.get(&key(i)), "key {i}");
            }
        }
    }

    #[test]
    fn an_ordered_run_fills_its_chunks() {
        let (map, _) = both(0..10 * CHUNK as u32);
        assert_eq!(map.chunks.len(), 10);
        // Two runs taking turns, as a batch's rows and then their expiry-index rows.
        let (map, _) = both((0..40).flat_map(|b| {
            let rows = (0..100).map(move |i| b * 100 + i);
            rows.clone().chain(rows.map(|i| 100_000 + i))
        }));
        // The two runs part at their first meeting in a chunk; then each fills its own chunks.
        let keys = map.keys().count();
        assert!(
            map.chunks.len() <= keys.div_ceil(CHUNK) + 3,
            "{} chunks for {keys} keys",
            map.chunks.len()
        );
    }

    #[test]
    fn no_insert_pattern_leaves_chunks_of_a_few_keys() {
        let patterns: Vec<Vec<u32>> = alloc::vec![
            // Keys counting down just above a full chunk, the finger moved away in between.
            (0..64)
                .chain((0..900).flat_map(|j| [1_000 - j, 5_000 + j]))
                .collect(),
            // The same after a longer run.
            (0..256)
                .chain((0..2_000).flat_map(|j| [10_000 - j, 50_000 + j]))
                .collect(),
            // Keys counting down into the gap after a full chunk, each after a write of a key in
            // that chunk (which puts the finger back on it).
            (0..640)
                .map(|i| i * 1_000)
                .chain((0..900).flat_map(|j| [50_000, 63_999 - j]))
                .collect(),
            (0..2_000).rev().collect(),
            shuffled(5_000, 9),
        ];
        for (n, order) in patterns.into_iter().enumerate() {
            let (map, model) = both(order);
            agree(&map, &model);
            assert!(
                half_full(&map),
                "pattern {n}: {} chunks for {} keys",
                map.chunks.len(),
                model.len()
            );
        }
    }

    fn as_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
        b.as_ref().map(Vec::as_slice)
    }

    /// The model's keys within `(lo, hi)`.
    fn expected_range<'a>(
        model: &'a BTreeMap<Vec<u8>, u32>,
        lo: &Bound<Vec<u8>>,
        hi: &Bound<Vec<u8>>,
    ) -> Vec<(&'a [u8], &'a u32)> {
        model
            .iter()
            .filter(|(k, _)| {
                let k = k.as_slice();
                let above = match as_ref(lo) {
                    Bound::Included(b) => k >= b,
                    Bound::Excluded(b) => k > b,
                    Bound::Unbounded => true,
                };
                let below = match as_ref(hi) {
                    Bound::Included(b) => k <= b,
                    Bound::Excluded(b) => k < b,
                    Bound::Unbounded => true,
                };
                above && below
            })
            .map(|(k, v)| (k.as_slice(), v))
            .collect()
    }

    #[test]
    fn ranges_answer_as_a_btree_maps_for_every_bound() {
        let (map, model) = both(shuffled(300, 11).into_iter().map(|i| i * 2));
        // Every chunk's first and last key and the absent keys beside them, and keys beyond both
        // ends.
        let mut probes: Vec<u32> = alloc::vec![0, 1, 598, 599, 700];
        for c in &map.chunks {
            for (k, v) in [c.first(), c.last()].into_iter().flatten() {
                assert_eq!(model.get(k.as_slice()), Some(v));
                probes.extend([v.saturating_sub(1), *v, v + 1]);
            }
        }
        let mut all: Vec<Bound<Vec<u8>>> = alloc::vec![Bound::Unbounded];
        for p in probes {
            all.extend([Bound::Included(key(p)), Bound::Excluded(key(p))]);
        }
        let mut below = numbers(5);
        for lo in &all {
            for hi in &all {
                let expected = expected_range(&model, lo, hi);
                let got: Vec<_> = map.range(as_ref(lo), as_ref(hi)).collect();
                assert_eq!(got, expected, "{lo:?}..{hi:?}");
                let back: Vec<_> = map.range(as_ref(lo), as_ref(hi)).rev().collect();
                assert!(
                    back.iter().rev().eq(expected.iter()),
                    "{lo:?}..{hi:?} reversed"
                );
                // Taken from both ends in a seeded random order, every entry once.
                let mut range = map.range(as_ref(lo), as_ref(hi));
                let (mut front, mut rear) = (Vec::new(), Vec::new());
                loop {
                    let next = if below(2) == 0 {
                        range.next().map(|e| front.push(e))
                    } else {
                        range.next_back().map(|e| rear.push(e))
                    };
                    if next.is_none() {
                        break;
                    }
                }
                front.extend(rear.into_iter().rev());
                assert_eq!(front, expected, "{lo:?}..{hi:?} from both ends");
            }
        }
    }

    #[test]
    fn insert_replaces_a_value_and_the_map_yields_its_entries_in_order() {
        let empty = ChunkedMap::<u32>::default();
        assert_eq!(empty.len(), 0);
        assert!(empty.into_iter().next().is_none());
        let orders: Vec<Vec<u32>> = alloc::vec![
            shuffled(500, 13)
                .into_iter()
                .chain(shuffled(500, 17))
                .collect(),
            // New keys, with an earlier key written again every third step.
            shuffled(2_000, 19)
                .into_iter()
                .enumerate()
                .flat_map(|(n, i)| [i, i / 3].into_iter().take(1 + usize::from(n % 3 == 2)))
                .collect(),
            // An ascending run writing each key twice.
            (0..10 * CHUNK as u32).flat_map(|i| [i, i]).collect(),
        ];
        for order in orders {
            let mut map = ChunkedMap::default();
            let mut model = BTreeMap::new();
            for (n, i) in order.into_iter().enumerate() {
                map.insert(key(i).into(), n as u32);
                model.insert(key(i), n as u32);
                assert_eq!(map.get(&key(i)), Some(&(n as u32)));
            }
            agree(&map, &model);
            assert!(half_full(&map));
            assert_eq!(map.len(), model.len());
            assert!(map.values().eq(model.values()));
            assert!(map.into_iter().map(|(k, v)| (k.to_vec(), v)).eq(model));
        }
        // A run writing each key twice fills its chunks as a plain run does, below a key
        // already there (so its chunks are not the last).
        let mut map = ChunkedMap::default();
        map.insert(key(9_999_999).into(), 0);
        for i in (0..10 * CHUNK as u32).flat_map(|i| [i, i]) {
            map.insert(key(i).into(), i);
        }
        assert!(map.chunks.len() <= 11, "{} chunks", map.chunks.len());
    }

    #[test]
    fn retain_keeps_order_and_drops_emptied_chunks() {
        let (mut map, mut model) = both(shuffled(1_000, 5));
        map.retain(|_, v| *v % 3 == 0 || *v > 900);
        model.retain(|_, v| *v % 3 == 0 || *v > 900);
        agree(&map, &model);
        map.retain(|_, _| false);
        assert!(map.is_empty() && map.chunks.is_empty());
        // Inserts after a retain land in order.
        let (v, added) = map.get_or_insert_with(key(5).into(), || 5);
        assert!(added && *v == 5);
        assert_eq!(map.get(&key(5)), Some(&5));
    }
}
