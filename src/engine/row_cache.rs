//! [`RowCache`]: the newest version of keys read lately, so that a point read of a hot key
//! (a session read again and again) answers from one probe instead of searching the memtables
//! and the levels. RocksDB's row cache, kept in memory only, never part of the format.
//!
//! An entry holds the newest version of its key there is, whatever its sequence number: it is
//! filled only by a read at the newest sequence number handed out (`State::last_seq`) that saw
//! no write begin meanwhile, and every write hands it the versions it puts in the memtable
//! (`write/mod.rs`: an entry of the key takes the new version); a rollback of the memtable
//! empties it (`group_commit.rs`). So an entry
//! answers any read at or above its version's sequence number; a snapshot's older read
//! bypasses it. Flushes and compactions move versions without changing which is newest: an
//! expired or deleted version a compaction drops answers "absent" from the cache as it would
//! have from the levels. Keys of a dropped or cleared keyspace are never asked for again (their
//! ids are never reused) and leave as other keys take their slots.
//!
//! A probe reads the set's two tags (each slot's hash, in an array of their own) before it
//! reads a slot: a miss, most reads of keys spread evenly over many more than it holds, touches
//! no slot. A tag that disagreed with its slot could only hide the entry from reads and writes
//! alike (both find it by the tag), never show a stale one.
//!
//! Set-associative, two ways, with a second chance: a fill replaces a way not read since the
//! last fill passed it, so the keys read most stay while keys read once come and go. Before
//! that, a doorkeeper (TinyLFU's) admits to a full set only keys missed twice lately: reads
//! spread evenly over many more keys than it holds would otherwise copy every key they read into
//! it for nothing. A set with a free way takes any key at its first miss while the budget has
//! room for it (it displaces nothing): a cache filling up holds the keys read first, the hot ones
//! among them, one miss sooner. Where the byte budget binds before the slots (values of a KiB), a
//! fill sweeps a clock hand over a few slots for room, and entries not read since the hand last
//! passed them go (CLOCK): else the first keys admitted would hold the budget for good.
//!
//! With the `row-cache` feature off (the browser's engine, where its code would cost bytes the
//! package has to spare, and a read that misses it mostly waits on IndexedDB anyway) it holds
//! nothing.

#[cfg(feature = "row-cache")]
use alloc::vec::Vec;
#[cfg(feature = "row-cache")]
use core::cell::Cell;

use super::memtable::MemVersion;
#[cfg(feature = "row-cache")]
use super::row_cache_slot::Slot;
use crate::format::RowRef;

/// A slot per this many bytes of the budget: room for entries of about 100 bytes of key and
/// value, the sessions and cache entries this store is built for.
#[cfg(feature = "row-cache")]
const BYTES_PER_SLOT: usize = 256;

/// The most slots one fill's sweep for room passes (see `RowCache::make_room`): a fill costs a
/// bounded time, and a budget spent on entries read since the hand passed them keeps them.
#[cfg(feature = "row-cache")]
const SWEEP_SLOTS: usize = 64;

/// The doorkeeper's bits a slot. It is cleared once an eighth of them are set: a key missed
/// twice within about twice as many misses as there are slots is admitted, and a key missed once
/// passes for one missed twice (its bit set by another key) at most one time in eight.
#[cfg(feature = "row-cache")]
const DOORKEEPER_BITS_PER_SLOT: usize = 16;

/// The newest versions of recently read keys, within a byte budget.
#[derive(Default, Debug)]
pub(crate) struct RowCache {
    /// Two ways a set; a power of two in length, or empty (the cache is off, or nothing was
    /// filled yet).
    #[cfg(feature = "row-cache")]
    slots: Vec<Option<Slot>>,
    /// Each slot's entry's hash, `| 1` (never 0), or 0 for an empty slot: a probe reads these
    /// two words, side by side in a small array, before it reads a slot, so a miss (most reads
    /// of keys spread evenly) touches no slot at all. Kept with the slots by
    /// [`set_slot`](Self::set_slot) and [`take_slot`](Self::take_slot), the only writers of
    /// either.
    #[cfg(feature = "row-cache")]
    tags: Vec<u64>,
    /// Whether each slot's entry was read since a fill last passed it over (see
    /// [`fill`](Self::fill) and [`make_room`](Self::make_room)): set by a hit, a byte a slot
    /// beside the slots rather than in them, which a hit would otherwise write to.
    #[cfg(feature = "row-cache")]
    used: Vec<Cell<bool>>,
    /// The number of slots once the first fill allocates them.
    #[cfg(feature = "row-cache")]
    slot_count: usize,
    /// The doorkeeper: a bit per hash (of [`DOORKEEPER_BITS_PER_SLOT`] a slot) set by a key's
    /// first miss; allocated with the slots.
    #[cfg(feature = "row-cache")]
    seen: Vec<u64>,
    /// Bits set in `seen`; at an eighth of them all are cleared, so "lately" is the last few
    /// thousand misses.
    #[cfg(feature = "row-cache")]
    seen_count: usize,
    /// Bytes held: the slots and the doorkeeper, once allocated, and the keys' and values'
    /// buffers.
    #[cfg(feature = "row-cache")]
    bytes: usize,
    /// Where [`make_room`](Self::make_room)'s sweep goes on from.
    #[cfg(feature = "row-cache")]
    hand: usize,
    /// At most this many bytes held.
    #[cfg(feature = "row-cache")]
    budget: usize,
    /// Reads answered, and reads not, since open.
    #[cfg(feature = "row-cache")]
    hits: Cell<u64>,
    #[cfg(feature = "row-cache")]
    misses: Cell<u64>,
}

/// The bytes a cache of `slots` slots (and their tags) and `words` doorkeeper words holds
/// whatever its entries.
#[cfg(feature = "row-cache")]
fn fixed_bytes(slots: usize, words: usize) -> usize {
    slots * (core::mem::size_of::<Option<Slot>>() + 8 + 1) + words * 8
}

/// The tag of an entry of `hash` (see `RowCache::tags`).
#[cfg(feature = "row-cache")]
fn tag(hash: u64) -> u64 {
    hash | 1
}

#[cfg(feature = "row-cache")]
impl RowCache {
    /// A cache of about `budget` bytes (0: off).
    pub(crate) fn new(budget: usize) -> RowCache {
        let slot_count = match budget / BYTES_PER_SLOT {
            0 | 1 => 0,
            n => 1 << n.ilog2(),
        };
        RowCache {
            slots: Vec::new(),
            tags: Vec::new(),
            used: Vec::new(),
            slot_count,
            seen: Vec::new(),
            seen_count: 0,
            bytes: 0,
            hand: 0,
            budget,
            hits: Cell::new(0),
            misses: Cell::new(0),
        }
    }

    /// The two ways of the set `hash` falls in (`slots` is not empty). The set is chosen by
    /// the hash's high bits: the memtable filter's words are chosen by its low bits.
    fn ways(&self, hash: u64) -> (usize, usize) {
        let first = ((hash >> 32) as usize & (self.slots.len() - 1)) & !1;
        (first, first + 1)
    }

    fn position(&self, key: &[u8], hash: u64) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let (a, b) = self.ways(hash);
        let wanted = tag(hash);
        [a, b].into_iter().find(|&i| {
            self.tags.get(i) == Some(&wanted)
                && self
                    .slots
                    .get(i)
                    .and_then(Option::as_ref)
                    .is_some_and(|s| crate::format::key_order::keys_equal(s.key(), key))
        })
    }

    /// The newest version of `key` (`hash` its `MemtableFilter::hash`) if it is held and a read
    /// at `read_seq` sees it.
    pub(crate) fn get(&self, key: &[u8], hash: u64, read_seq: u64) -> Option<MemVersion> {
        let found = self
            .hit(key, hash, read_seq)
            .map(|row| MemVersion::of_row(&row));
        if found.is_none() {
            self.misses.set(self.misses.get() + 1);
        }
        found
    }

    /// As [`get`](Self::get), lent instead of copied, and a miss not counted (see
    /// [`holds`](Self::holds) and [`missed`](Self::missed)).
    pub(crate) fn hit(&self, key: &[u8], hash: u64, read_seq: u64) -> Option<RowRef<'_>> {
        let i = self.held(key, hash, read_seq)?;
        let slot = self.slots.get(i)?.as_ref()?;
        self.hits.set(self.hits.get() + 1);
        if let Some(used) = self.used.get(i) {
            used.set(true);
        }
        Some(slot.row())
    }

    /// Whether [`hit`](Self::hit) would answer, counting and marking nothing.
    pub(crate) fn holds(&self, key: &[u8], hash: u64, read_seq: u64) -> bool {
        self.held(key, hash, read_seq).is_some()
    }

    /// Count a miss that [`holds`](Self::holds) found.
    pub(crate) fn missed(&self) {
        self.misses.set(self.misses.get() + 1);
    }

    /// The slot of `key`'s entry, if a read at `read_seq` sees its version.
    fn held(&self, key: &[u8], hash: u64, read_seq: u64) -> Option<usize> {
        self.position(key, hash).filter(|&i| {
            self.slots
                .get(i)
                .and_then(Option::as_ref)
                .is_some_and(|slot| slot.seq() <= read_seq)
        })
    }

    /// Whether slot `i`'s entry was read since a fill last passed it over.
    fn was_used(&self, i: usize) -> bool {
        self.used.get(i).is_some_and(Cell::get)
    }

    /// Pass slot `i`'s entry over: it goes at the next pass unless read again.
    fn pass_over(&self, i: usize) {
        if let Some(used) = self.used.get(i) {
            used.set(false);
        }
    }

    /// Bytes held, and reads answered and not since open (see [`Stats`](super::Stats)).
    pub(crate) fn counts(&self) -> (usize, u64, u64) {
        (self.bytes, self.hits.get(), self.misses.get())
    }

    /// Hold the version `row` is as the newest of its key (`hash` the key's
    /// [`MemtableFilter::hash`](super::memtable_filter::MemtableFilter::hash)): the caller read
    /// it at the newest sequence number handed out, and no write began since. Copied only if
    /// taken: passed over if the key's set holds two entries read since the last fill passed
    /// them (they lose that mark), or if the budget is spent.
    pub(crate) fn fill(&mut self, hash: u64, row: &RowRef<'_>) {
        let key = row.key;
        if self.slots.is_empty() {
            let words = self.slot_count * DOORKEEPER_BITS_PER_SLOT / 64;
            let fixed = fixed_bytes(self.slot_count, words);
            if words == 0 || fixed > self.budget {
                return;
            }
            self.slots.resize_with(self.slot_count, || None);
            self.tags = alloc::vec![0; self.slot_count];
            self.used = (0..self.slot_count).map(|_| Cell::new(false)).collect();
            self.seen = alloc::vec![0; words];
            self.bytes = fixed;
        }
        let size = key.len() + row.value.map_or(0, <[u8]>::len);
        // An entry the budget could not hold even empty is passed over before anything is
        // taken out for it (read again and again, it would drain the cache for nothing).
        if fixed_bytes(self.slots.len(), self.seen.len()) + size > self.budget {
            return;
        }
        let (a, b) = self.ways(hash);
        // A set with a free way takes the key at once while the budget has room for it: it
        // displaces nothing. Else only a key the doorkeeper saw miss before.
        let free = [a, b].iter().any(|&i| self.tags.get(i) == Some(&0));
        let at_once = free && self.bytes + size <= self.budget;
        // Only then asked: the doorkeeper notes a key it is asked about.
        if !at_once && !self.admit(hash) {
            return;
        }
        // The key's own way if it has one (two reads of it may have waited on the store at
        // once, and its set changed in between): a key never holds both ways, so a write that
        // hands its version to one leaves no older copy in the other.
        let mut chosen = self.position(key, hash);
        if chosen.is_none() {
            for i in [a, b] {
                match self.slots.get(i) {
                    Some(None) => {
                        chosen = Some(i);
                        break;
                    }
                    Some(Some(_)) if !self.was_used(i) => {
                        chosen = chosen.or(Some(i));
                    }
                    _ => {}
                }
            }
        }
        let Some(i) = chosen else {
            for i in [a, b] {
                self.pass_over(i);
            }
            return;
        };
        let buf = match self.take_slot(i) {
            Some(old) => {
                self.bytes -= old.charge();
                old.into_buffer()
            }
            None => Vec::new(),
        };
        let Some(entry) = Slot::of_row(row, buf) else {
            return;
        };
        self.make_room(entry.charge(), i);
        if self.bytes + entry.charge() <= self.budget {
            self.bytes += entry.charge();
            self.set_slot(i, hash, entry);
        }
    }

    /// Free entries until `size` more bytes fit the budget, if a sweep of at most
    /// [`SWEEP_SLOTS`] slots from the hand finds them: an entry read since the hand last passed
    /// it loses that mark and stays, any other goes (CLOCK). Slot `keep` is passed over. Where
    /// the budget binds before the slots run out (values of a KiB or more), this is what lets
    /// keys read again take the place of keys read once.
    fn make_room(&mut self, size: usize, keep: usize) {
        let Some(mask) = self.slots.len().checked_sub(1) else {
            return;
        };
        for _ in 0..SWEEP_SLOTS {
            if self.bytes + size <= self.budget {
                return;
            }
            let at = self.hand;
            self.hand = (at + 1) & mask;
            if at == keep {
                continue;
            }
            match self.slots.get(at) {
                Some(Some(_)) if self.was_used(at) => self.pass_over(at),
                Some(Some(_)) => {
                    if let Some(s) = self.take_slot(at) {
                        self.bytes -= s.charge();
                    }
                }
                _ => {}
            }
        }
    }

    /// Whether a key of `hash` was missed once already lately: the doorkeeper notes its first
    /// miss and admits the next.
    fn admit(&mut self, hash: u64) -> bool {
        let bits = self.seen.len() * 64;
        // Bits the set's choice does not use.
        let bit = hash.rotate_left(16) as usize & (bits - 1);
        let Some(word) = self.seen.get_mut(bit / 64) else {
            return false;
        };
        let mask = 1u64 << (bit % 64);
        if *word & mask != 0 {
            return true;
        }
        *word |= mask;
        self.seen_count += 1;
        if self.seen_count * 8 > bits {
            self.seen.fill(0);
            self.seen_count = 0;
        }
        false
    }

    /// A write gives `key` (`hash` its `MemtableFilter::hash`) the newer `version`: an entry
    /// of the key takes it, so that the key's next read need not search the memtable for it.
    /// A key not held stays out: writes alone fill nothing.
    pub(crate) fn written(&mut self, key: &[u8], hash: u64, version: &MemVersion) {
        let Some(i) = self.position(key, hash) else {
            return;
        };
        // Taken out and put back, its tag and whether it was read kept.
        let Some(old) = self.slots.get_mut(i).and_then(Option::take) else {
            return;
        };
        self.bytes -= old.charge();
        match Slot::of_row(&version.row(key), old.into_buffer()) {
            Some(entry) if self.bytes + entry.charge() <= self.budget => {
                self.bytes += entry.charge();
                if let Some(slot) = self.slots.get_mut(i) {
                    *slot = Some(entry);
                }
            }
            _ => {
                self.take_slot(i);
            }
        }
    }

    /// Put `entry`, of a key of `hash`, in slot `i` (and its tag), not read yet.
    fn set_slot(&mut self, i: usize, hash: u64, entry: Slot) {
        if let (Some(slot), Some(t)) = (self.slots.get_mut(i), self.tags.get_mut(i)) {
            *t = tag(hash);
            *slot = Some(entry);
            self.pass_over(i);
        }
    }

    /// Empty slot `i` (and its tag); what it held.
    fn take_slot(&mut self, i: usize) -> Option<Slot> {
        if let Some(t) = self.tags.get_mut(i) {
            *t = 0;
        }
        self.slots.get_mut(i).and_then(Option::take)
    }

    /// Forget everything (the memtable was rolled back).
    pub(crate) fn clear(&mut self) {
        self.slots = Vec::new();
        self.tags = Vec::new();
        self.used = Vec::new();
        self.seen = Vec::new();
        self.seen_count = 0;
        self.bytes = 0;
        self.hand = 0;
    }
}

#[cfg(not(feature = "row-cache"))]
impl RowCache {
    pub(crate) fn new(_budget: usize) -> RowCache {
        RowCache {}
    }

    pub(crate) fn get(&self, _key: &[u8], _hash: u64, _read_seq: u64) -> Option<MemVersion> {
        None
    }

    pub(crate) fn hit(&self, _key: &[u8], _hash: u64, _read_seq: u64) -> Option<RowRef<'_>> {
        None
    }

    pub(crate) fn holds(&self, _key: &[u8], _hash: u64, _read_seq: u64) -> bool {
        false
    }

    pub(crate) fn missed(&self) {}

    pub(crate) fn fill(&mut self, _hash: u64, _row: &RowRef<'_>) {}

    pub(crate) fn written(&mut self, _key: &[u8], _hash: u64, _version: &MemVersion) {}

    pub(crate) fn clear(&mut self) {}

    pub(crate) fn counts(&self) -> (usize, u64, u64) {
        (0, 0, 0)
    }
}

#[cfg(test)]
#[cfg(feature = "row-cache")]
mod tests {
    use super::*;
    use crate::engine::memtable_filter::MemtableFilter;

    fn version(seq: u64, value: &[u8]) -> MemVersion {
        MemVersion {
            seq,
            ts: 0,
            expire_at: None,
            value: Some(value.to_vec()),
        }
    }

    /// A key missed twice, as a key must be to be admitted to a full set.
    fn fill(cache: &mut RowCache, key: &[u8], seq: u64) {
        fill_with(cache, key, &version(seq, b"value"));
    }

    fn fill_with(cache: &mut RowCache, key: &[u8], version: &MemVersion) {
        let hash = MemtableFilter::hash(key);
        for _ in 0..2 {
            cache.fill(hash, &version.row(key));
        }
    }

    fn holds(cache: &RowCache, key: &[u8]) -> bool {
        cache
            .get(key, MemtableFilter::hash(key), u64::MAX)
            .is_some()
    }

    /// Keys `n..` that fall in the same set as `key` (in a cache of `slots` slots).
    fn same_set(key: &[u8], slots: usize) -> impl Iterator<Item = Vec<u8>> + '_ {
        let set = move |k: &[u8]| (MemtableFilter::hash(k) >> 32) as usize & (slots - 1) & !1;
        (0u32..)
            .map(|i| alloc::format!("other-{i}").into_bytes())
            .filter(move |k| set(k) == set(key))
    }

    #[test]
    fn a_cache_without_room_for_two_slots_holds_nothing() {
        let mut cache = RowCache::new(BYTES_PER_SLOT);
        fill(&mut cache, b"k", 1);
        assert!(!holds(&cache, b"k"));
        assert_eq!(cache.counts().0, 0);
    }

    #[test]
    fn a_cache_holds_nothing_before_its_first_fill_and_after_a_clear() {
        let mut cache = RowCache::new(1 << 16);
        assert_eq!(cache.counts().0, 0);
        fill(&mut cache, b"k", 1);
        assert!(cache.counts().0 > 0);
        cache.clear();
        assert_eq!(cache.counts().0, 0);
        assert!(!holds(&cache, b"k"));
    }

    /// A cache of 64 KiB whose set of `key` is full (of two keys filled once each).
    fn full_set_of(key: &[u8]) -> RowCache {
        let mut cache = RowCache::new(1 << 16);
        for other in same_set(key, cache.slot_count).take(2) {
            let hash = MemtableFilter::hash(&other);
            cache.fill(hash, &version(1, b"value").row(&other));
            // Not `holds`: a read would give it a second chance.
            assert!(
                cache.holds(&other, hash, u64::MAX),
                "a free way takes it at once"
            );
        }
        cache
    }

    #[test]
    fn a_key_missed_once_is_admitted_to_a_free_way_and_to_a_full_set_only_at_its_second_miss() {
        let mut cache = RowCache::new(1 << 16);
        let hash = MemtableFilter::hash(b"k");
        cache.fill(hash, &version(1, b"value").row(b"k"));
        assert!(holds(&cache, b"k"));
        let mut cache = full_set_of(b"k");
        cache.fill(hash, &version(1, b"value").row(b"k"));
        assert!(!holds(&cache, b"k"));
        cache.fill(hash, &version(1, b"value").row(b"k"));
        assert!(holds(&cache, b"k"));
    }

    #[test]
    fn the_doorkeeper_forgets_the_first_misses_once_an_eighth_of_its_bits_are_set() {
        let mut cache = full_set_of(b"k");
        cache.fill(MemtableFilter::hash(b"k"), &version(1, b"value").row(b"k"));
        let mut others = (0u32..).map(|i| alloc::format!("key-{i}").into_bytes());
        while cache.seen_count != 0 {
            let key = others.next().unwrap();
            cache.fill(MemtableFilter::hash(&key), &version(1, b"value").row(&key));
        }
        cache.fill(MemtableFilter::hash(b"k"), &version(1, b"value").row(b"k"));
        assert!(!holds(&cache, b"k"), "its first miss was forgotten");
    }

    #[test]
    fn a_key_filled_twice_holds_one_way_whatever_its_set_held_between() {
        let mut cache = RowCache::new(1 << 16);
        let slots = cache.slot_count;
        let x = same_set(b"k", slots).next().unwrap();
        fill(&mut cache, &x, 1);
        fill(&mut cache, b"k", 1);
        assert!(holds(&cache, &x) && holds(&cache, b"k"));
        // `x`'s way empties (a write too big for the budget), and a second read of `k` that
        // waited on the store meanwhile fills it again: `k` keeps its one way.
        let too_big = alloc::vec![0u8; 1 << 16];
        cache.written(&x, MemtableFilter::hash(&x), &version(2, &too_big));
        fill(&mut cache, b"k", 1);
        let hash = MemtableFilter::hash(b"k");
        cache.written(b"k", hash, &version(3, &too_big));
        assert_eq!(
            cache.get(b"k", hash, u64::MAX),
            None,
            "no older copy of `k` left"
        );
    }

    #[test]
    fn a_read_older_than_the_version_held_is_not_answered() {
        let mut cache = RowCache::new(1 << 16);
        fill(&mut cache, b"k", 5);
        let hash = MemtableFilter::hash(b"k");
        assert!(cache.get(b"k", hash, 4).is_none());
        assert_eq!(cache.get(b"k", hash, 5), Some(version(5, b"value")));
    }

    #[test]
    fn keys_read_since_the_last_fill_passed_them_stay_and_keys_read_once_come_and_go() {
        let mut cache = RowCache::new(1 << 16);
        let slots = cache.slot_count;
        let mut others = same_set(b"hot", slots);
        fill(&mut cache, b"hot", 1);
        let warm = others.next().unwrap();
        fill(&mut cache, &warm, 1);
        assert!(holds(&cache, b"hot") && holds(&cache, &warm));
        // Both ways were read: the first fill passes them over and takes their marks.
        let cold = others.next().unwrap();
        fill(&mut cache, &cold, 1);
        assert!(!holds(&cache, &cold));
        // `hot` is read again, `warm` is not: the next fill takes `warm`'s way.
        assert!(holds(&cache, b"hot"));
        fill(&mut cache, &cold, 1);
        assert!(holds(&cache, b"hot") && holds(&cache, &cold));
        cache.clear();
        assert!(!holds(&cache, b"hot"));
    }

    #[test]
    fn the_bytes_held_stay_within_the_budget_and_an_entry_written_past_it_gives_them_back() {
        let budget = 64 * BYTES_PER_SLOT;
        let mut cache = RowCache::new(budget);
        let keys: alloc::vec::Vec<_> = (0..256u32)
            .map(|i| alloc::format!("key-{i}").into_bytes())
            .collect();
        let value = alloc::vec![7u8; budget / 8];
        for key in &keys {
            fill_with(&mut cache, key, &version(1, &value));
            assert!(cache.counts().0 <= budget);
        }
        let held: alloc::vec::Vec<_> = keys.iter().filter(|k| holds(&cache, k)).collect();
        assert!(!held.is_empty() && held.len() < 8, "{} held", held.len());
        let charged: usize = held
            .iter()
            .filter_map(|k| cache.position(k, MemtableFilter::hash(k)))
            .filter_map(|i| Some(cache.slots.get(i)?.as_ref()?.charge()))
            .sum();
        assert!(charged >= held.len() * value.len());
        let slots = cache.counts().0 - charged;
        let too_big = alloc::vec![8u8; budget];
        for key in held {
            cache.written(key, MemtableFilter::hash(key), &version(2, &too_big));
            assert!(!holds(&cache, key));
        }
        assert_eq!(cache.counts().0, slots);
    }

    #[test]
    fn where_the_budget_binds_keys_read_again_take_the_place_of_keys_read_once() {
        // Room for about 40 values of 1 KiB among 256 slots: the budget, not the slots, binds.
        let budget = 64 * 1024;
        let mut cache = RowCache::new(budget);
        let value = alloc::vec![7u8; 1024];
        let key = |i: u32| alloc::format!("key-{i}").into_bytes();
        // Keys read once fill the budget; none of them is read again.
        for i in 0..200 {
            fill_with(&mut cache, &key(i), &version(1, &value));
        }
        let cold = (0..200).filter(|&i| cache.holds(&key(i), MemtableFilter::hash(&key(i)), 9));
        assert!(cold.count() > 30, "the budget is spent on keys read once");
        // Hot keys, each read again after its fill, come in and stay: the sweep frees keys
        // not read since it passed them.
        for round in 0..4 {
            for i in 1_000..1_020 {
                fill_with(&mut cache, &key(i), &version(1, &value));
                let held = holds(&cache, &key(i));
                assert!(held || round == 0, "round {round}: key {i} was let go");
            }
        }
        assert!((1_000..1_020).all(|i| holds(&cache, &key(i))));
        assert!(cache.counts().0 <= budget);
    }

    #[test]
    fn an_entry_larger_than_the_budget_can_hold_takes_nothing_out() {
        let budget = 64 * 1024;
        let mut cache = RowCache::new(budget);
        let key = |i: u32| alloc::format!("key-{i}").into_bytes();
        for i in 0..30 {
            fill_with(&mut cache, &key(i), &version(1, b"small"));
        }
        let bytes = cache.counts().0;
        let held = |cache: &RowCache| {
            (0..30)
                .filter(|&i| cache.holds(&key(i), MemtableFilter::hash(&key(i)), 9))
                .collect::<alloc::vec::Vec<_>>()
        };
        let before = held(&cache);
        assert!(before.len() > 20);
        let huge = alloc::vec![7u8; budget];
        for _ in 0..20 {
            fill_with(&mut cache, b"huge", &version(1, &huge));
        }
        assert!(!holds(&cache, b"huge"));
        assert_eq!(cache.counts().0, bytes, "nothing was freed for it");
        assert_eq!(held(&cache), before);
    }

    #[test]
    fn a_write_hands_its_version_to_a_key_held_and_leaves_other_keys_out() {
        let mut cache = RowCache::new(1 << 16);
        fill(&mut cache, b"k", 1);
        let hash = MemtableFilter::hash(b"k");
        cache.written(b"k", hash, &version(2, b"newer"));
        assert_eq!(cache.get(b"k", hash, 2), Some(version(2, b"newer")));
        let deleted = MemVersion {
            value: None,
            ..version(3, b"")
        };
        cache.written(b"k", hash, &deleted);
        assert_eq!(cache.get(b"k", hash, 3), Some(deleted));
        cache.written(b"other", MemtableFilter::hash(b"other"), &version(4, b"v"));
        assert!(!holds(&cache, b"other"));
    }
}
