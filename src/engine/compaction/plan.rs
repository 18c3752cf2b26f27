//! Compaction planning: which SSTs to merge next, if any ([`Plan`]). Pure decisions on the
//! current [`Version`] and manifest; nothing is read or written here.
//!
//! Owns the `Inner` methods [`plan_compaction`](Inner::plan_compaction), the steps of a full
//! compaction ([`plan_full_step`](Inner::plan_full_step), [`plan_in_place`]) and their private
//! helpers (`level_target`, `l0_merge_due`, `plan_whole_drop`, `plan_over_target`,
//! `plan_expiry_compaction`); it reads
//! `State::version`, `State::manifest` and the pinned reads, and changes nothing.

use alloc::rc::Rc;
use alloc::vec::Vec;

use super::parts::Plan;
use crate::engine::options::L0_STALL_FACTOR;
use crate::engine::state::{Inner, State};
use crate::engine::version::{SstHandle, Version};

fn key_range(ssts: &[Rc<SstHandle>]) -> Option<(Vec<u8>, Vec<u8>)> {
    let lo = ssts.iter().map(|s| s.first_key()).min()?;
    let hi = ssts.iter().map(|s| s.last_key()).max()?;
    Some((lo.to_vec(), hi.to_vec()))
}

/// L0's oldest SSTs, as many as fit in `budget` bytes (at least one), merged with the part of L1
/// they overlap, into L1 (`None` when L0 is empty); the newer ones stay in L0, newer than
/// anything in L1. The budget bounds a merge when L0 grew long with no maintenance running; a
/// later merge takes the next ones.
fn plan_l0(v: &Version, budget: u64) -> Option<Plan> {
    let l0 = v.levels.first()?;
    let mut bytes = 0u64;
    let taken = l0
        .iter()
        .rev()
        .take_while(|s| {
            let first = bytes == 0;
            bytes = bytes.saturating_add(s.bytes());
            first || bytes <= budget
        })
        .count();
    let oldest = l0.get(l0.len() - taken..)?.to_vec();
    let (lo, hi) = key_range(&oldest)?;
    push_into(v, 0, oldest, 1, &lo, &hi)
}

/// `pick` from `level` merged with the part of the next level it overlaps, into that level.
fn plan_push_down(v: &Version, level: usize, pick: Rc<SstHandle>) -> Option<Plan> {
    let (lo, hi) = (pick.first_key().to_vec(), pick.last_key().to_vec());
    push_into(v, level, alloc::vec![pick], level + 1, &lo, &hi)
}

fn push_into(
    v: &Version,
    level: usize,
    inputs: Vec<Rc<SstHandle>>,
    output_level: usize,
    lo: &[u8],
    hi: &[u8],
) -> Option<Plan> {
    let below: Vec<_> = v
        .levels
        .get(output_level)
        .map(|l| l.iter().filter(|s| s.overlaps(lo, hi)).cloned().collect())
        .unwrap_or_default();
    let mut all = inputs.clone();
    all.extend(below.iter().cloned());
    let (lo, hi) = key_range(&all)?;
    Some(Plan {
        inputs: alloc::vec![(level, inputs), (output_level, below)],
        output_level,
        bottommost: nothing_below(v, output_level, &lo, &hi),
        drop_whole: false,
    })
}

/// `sst`, in the deepest level, rewritten where it is as the bottom: the last steps of a full
/// compaction, for what its other steps left untouched.
pub(crate) fn plan_in_place(level: usize, sst: Rc<SstHandle>) -> Plan {
    Plan {
        inputs: alloc::vec![(level, alloc::vec![sst])],
        output_level: level,
        bottommost: true,
        drop_whole: false,
    }
}

/// An L0 SST whose rows all expire within this many ms of now does not count toward the L0
/// trigger: it leaves by a whole drop, which reads and writes nothing, sooner than merging it
/// into L1 would pay off in reads, and a merge would mix its rows with longer-lived ones so that
/// they could no longer leave whole. Point reads skip it by its key filter meanwhile.
const SHORT_LIVED_MS: i64 = 60_000;

fn short_lived(sst: &SstHandle, now: i64) -> bool {
    sst.meta
        .expiry_range_of_every_row()
        .is_some_and(|(_, max)| max <= now.saturating_add(SHORT_LIVED_MS))
}

/// Whether `sst`'s rows all carry an expiry and the rest of them expire sooner than the first
/// ones took (`max_expire_at - handled <= handled - min_expire_at`): then waiting for its whole
/// drop costs less than rewriting it, which would also mix its rows with longer-lived ones and
/// keep them from leaving whole. Short, uniform TTLs are the case this is for: an L0 SST of a
/// few seconds of sessions is half expired half-way through its span.
fn leaves_whole_soon(sst: &SstHandle, handled: i64) -> bool {
    sst.meta
        .expiry_range_of_every_row()
        .is_some_and(|(min, max)| max.saturating_sub(handled) <= handled.saturating_sub(min))
}

fn nothing_below(version: &Version, level: usize, lo: &[u8], hi: &[u8]) -> bool {
    version
        .levels
        .iter()
        .skip(level + 1)
        .flatten()
        .all(|s| !s.overlaps(lo, hi))
}

impl Inner {
    /// Twice L1's target: the most bytes of L0 one merge takes, and the most of L1 it rewrites
    /// (an L1 over it is pushed down before the next L0 merge).
    fn l0_merge_budget(&self) -> u64 {
        self.level_target(1).saturating_mul(2)
    }

    fn level_target(&self, level: usize) -> u64 {
        let mut target = self.options.level1_target_bytes;
        for _ in 1..level {
            target = target.saturating_mul(self.options.level_size_multiplier);
        }
        target
    }

    /// The next compaction worth doing, if any.
    pub(crate) fn plan_compaction(&self, st: &State) -> Option<Plan> {
        let v = &st.version;
        if self.l0_merge_due(v) {
            // An L0 merge rewrites what it overlaps in L1: an L1 far over its target (L0 merges
            // in a row) goes down first, so that no merge grows with the data.
            let budget = self.l0_merge_budget();
            if v.level_bytes(1) > budget {
                return self.plan_over_target(v);
            }
            return plan_l0(v, budget);
        }
        if let Some(plan) = self.plan_whole_drop(st) {
            return Some(plan);
        }
        self.plan_over_target(v)
            .or_else(|| self.plan_expiry_compaction(st))
    }

    /// The oldest SST of the shallowest level below L0 that is over its target, pushed down.
    fn plan_over_target(&self, v: &Version) -> Option<Plan> {
        let level = (1..v.levels.len()).find(|&l| v.level_bytes(l) > self.level_target(l))?;
        let oldest = v
            .levels
            .get(level)?
            .iter()
            .min_by_key(|s| s.meta.creation_ts)?;
        plan_push_down(v, level, oldest.clone())
    }

    /// The next step of a full compaction, or `None` once every SST is in one level. Each step
    /// is bounded as a planned compaction is, so the whole merge never holds the tree twice (the
    /// memory of a tab never shrinks, and a store near its quota has room for one step): a level
    /// over its target pushes its oldest SST down first; then L0's SSTs go into L1 one at a time,
    /// oldest first (the planned L0 merge with no budget beyond its one SST); then each level
    /// above the deepest is pushed down one SST at a time, in key order. The caller rewrites what
    /// the steps left untouched ([`plan_in_place`]).
    pub(crate) fn plan_full_step(&self, st: &State) -> Option<Plan> {
        let v = &st.version;
        if let Some(plan) = self.plan_over_target(v) {
            return Some(plan);
        }
        if let Some(plan) = plan_l0(v, 0) {
            return Some(plan);
        }
        let deepest = v.deepest_nonempty()?;
        let (level, first) = v
            .levels
            .iter()
            .enumerate()
            .take(deepest)
            .find_map(|(level, ssts)| Some((level, ssts.first()?.clone())))?;
        plan_push_down(v, level, first)
    }

    /// Whether L0 is merged into L1: it holds `l0_compaction_trigger` SSTs that are not short
    /// lived (see [`SHORT_LIVED_MS`]), or [`L0_STALL_FACTOR`] times that many in all.
    fn l0_merge_due(&self, v: &Version) -> bool {
        let l0 = v.levels.first().map_or(&[][..], Vec::as_slice);
        let trigger = self.options.l0_compaction_trigger.max(1);
        let now = self.clock.last_issued();
        let lasting = l0.iter().filter(|s| !short_lived(s, now)).count();
        lasting >= trigger || l0.len() >= trigger.saturating_mul(L0_STALL_FACTOR)
    }

    /// An SST whose every row has expired, and been purged, before any pinned reader's time:
    /// dropped whole, without a rewrite. The purge writes no tombstones, so dropping an SST
    /// uncovers the older versions of its keys: it is dropped only if every older SST its keys
    /// overlap (older L0 SSTs, deeper levels) is itself all expired, so whatever it uncovers is
    /// expired too.
    fn plan_whole_drop(&self, st: &State) -> Option<Plan> {
        let now = self.clock.last_issued();
        let purged_until = st.manifest.purged_until;
        let all_expired = |sst: &SstHandle| {
            let m = &sst.meta;
            // No pinned reader may be able to see these rows at all: one reading before they
            // expired would lose them.
            m.expiry_range_of_every_row().is_some_and(|(_, max)| {
                max <= now && max < purged_until && !st.pinned_before(m.min_seq, i64::MAX)
            })
        };
        let levels = &st.version.levels;
        for (level, ssts) in levels.iter().enumerate() {
            for (i, sst) in ssts.iter().enumerate() {
                if !all_expired(sst) {
                    continue;
                }
                let (lo, hi) = (sst.first_key(), sst.last_key());
                // L0 SSTs are newest first; below L0 each level's SSTs do not overlap.
                let older_l0 = if level == 0 { ssts.get(i + 1..) } else { None };
                let deeper = levels.get(level + 1..).unwrap_or_default().iter().flatten();
                let uncovers_only_expired = older_l0
                    .unwrap_or_default()
                    .iter()
                    .chain(deeper)
                    .filter(|o| o.overlaps(lo, hi))
                    .all(|o| all_expired(o));
                if uncovers_only_expired {
                    return Some(Plan {
                        inputs: alloc::vec![(level, alloc::vec![sst.clone()])],
                        output_level: level,
                        bottommost: false,
                        drop_whole: true,
                    });
                }
            }
        }
        None
    }

    /// An SST that is largely expired (by its percentiles, counting only rows the purge has
    /// handled) or older than the periodic interval: compacted with what overlaps it below, or in
    /// place at the bottom.
    fn plan_expiry_compaction(&self, st: &State) -> Option<Plan> {
        let v = &st.version;
        let now = self.clock.last_issued();
        let handled = now.min(st.manifest.purged_until.saturating_sub(1));
        let due = |s: &SstHandle| {
            // Rows a pinned reader can still see cannot go; compacting would change nothing.
            if st.pinned_before(s.meta.min_seq, i64::MAX) {
                return false;
            }
            (s.meta.expired_share_at(handled) >= self.options.expiry_compaction_share
                && !leaves_whole_soon(s, handled))
                || self
                    .options
                    .periodic_compaction_ms
                    .is_some_and(|p| now >= s.meta.creation_ts.saturating_add(p))
        };
        for (level, ssts) in v.levels.iter().enumerate() {
            let Some(pick) = ssts.iter().find(|s| due(s)).cloned() else {
                continue;
            };
            if level == 0 {
                return plan_l0(v, self.l0_merge_budget());
            }
            if nothing_below(v, level, pick.first_key(), pick.last_key()) {
                // Nothing beneath: rewrite it in place, dropping what expired.
                return Some(plan_in_place(level, pick));
            }
            return plan_push_down(v, level, pick);
        }
        None
    }
}
