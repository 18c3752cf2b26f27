//! Compaction planning: which SSTs to merge next, if any ([`Plan`]). Pure decisions on the
//! current [`Version`] and manifest; nothing is read or written here.
//!
//! Owns the `Inner` methods [`plan_compaction`](Inner::plan_compaction),
//! [`compaction_due`](Inner::compaction_due) (the wake-up's question, answered from
//! `State::none_due` while nothing a plan reads has changed), the steps of a full compaction
//! ([`plan_full_step`](Inner::plan_full_step), [`plan_in_place`]) and their private helpers
//! (`level_target`, `l0_merge_due`, `plan_whole_drop`, `plan_over_target`,
//! `plan_expiry_compaction`, `none_due_until`); it reads `State::version`, `State::manifest` and
//! the pinned reads, and changes nothing but `State::none_due`.

use alloc::rc::Rc;
use alloc::vec::Vec;

use super::parts::{NoneDue, Plan, PlanInputs};
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

/// What a plan reads of `st` besides the time ([`PlanInputs`]).
fn plan_inputs(st: &State) -> PlanInputs {
    PlanInputs {
        manifest_version: st.manifest_version,
        purged_until: st.manifest.purged_until,
        newest_pin: st.newest_pin_before(i64::MAX),
    }
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

    /// Whether a compaction is due now: [`plan_compaction`](Self::plan_compaction) finds one.
    /// Every write asks (the host's wake-up, `next_wakeup`), and a plan looks at every SST: a
    /// put's cost grew with the database (at 275 SSTs, a fifth of a put's time in Node and a
    /// third of its instructions). So a "no" is kept in
    /// `State::none_due` and given again, without planning, while the plan's inputs
    /// ([`PlanInputs`]) are the same and the time has not reached the first moment it alone
    /// could make a compaction due. A "yes" is not kept: the next maintenance step runs it.
    pub(crate) fn compaction_due(&self, st: &State) -> bool {
        let now = self.clock.last_issued();
        let inputs = plan_inputs(st);
        if let Some(kept) = st.none_due.get() {
            if kept.inputs == inputs && now < kept.until {
                debug_assert!(
                    self.plan_compaction(st).is_none(),
                    "a kept answer that no compaction is due must be what a plan finds"
                );
                return false;
            }
        }
        #[cfg(test)]
        st.none_due_plans.set(st.none_due_plans.get() + 1);
        let due = self.plan_compaction(st).is_some();
        st.none_due.set((!due).then(|| NoneDue {
            inputs,
            until: self.none_due_until(st, now),
        }));
        due
    }

    /// The first time at which the time alone could make [`plan_compaction`](Self::plan_compaction),
    /// which found nothing due at `now`, find a compaction due on the same inputs. Rule by rule:
    /// - the L0 merge only becomes less due as time passes (more of L0 is short-lived);
    /// - a level over its target does not depend on the time;
    /// - the expiry compaction judges rows at `handled = min(now, purged_until - 1)`: while
    ///   `now` is below `purged_until - 1` that moves with every millisecond, so the answer holds
    ///   for this millisecond only (the purge never moves `purged_until` past the time it read
    ///   plus one, and an open holds it there: only a clock that steps back between a reset
    ///   open's two readings gets here); from
    ///   there on it is fixed, and only the periodic rule
    ///   (`creation_ts + periodic_compaction_ms`) is a time to wait for;
    /// - a whole drop wants every row's expiry at or before `now` and before `purged_until`,
    ///   which with `now >= purged_until - 1` no longer depends on the time.
    ///
    /// A rule that comes to depend on the time must say here when.
    fn none_due_until(&self, st: &State, now: i64) -> i64 {
        if now < st.manifest.purged_until.saturating_sub(1) {
            return now.saturating_add(1);
        }
        let Some(period) = self.options.periodic_compaction_ms else {
            return i64::MAX;
        };
        let mut until = i64::MAX;
        for level in &st.version.levels {
            for sst in level {
                let at = sst.meta.creation_ts.saturating_add(period);
                if at > now && at < until {
                    until = at;
                }
            }
        }
        until
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

#[cfg(test)]
mod tests {
    use alloc::rc::Rc;
    use alloc::vec::Vec;

    use futures::executor::block_on;

    use crate::clock::{Clock, FakeClock};
    use crate::engine::keys::internal_key;
    use crate::engine::namespace::TtlPolicy;
    use crate::engine::options::{DbOptions, Durability, PutCondition, Ttl};
    use crate::engine::state::Inner;
    use crate::engine::write::ops::WriteOp;
    use crate::store::MemoryStore;

    const T0: i64 = 1_767_225_600_000;

    /// Small pages and levels, so that a few hundred puts make many SSTs over three levels, and
    /// a periodic compaction a test can wait for.
    fn small_options() -> DbOptions {
        DbOptions {
            durability: Durability::Relaxed,
            page_size: 512,
            memtable_flush_bytes: 2_048,
            memtable_stall_bytes: 64 * 1_024,
            sst_target_bytes: 2_048,
            level1_target_bytes: 8_192,
            level_size_multiplier: 4,
            periodic_compaction_ms: Some(90_000),
            ..DbOptions::default()
        }
    }

    async fn open(clock: &FakeClock) -> Inner {
        let store = Rc::new(MemoryStore::new());
        Inner::open(store, Rc::new(clock.clone()), small_options())
            .await
            .unwrap()
    }

    async fn put(inner: &Inner, i: u64, ttl: Ttl) {
        let op = WriteOp::Put {
            key: internal_key(0, alloc::format!("key-{i:05}").as_bytes()),
            value: alloc::vec![b'v'; 40],
            ttl,
            condition: PutCondition::Always,
        };
        inner
            .write_ops(&[op], TtlPolicy::default(), None)
            .await
            .unwrap();
    }

    /// Maintenance steps until one finds nothing to do now.
    async fn settle(inner: &Inner, clock: &FakeClock) {
        for _ in 0..1_000 {
            let step = inner.maintenance_step().await.unwrap();
            if step.next_wakeup_ms.is_none_or(|t| t > clock.now_ms()) {
                return;
            }
        }
        panic!("maintenance never settled");
    }

    #[test]
    fn writes_ask_for_the_wakeup_without_planning_a_compaction_again() {
        block_on(async {
            let clock = FakeClock::new(T0);
            let inner = open(&clock).await;
            for i in 0..600 {
                put(&inner, i, Ttl::NoExpiry).await;
                settle(&inner, &clock).await;
            }
            let ssts: usize = inner
                .state
                .borrow()
                .version
                .levels
                .iter()
                .map(Vec::len)
                .sum();
            assert!(ssts >= 10, "the test wants many SSTs, has {ssts}");

            inner.next_wakeup();
            let plans = inner.state.borrow().none_due_plans.get();
            for i in 0..20 {
                put(&inner, 10_000 + i, Ttl::NoExpiry).await;
                clock.advance(1);
                assert!(inner.next_wakeup().is_some());
            }
            assert_eq!(
                inner.state.borrow().none_due_plans.get(),
                plans,
                "twenty writes and wake-up questions, and no plan: nothing a plan reads changed"
            );

            // A flush commits a manifest: the next question plans again, once.
            inner.flush().await.unwrap();
            inner.next_wakeup();
            inner.next_wakeup();
            assert_eq!(inner.state.borrow().none_due_plans.get(), plans + 1);

            // So does a pinned read, and the time of the first periodic compaction.
            let seq = inner.state.borrow().last_seq;
            inner.state.borrow_mut().pin(seq, clock.now_ms());
            inner.next_wakeup();
            assert_eq!(inner.state.borrow().none_due_plans.get(), plans + 2);
            inner.state.borrow_mut().unpin(seq, clock.now_ms());
            inner.next_wakeup();
            assert_eq!(inner.state.borrow().none_due_plans.get(), plans + 3);
            clock.advance(small_options().periodic_compaction_ms.unwrap());
            assert_eq!(
                inner.next_wakeup(),
                Some(clock.now_ms()),
                "a periodic compaction is due"
            );
            assert_eq!(inner.state.borrow().none_due_plans.get(), plans + 4);
        });
    }

    #[test]
    fn a_purge_that_moves_its_horizon_in_memory_alone_is_seen_by_the_next_question() {
        block_on(async {
            let clock = FakeClock::new(T0);
            let inner = open(&clock).await;
            // An SST whose every row expires at T0 + 1 s, then the same keys for good, newer.
            for i in 0..50 {
                put(&inner, i, Ttl::ExpireAfter(1_000)).await;
            }
            inner.flush().await.unwrap();
            for i in 0..50 {
                put(&inner, i, Ttl::NoExpiry).await;
            }
            inner.flush().await.unwrap();
            clock.advance(2_000);
            inner.clock.now().unwrap();
            let version = inner.state.borrow().manifest_version;
            assert!(
                !inner.compaction_due(&inner.state.borrow()),
                "nothing purged yet"
            );

            // The purge finds every due entry stale (each key was written since): it removes
            // nothing and moves `purged_until` in memory, with no manifest commit.
            let report = inner.purge_expired(1_000).await.unwrap();
            assert_eq!(report.removed, 0);
            let st = inner.state.borrow();
            assert_eq!(st.manifest_version, version, "no manifest commit");
            assert!(st.manifest.purged_until > T0 + 1_000);
            assert!(inner.plan_compaction(&st).is_some_and(|p| p.drop_whole));
            assert!(
                inner.compaction_due(&st),
                "the first SST can now be dropped whole"
            );
        });
    }

    /// A seeded xorshift: the same run every time.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }

        fn ms(&mut self, n: u64) -> i64 {
            i64::try_from(self.below(n)).unwrap_or(0)
        }
    }

    #[test]
    fn the_kept_answer_is_the_plans_through_writes_flushes_compactions_purges_pins_and_time() {
        block_on(async {
            let clock = FakeClock::new(T0);
            let inner = open(&clock).await;
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
            let mut pins: Vec<(u64, i64)> = Vec::new();
            let (mut due, mut idle) = (0, 0);
            for step in 0..3_000u64 {
                match rng.below(20) {
                    0..=9 => {
                        let ttl = match rng.below(3) {
                            0 => Ttl::NoExpiry,
                            1 => Ttl::ExpireAfter(1 + rng.below(5_000)),
                            _ => Ttl::ExpireAfter(60_000 + rng.below(200_000)),
                        };
                        put(&inner, rng.below(400), ttl).await;
                    }
                    10 | 11 => inner.flush().await.unwrap(),
                    12 | 13 => {
                        inner.maintenance_step().await.unwrap();
                    }
                    14 => {
                        inner
                            .purge_expired(1 + rng.below(50) as usize)
                            .await
                            .unwrap();
                    }
                    15 => {
                        let at = (inner.state.borrow().last_seq, clock.now_ms());
                        inner.state.borrow_mut().pin(at.0, at.1);
                        pins.push(at);
                    }
                    16 => {
                        if let Some((seq, t)) = pins.pop() {
                            inner.state.borrow_mut().unpin(seq, t);
                        }
                    }
                    17 => clock.advance(1 + rng.ms(3)),
                    18 => clock.advance(rng.ms(40_000)),
                    _ => {
                        // Back in time: the engine's clock holds at the time it last gave out.
                        clock.advance(-rng.ms(10_000));
                    }
                }
                if step % 500 == 499 {
                    inner.compact(true).await.unwrap();
                }
                inner.clock.now().unwrap();
                let st = inner.state.borrow();
                let planned = inner.plan_compaction(&st).is_some();
                assert_eq!(inner.compaction_due(&st), planned, "step {step}");
                assert_eq!(
                    inner.compaction_due(&st),
                    planned,
                    "step {step}, asked again"
                );
                if planned {
                    due += 1;
                } else {
                    idle += 1;
                }
            }
            assert!(
                due > 100 && idle > 100,
                "both answers seen often: {due} due, {idle} idle"
            );
        });
    }
}
