//! Which versions of a key must survive: the rule shared by memtable pruning and the TTL
//! compaction filter.
//!
//! A version is *needed* if some reader can still see it: the current state, a live snapshot, or
//! (in the memtable) the last durable state a failed WAL commit rolls back to. Compaction adds the
//! TTL filter on top: the newest version, if expired and needed by no snapshot, becomes a
//! tombstone, and a tombstone is dropped only at the bottom of the tree, where nothing older can
//! resurface (SlateDB's retention iterator).

use alloc::vec::Vec;

use crate::format::RowRef;

/// The facts about one version the rules need. Versions are given newest (highest seq) first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct VersionInfo {
    pub seq: u64,
    pub tombstone: bool,
    pub expire_at: Option<i64>,
}

impl VersionInfo {
    /// The facts of a stored row.
    pub(crate) fn of_row(row: &RowRef<'_>) -> VersionInfo {
        VersionInfo {
            seq: row.seq,
            tombstone: row.value.is_none(),
            expire_at: row.expire_at,
        }
    }
}

/// What compaction does with one version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Written out unchanged.
    Keep,
    /// Written out as a tombstone (value and expiry dropped, seq and ts kept).
    Tombstone,
    /// Not written out.
    Drop,
}

/// Whether the version with sequence number `seq`, whose next newer version of the same key has
/// `newer` (`None`: it is the newest), is the newest version at or below some point of `points`
/// (a read point that can still see it). A key's sequence numbers rise from its older versions to
/// its newer ones, so only the next newer one can hide this one from a point. Judged one version
/// at a time, in place: no list of verdicts is built.
pub(crate) fn needed_between(
    seq: u64,
    newer: Option<u64>,
    points: impl IntoIterator<Item = u64>,
) -> bool {
    points
        .into_iter()
        .any(|p| seq <= p && newer.is_none_or(|n| p < n))
}

/// When the compaction filter may treat a row as expired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ExpiryCutoff {
    /// The time expiry is evaluated at.
    pub now: i64,
    /// Only rows expiring before this were handled by the purge (their events fired); later
    /// expired rows are left for the purge, so no key expires without its event.
    pub purged_until: i64,
}

impl ExpiryCutoff {
    /// Whether a row expiring at `at` may be dropped as expired.
    pub(crate) fn drops(&self, at: i64) -> bool {
        self.now >= at && at < self.purged_until
    }

    /// A cutoff under which every expired row counts (for tests of the bare rules).
    #[cfg(test)]
    pub(crate) fn at(now: i64) -> Self {
        ExpiryCutoff {
            now,
            purged_until: i64::MAX,
        }
    }
}

/// The compaction filter for the versions of one key (newest first): their fates, in the same
/// order, into `fates` (cleared first; one buffer serves every key of a compaction).
///
/// - `snapshots`: the sequence numbers of live snapshots;
/// - `cutoff`: which expired rows may go (see [`ExpiryCutoff`]);
/// - `bottommost`: nothing older than these versions exists below the output (so a tombstone, or
///   an expired row, can vanish without an older version resurfacing);
/// - `doomed`: the key's namespace was dropped, so no version is current any more.
pub(crate) fn compaction_fates(
    versions: &[VersionInfo],
    snapshots: &[u64],
    cutoff: ExpiryCutoff,
    bottommost: bool,
    doomed: bool,
    fates: &mut Vec<Fate>,
) {
    fates.clear();
    let mut newer = None;
    for (i, v) in versions.iter().enumerate() {
        let snap = needed_between(v.seq, newer, snapshots.iter().copied());
        newer = Some(v.seq);
        let fate = if snap {
            Fate::Keep
        } else if i > 0 || doomed {
            Fate::Drop
        } else if v.tombstone {
            if bottommost {
                Fate::Drop
            } else {
                Fate::Keep
            }
        } else if v.expire_at.is_some_and(|at| cutoff.drops(at)) {
            if bottommost {
                Fate::Drop
            } else {
                Fate::Tombstone
            }
        } else {
            Fate::Keep
        };
        fates.push(fate);
    }
    // Below a kept tombstone that only snapshots made us keep, nothing changes; but a dropped
    // newest version must not let an older one (kept for a snapshot) become the current state:
    // if the newest is dropped and an older one survives, turn the newest into a tombstone instead.
    if fates.first() == Some(&Fate::Drop) && fates.iter().skip(1).any(|f| *f != Fate::Drop) {
        if let Some(first) = fates.first_mut() {
            *first = Fate::Tombstone;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference [`needed_between`] is checked against, a key's versions judged as a list:
    /// `needed[i]` is true when version `i` is the newest version with `seq <= p` for some read
    /// point `p` in `points` (ascending or not). Versions are newest first.
    fn needed_by(versions: &[VersionInfo], points: &[u64]) -> Vec<bool> {
        let mut needed = alloc::vec![false; versions.len()];
        for &p in points {
            if let Some(i) = versions.iter().position(|v| v.seq <= p) {
                if let Some(slot) = needed.get_mut(i) {
                    *slot = true;
                }
            }
        }
        needed
    }

    /// [`compaction_fates`] as a list.
    fn fates_of(
        versions: &[VersionInfo],
        snapshots: &[u64],
        cutoff: ExpiryCutoff,
        bottommost: bool,
        doomed: bool,
    ) -> Vec<Fate> {
        let mut fates = Vec::new();
        compaction_fates(versions, snapshots, cutoff, bottommost, doomed, &mut fates);
        fates
    }

    fn v(seq: u64, tombstone: bool, expire_at: Option<i64>) -> VersionInfo {
        VersionInfo {
            seq,
            tombstone,
            expire_at,
        }
    }

    #[test]
    fn needed_between_answers_as_needed_by_for_every_version_and_point_set() {
        // Sequence numbers oldest to newest, equal ones included (a batch's rows share one).
        for seqs in [
            &[3u64][..],
            &[1, 2],
            &[2, 2],
            &[1, 4, 4, 7],
            &[0, 5, 9, 12, 30],
        ] {
            for mask in 0u32..(1 << 8) {
                let points: Vec<u64> = [0u64, 1, 3, 4, 6, 9, 29, u64::MAX]
                    .into_iter()
                    .enumerate()
                    .filter(|(i, _)| mask & (1 << i) != 0)
                    .map(|(_, p)| p)
                    .collect();
                let newest_first: Vec<VersionInfo> =
                    seqs.iter().rev().map(|&s| v(s, false, None)).collect();
                let expected = needed_by(&newest_first, &points);
                for (i, &seq) in seqs.iter().enumerate() {
                    let newer = seqs.get(i + 1).copied();
                    assert_eq!(
                        needed_between(seq, newer, points.iter().copied()),
                        expected[seqs.len() - 1 - i],
                        "seqs {seqs:?}, points {points:?}, version {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn only_the_newest_version_survives_without_snapshots() {
        let vs = [v(9, false, None), v(5, false, None), v(2, false, None)];
        assert_eq!(
            fates_of(&vs, &[], ExpiryCutoff::at(0), false, false),
            [Fate::Keep, Fate::Drop, Fate::Drop]
        );
    }

    #[test]
    fn expired_row_becomes_a_tombstone_above_the_bottom_and_vanishes_at_the_bottom() {
        let vs = [v(9, false, Some(100))];
        assert_eq!(
            fates_of(&vs, &[], ExpiryCutoff::at(100), false, false),
            [Fate::Tombstone]
        );
        assert_eq!(
            fates_of(&vs, &[], ExpiryCutoff::at(100), true, false),
            [Fate::Drop]
        );
        assert_eq!(
            fates_of(&vs, &[], ExpiryCutoff::at(99), true, false),
            [Fate::Keep]
        );
    }

    #[test]
    fn tombstones_are_dropped_only_at_the_bottom() {
        let vs = [v(9, true, None), v(3, false, None)];
        assert_eq!(
            fates_of(&vs, &[], ExpiryCutoff::at(0), false, false),
            [Fate::Keep, Fate::Drop]
        );
        assert_eq!(
            fates_of(&vs, &[], ExpiryCutoff::at(0), true, false),
            [Fate::Drop, Fate::Drop]
        );
    }

    #[test]
    fn expired_rows_the_purge_has_not_handled_yet_stay() {
        let vs = [v(9, false, Some(100))];
        let cutoff = ExpiryCutoff {
            now: 200,
            purged_until: 100,
        };
        assert_eq!(fates_of(&vs, &[], cutoff, true, false), [Fate::Keep]);
        let cutoff = ExpiryCutoff {
            now: 200,
            purged_until: 101,
        };
        assert_eq!(fates_of(&vs, &[], cutoff, true, false), [Fate::Drop]);
    }

    #[test]
    fn every_version_of_a_dropped_namespace_goes_unless_a_snapshot_needs_it() {
        let vs = [v(9, false, None), v(5, false, None)];
        let cut = ExpiryCutoff::at(0);
        assert_eq!(
            fates_of(&vs, &[], cut, false, true),
            [Fate::Drop, Fate::Drop]
        );
        assert_eq!(
            fates_of(&vs, &[6], cut, false, true),
            [Fate::Tombstone, Fate::Keep]
        );
    }

    #[test]
    fn a_snapshot_keeps_the_version_it_sees() {
        let vs = [v(9, false, None), v(5, false, None), v(2, false, None)];
        assert_eq!(
            fates_of(&vs, &[6], ExpiryCutoff::at(0), true, false),
            [Fate::Keep, Fate::Keep, Fate::Drop]
        );
    }

    #[test]
    fn a_dropped_newest_version_never_uncovers_a_version_kept_for_a_snapshot() {
        // Newest is a tombstone at the bottom, but a snapshot at seq 6 still needs seq 5.
        let vs = [v(9, true, None), v(5, false, None)];
        assert_eq!(
            fates_of(&vs, &[6], ExpiryCutoff::at(0), true, false),
            [Fate::Tombstone, Fate::Keep]
        );
    }
}
