//! The memtable: the newest writes, in memory, multi-versioned by sequence number.
//!
//! Each key maps to its versions, oldest first, in a [`ChunkedMap`] (sorted chunks, and a finger
//! that makes an insert extending an ascending run a few comparisons). Reads pick the newest
//! version at or below their sequence number; a failed WAL commit removes the versions it covered
//! ([`Memtable::rollback_after`]); overwrites prune versions that no reader and no rollback can
//! see any more. A memtable is frozen (shared behind `Rc`) when it is flushed, so readers that
//! hold it keep a consistent view.
//!
//! A point read asks the memtable's [`MemtableFilter`] first: most reads are of keys it does not
//! hold, and "no" spares them the map's search (two binary searches, about fifteen whole-key
//! comparisons, most of them cache misses).

use alloc::vec::Vec;
use core::ops::Bound;

use super::map_key::MapKey;
use super::memtable_filter::MemtableFilter;
use super::memtable_map::ChunkedMap;
use super::retention::{needed_between, VersionInfo};
use crate::format::RowRef;

/// Bytes of bookkeeping charged per version on top of its key and value.
const VERSION_OVERHEAD: usize = 48;

/// One version of a key in the memtable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MemVersion {
    pub seq: u64,
    pub ts: i64,
    pub expire_at: Option<i64>,
    /// `None` is a tombstone.
    pub value: Option<Vec<u8>>,
}

impl MemVersion {
    pub(crate) fn info(&self) -> VersionInfo {
        VersionInfo {
            seq: self.seq,
            tombstone: self.value.is_none(),
            expire_at: self.expire_at,
        }
    }

    pub(crate) fn row<'a>(&'a self, key: &'a [u8]) -> RowRef<'a> {
        RowRef {
            key,
            seq: self.seq,
            ts: self.ts,
            expire_at: self.expire_at,
            value: self.value.as_deref(),
        }
    }

    /// The version a stored row holds.
    pub(crate) fn of_row(row: &RowRef<'_>) -> MemVersion {
        MemVersion {
            seq: row.seq,
            ts: row.ts,
            expire_at: row.expire_at,
            value: row.value.map(<[u8]>::to_vec),
        }
    }

    fn charge(&self, key_len: usize) -> usize {
        key_len + self.value.as_ref().map_or(0, |v| v.len()) + VERSION_OVERHEAD
    }
}

/// A key's versions, oldest first: one in place (most keys get no second while a memtable holds
/// them, and then need no allocation of their own), none or more in a list. The memtable's map
/// holds them, and so do a write's read and planned rows (`write::plan::CurrentRows`, a key's
/// row or none): one map type in the wasm module, not two.
#[derive(Debug)]
pub(crate) enum Versions {
    One(MemVersion),
    Many(Vec<MemVersion>),
}

impl Versions {
    /// `row` alone, or no version.
    pub(crate) fn of(row: Option<MemVersion>) -> Versions {
        row.map_or_else(|| Versions::Many(Vec::new()), Versions::One)
    }

    /// The versions, oldest first.
    pub(crate) fn as_slice(&self) -> &[MemVersion] {
        match self {
            Versions::One(v) => core::slice::from_ref(v),
            Versions::Many(vs) => vs,
        }
    }

    /// The newest version, if any.
    pub(crate) fn newest(&self) -> Option<&MemVersion> {
        self.as_slice().last()
    }

    /// The newest version, taken.
    pub(crate) fn into_newest(self) -> Option<MemVersion> {
        match self {
            Versions::One(v) => Some(v),
            Versions::Many(mut vs) => vs.pop(),
        }
    }

    /// Add `v`, newer than every version held.
    fn push(&mut self, v: MemVersion) {
        let held = core::mem::replace(self, Versions::Many(Vec::new()));
        *self = Versions::Many(match held {
            Versions::One(first) => alloc::vec![first, v],
            Versions::Many(mut list) => {
                list.push(v);
                list
            }
        });
    }
}

/// Whether a version is a live value at time `now`.
pub(crate) fn is_live(v: &MemVersion, now: i64) -> bool {
    live_value(v.expire_at, v.value.as_deref(), now).is_some()
}

/// The value a version (or a row) with `expire_at` and `value` (`None`: a tombstone) holds at
/// time `now`: `None` if it is a tombstone or has expired.
pub(crate) fn live_value(expire_at: Option<i64>, value: Option<&[u8]>, now: i64) -> Option<&[u8]> {
    value.filter(|_| expire_at.is_none_or(|at| now < at))
}

/// The in-memory, sorted, multi-version write buffer.
#[derive(Default, Debug)]
pub(crate) struct Memtable {
    map: ChunkedMap<Versions>,
    /// Every key of `map`, for point reads to rule keys out.
    filter: MemtableFilter,
    bytes: usize,
    versions: usize,
    /// Time of the first write, to bound how long data waits before a flush.
    first_write_ts: Option<i64>,
    /// Earliest expiry among the versions written (a hint for the next wake-up).
    min_expire_at: Option<i64>,
}

impl Memtable {
    /// An empty memtable to follow `previous`: its filter starts at the size `previous`'s
    /// reached, so that a memtable as large as the last one does not rebuild it on the way.
    pub(crate) fn following(previous: &Memtable) -> Memtable {
        Memtable {
            filter: previous.filter.empty_like(),
            ..Memtable::default()
        }
    }

    /// Bytes of keys, values and bookkeeping held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Whether nothing was written.
    pub(crate) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Number of versions held.
    #[cfg(test)]
    pub(crate) fn version_count(&self) -> usize {
        self.versions
    }

    /// Time of the first write still held.
    pub(crate) fn first_write_ts(&self) -> Option<i64> {
        self.first_write_ts
    }

    /// Earliest expiry written into this memtable.
    pub(crate) fn min_expire_at(&self) -> Option<i64> {
        self.min_expire_at
    }

    /// Add a version (its seq is higher than every seq already held) of `key`, `hash` its
    /// [`MemtableFilter::hash`]. Older versions of the key that neither a point of `keep_points`
    /// (a snapshot's read point, or where a commit in flight would move the durable state) nor a
    /// rollback to `durable_seq` can see are pruned: a key overwritten again and again between
    /// commits holds a few versions, not one per write.
    pub(crate) fn insert(
        &mut self,
        key: MapKey,
        hash: u64,
        version: MemVersion,
        keep_points: &[u64],
        durable_seq: u64,
    ) {
        self.first_write_ts.get_or_insert(version.ts);
        if let Some(at) = version.expire_at {
            self.min_expire_at = Some(self.min_expire_at.map_or(at, |m| m.min(at)));
        }
        let key_len = key.len();
        self.bytes += version.charge(key_len);
        self.versions += 1;
        // One search (a few comparisons when the key extends a run), and the caller's key
        // becomes the map's if the key is new, with its version in place.
        let mut fresh = Some(version);
        let (versions, added) = self
            .map
            .get_or_insert_with(key, || Versions::of(fresh.take()));
        if let Some(version) = fresh {
            versions.push(version);
            if let Versions::Many(list) = versions {
                Self::prune(
                    list,
                    key_len,
                    keep_points,
                    durable_seq,
                    &mut self.bytes,
                    &mut self.versions,
                );
            }
        }
        if added {
            let map = &self.map;
            self.filter.add(hash, || map.keys());
        }
    }

    /// Drop the versions (oldest first) that neither a point of `keep_points` nor the durable
    /// state can see; the newest always stays. In place, with nothing allocated: an overwrite of
    /// a key in the memtable comes through here.
    fn prune(
        versions: &mut Vec<MemVersion>,
        key_len: usize,
        keep_points: &[u64],
        durable_seq: u64,
        bytes: &mut usize,
        count: &mut usize,
    ) {
        let mut kept = 0;
        for i in 0..versions.len() {
            let Some(seq) = versions.get(i).map(|v| v.seq) else {
                break;
            };
            let newer = versions.get(i + 1).map(|v| v.seq);
            let points = keep_points.iter().copied().chain([durable_seq, u64::MAX]);
            if needed_between(seq, newer, points) {
                // `kept <= i`: the versions still to judge are not moved.
                versions.swap(kept, i);
                kept += 1;
            } else if let Some(v) = versions.get(i) {
                *bytes = bytes.saturating_sub(v.charge(key_len));
                *count = count.saturating_sub(1);
            }
        }
        versions.truncate(kept);
    }

    /// The newest version of `key` with `seq <= read_seq`; `hash` is the key's
    /// [`MemtableFilter::hash`].
    pub(crate) fn get(&self, key: &[u8], hash: u64, read_seq: u64) -> Option<&MemVersion> {
        if !self.filter.may_hold(hash) {
            return None;
        }
        self.map
            .get(key)
            .and_then(|vs| vs.as_slice().iter().rev().find(|v| v.seq <= read_seq))
    }

    /// Whether some key starts with `prefix` (any version, tombstones included).
    pub(crate) fn holds_prefix(&self, prefix: &[u8]) -> bool {
        self.map
            .range(Bound::Included(prefix), Bound::Unbounded)
            .next()
            .is_some_and(|(k, _)| k.starts_with(prefix))
    }

    /// The highest seq written for `key`, if any.
    pub(crate) fn latest_seq(&self, key: &[u8]) -> Option<u64> {
        self.map.get(key).and_then(Versions::newest).map(|v| v.seq)
    }

    /// Remove every version with `seq > seq` (a WAL commit covering them failed), and every key
    /// left without one.
    pub(crate) fn rollback_after(&mut self, seq: u64) {
        let mut freed = 0;
        let mut removed = 0;
        self.map.retain(|key, versions| {
            let mut keep = |v: &MemVersion| {
                let durable = v.seq <= seq;
                if !durable {
                    freed += v.charge(key.len());
                    removed += 1;
                }
                durable
            };
            match versions {
                Versions::One(v) => keep(v),
                Versions::Many(list) => {
                    list.retain(|v| keep(v));
                    !list.is_empty()
                }
            }
        });
        self.bytes = self.bytes.saturating_sub(freed);
        self.versions = self.versions.saturating_sub(removed);
        if self.map.is_empty() {
            self.first_write_ts = None;
            self.min_expire_at = None;
        }
    }

    /// Up to `max` keys within `(lower, upper)`, each with its newest version visible at
    /// `read_seq` (tombstones included: they shadow older sources), in key order or reversed.
    pub(crate) fn visible_range(
        &self,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        read_seq: u64,
        reverse: bool,
        max: usize,
    ) -> Vec<(Vec<u8>, MemVersion)> {
        let range = self.map.range(lower, upper);
        let pick = |(k, vs): (&[u8], &Versions)| {
            vs.as_slice()
                .iter()
                .rev()
                .find(|v| v.seq <= read_seq)
                .map(|v| (k.to_vec(), v.clone()))
        };
        if reverse {
            range.rev().filter_map(pick).take(max).collect()
        } else {
            range.filter_map(pick).take(max).collect()
        }
    }

    /// Every key after `after` (`None`: every key) with its versions newest first, in key order
    /// (what a flush writes, one slice at a time).
    pub(crate) fn iter_after(
        &self,
        after: Option<&[u8]>,
    ) -> impl Iterator<Item = (&[u8], impl Iterator<Item = &MemVersion>)> {
        let start = after.map_or(Bound::Unbounded, Bound::Excluded);
        self.map
            .range(start, Bound::Unbounded)
            .map(|(k, vs)| (k, vs.as_slice().iter().rev()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(seq: u64, value: &[u8]) -> MemVersion {
        MemVersion {
            seq,
            ts: seq as i64,
            expire_at: None,
            value: Some(value.to_vec()),
        }
    }

    /// An insert of `version` of `key`, with the key's filter hash.
    fn insert(m: &mut Memtable, key: &[u8], version: MemVersion, keep: &[u64], durable: u64) {
        m.insert(
            MapKey::from_slice(key),
            MemtableFilter::hash(key),
            version,
            keep,
            durable,
        );
    }

    /// A point read of `key` at `read_seq`, with the key's filter hash.
    fn read<'a>(m: &'a Memtable, key: &[u8], read_seq: u64) -> Option<&'a MemVersion> {
        m.get(key, MemtableFilter::hash(key), read_seq)
    }

    #[test]
    fn reads_see_the_newest_version_at_their_seq() {
        let mut m = Memtable::default();
        insert(&mut m, b"k", put(1, b"a"), &[1], 0);
        insert(&mut m, b"k", put(2, b"b"), &[1], 0);
        assert_eq!(read(&m, b"k", 1).unwrap().value.as_deref(), Some(&b"a"[..]));
        assert_eq!(read(&m, b"k", 5).unwrap().value.as_deref(), Some(&b"b"[..]));
        assert!(read(&m, b"k", 0).is_none());
    }

    #[test]
    fn overwrites_prune_versions_nobody_can_see() {
        let mut m = Memtable::default();
        for seq in 1..=100 {
            insert(&mut m, b"k", put(seq, b"v"), &[], seq - 1);
        }
        // durable_seq = 99: seq 99 (the rollback point) and seq 100 survive.
        assert_eq!(m.version_count(), 2);
    }

    #[test]
    fn overwrites_between_commits_keep_only_the_versions_a_rollback_or_a_commit_in_flight_needs() {
        // Nothing durable yet, nothing in flight: each write leaves its key one version, not one
        // per write (a rollback takes them all; a commit takes the newest with the rest).
        let mut m = Memtable::default();
        for seq in 1..=100 {
            insert(&mut m, b"k", put(seq, b"v"), &[], 0);
        }
        assert_eq!(m.version_count(), 1);
        // Durable up to 10, a commit of everything up to 50 in flight: 10 (where a rollback
        // stops now), 50 (where it stops if that commit lands) and the newest stay.
        let mut m = Memtable::default();
        for seq in 1..=100 {
            let in_flight: &[u64] = if seq > 50 { &[50] } else { &[] };
            insert(&mut m, b"k", put(seq, b"v"), in_flight, 10);
        }
        assert_eq!(m.version_count(), 3);
        let mut landed = m;
        landed.rollback_after(50);
        assert_eq!(read(&landed, b"k", u64::MAX).unwrap().seq, 50);
    }

    #[test]
    fn rollback_removes_exactly_the_versions_after_the_durable_seq() {
        let mut m = Memtable::default();
        insert(&mut m, b"a", put(1, b"1"), &[], 0);
        insert(&mut m, b"a", put(2, b"2"), &[], 1);
        insert(&mut m, b"b", put(3, b"3"), &[], 1);
        m.rollback_after(1);
        assert_eq!(read(&m, b"a", u64::MAX).unwrap().seq, 1);
        assert!(read(&m, b"b", u64::MAX).is_none());
        assert_eq!(m.version_count(), 1);
    }
}
