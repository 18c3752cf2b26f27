//! The write path: turning puts, deletes and expiry changes into rows, atomically.
//!
//! Owns the `Inner` methods [`write_ops`](Inner::write_ops),
//! [`write_ops_prefetched`](Inner::write_ops_prefetched), [`read_snapshot`](Inner::read_snapshot)
//! and the private `apply_planned` / `relieve_memtable_pressure`; of the state, it hands out
//! `State::last_seq`, inserts into `State::active` and appends to the pending WAL in `State::wal`.
//!
//! The trail of a write, from `Db::put_with_options` (in `db/writes.rs`) to the store:
//! 1. `Db` validates the call and turns it into [`WriteOp`]s on internal keys (`ops.rs`), then
//!    calls [`Inner::write_ops`] (here), once more after a reclaim if the store was full
//!    ([`Inner::reclaim_if_full`], `reclaim.rs`);
//! 2. [`Inner::write_ops_prefetched`] reads the rows the ops depend on, then runs the write's
//!    synchronous step, `apply_planned`:
//! 3. [`plan()`] (`plan.rs`) decides every op's outcome and row, and `apply_planned` gives the rows
//!    one seq, appends them to the pending WAL ([`WalState::append`](super::wal::WalState::append),
//!    `wal.rs`) and inserts them into the memtable, all without an await;
//! 4. a durable write then waits on its ticket: [`Inner::wait_durable`] in `group_commit.rs`
//!    commits the pending WAL as one page, or rolls it back out of the memtable if that fails.
//!
//! Writes that depend on the current row (conditions, `Ttl::Keep`, delete's result, `expire`,
//! `persist`, `get_ex`, the purge) read it first, possibly awaiting SST pages, then re-check in
//! one synchronous step that no newer write touched those keys meanwhile (optimistic
//! concurrency; they retry if one did). Everything a call writes gets one sequence number, goes
//! into the memtable and into the pending WAL in that same step, so a batch is all-or-nothing for
//! readers and for recovery. Every row written with an expiry gets its expiry-index row in the
//! same step (see `keys`), so the index never misses a key.

pub(crate) mod ops;
pub(crate) mod plan;

use alloc::rc::Rc;
use alloc::vec::Vec;

use self::ops::{Outcome, WriteOp};
use self::plan::{plan, CurrentRows, Planner, ReadSnapshot};
use super::keys::{
    expiry_index_from, expiry_index_key, is_expiry_index_key, parse_expiry_index_key,
};
use super::map_key::MapKey;
use super::memtable::{MemVersion, Versions};
use super::memtable_filter::MemtableFilter;
use super::namespace::TtlPolicy;
#[cfg(feature = "threads")]
use super::options::BACKGROUND_L0_STALL_FACTOR;
use super::options::{Durability, L0_STALL_FACTOR};
use super::state::Inner;
use super::wal::Ticket;
use crate::error::Result;

/// What the synchronous step of a write decided.
enum Step {
    /// Finished without writing (`None`: a put condition failed).
    Done(Option<Vec<Outcome>>),
    /// A newer write or a rollback touched what was read: read again.
    Retry,
    /// The answer rests on a write that is not durable yet: wait for it, then read again.
    Settle,
    /// Written (one seq, memtable and pending WAL); wait on the ticket if durable.
    Written(Vec<Outcome>, Option<Rc<Ticket>>),
}

impl Inner {
    /// Apply `ops` atomically. `Ok(None)`: a put condition failed and nothing was written;
    /// `Ok(Some(outcomes))`: one [`Outcome`] per op.
    ///
    /// With `record` (a call id), a write that changes anything also writes the record of its
    /// outcome under that id in the same batch (see [`CallRecord`](ops::CallRecord)).
    ///
    /// A write that fails has written nothing (a failed WAL commit rolls it back), and `ops` are
    /// only borrowed: a caller can send the same ops again (after a reclaim, `reclaim.rs`).
    /// Next step: [`Inner::write_ops_prefetched`].
    pub(crate) async fn write_ops(
        &self,
        ops: &[WriteOp],
        policy: TtlPolicy,
        record: Option<&[u8]>,
    ) -> Result<Option<Vec<Outcome>>> {
        let durable = self.options.durability == Durability::Durable;
        let planner = Planner { policy, record };
        self.write_ops_prefetched(ops, planner, None, durable).await
    }

    /// [`Inner::write_ops`] for a caller that already read the rows the ops depend on, at
    /// `prefetched.0` (the purge): they are used as long as nothing changed since, saving a
    /// second read of every key. With `durable`, it returns only once the write is durable,
    /// whatever the database's durability (the purge needs that).
    ///
    /// Next step: `apply_planned`, the write's instant, which calls [`plan()`].
    pub(crate) async fn write_ops_prefetched(
        &self,
        ops: &[WriteOp],
        planner: Planner<'_>,
        mut prefetched: Option<(ReadSnapshot, CurrentRows)>,
        durable: bool,
    ) -> Result<Option<Vec<Outcome>>> {
        // Whether plain puts read their keys too (see `WriteOp::needs_current`); if an expiry
        // becomes due between the read and the write, the write plans again with it set.
        let plain_puts = ops.iter().any(WriteOp::is_plain_put);
        let unknown = {
            let st = self.state.borrow();
            (!st.next_expiry_known).then(|| expiry_index_from(st.manifest.purged_until))
        };
        if let (true, Some(from)) = (plain_puts, unknown) {
            // Right after an open nothing is known of the expiry index: one lookup of its first
            // entry not yet purged spares every put until the first purge a read of its key.
            self.find_next_expiry(&from, None).await;
        }
        let mut owing = {
            let st = self.state.borrow();
            st.expiry_may_be_due(self.clock.last_issued())
        };
        let (results, ticket) = loop {
            if let Some((snapshot, current)) = prefetched.take() {
                match self.apply_planned(ops, &current, &snapshot, &planner, (durable, true))? {
                    Step::Done(results) => return Ok(results),
                    Step::Written(results, ticket) => break (results, ticket),
                    Step::Retry | Step::Settle => {}
                }
            }
            // Read what the ops depend on, at a fixed sequence number.
            let snapshot = self.read_snapshot()?;
            let mut current = CurrentRows::default();
            if ops.iter().any(|op| op.needs_current(owing)) {
                for op in ops.iter().filter(|op| op.needs_current(owing)) {
                    if current.get(op.key()).is_none() {
                        let found = self.lookup(op.key(), snapshot.seq).await?;
                        current.insert(MapKey::from_slice(op.key()), Versions::of(found));
                    }
                }
            }
            let read_all = owing || !plain_puts;
            match self.apply_planned(ops, &current, &snapshot, &planner, (durable, read_all))? {
                Step::Done(results) => return Ok(results),
                Step::Retry => {
                    owing = true;
                    continue;
                }
                Step::Settle => {
                    // The answer rests on a write that is not durable yet: let a commit in flight
                    // finish (or fail) by passing the gate, commit what is pending, decide again.
                    drop(self.commit_gate.lock().await);
                    let _ = self.drain_wal().await;
                    continue;
                }
                Step::Written(results, ticket) => break (results, ticket),
            }
        };
        if let Some(ticket) = ticket {
            self.wait_durable(&ticket).await?;
        }
        self.relieve_memtable_pressure().await;
        Ok(Some(results))
    }

    /// The write's instant: re-check, plan and apply in one synchronous step (no await).
    /// `read_all`: every op read its key, plain puts too (if they did not and an expiry may be due
    /// now, it is a `Retry`). The rows go to the pending WAL ([`WalState::append`]) and the
    /// memtable; the caller then waits on the ticket ([`Inner::wait_durable`]).
    ///
    /// [`WalState::append`]: super::wal::WalState::append
    fn apply_planned(
        &self,
        ops: &[WriteOp],
        current: &CurrentRows,
        read: &ReadSnapshot,
        planner: &Planner<'_>,
        (durable, read_all): (bool, bool),
    ) -> Result<Step> {
        let mut st = self.state.borrow_mut();
        st.check_writable()?;
        let now = self.clock.now()?;
        let raced = st.manifest_version != read.manifest_version
            || st.wal.rollbacks != read.rollbacks
            || current
                .keys()
                .any(|k| st.memtable_latest_seq(k).is_some_and(|s| s > read.seq))
            || (!read_all && st.expiry_may_be_due(now));
        if raced {
            return Ok(Step::Retry);
        }
        let planning = plan(ops, current, now, planner, st.manifest.purged_until)?;
        if planning.as_ref().is_none_or(|(_, p)| p.is_empty()) {
            // An answer that writes nothing (a failed condition, a no-op) must not rest on a
            // write that may still be rolled back.
            let unsettled = current
                .values()
                .flat_map(Versions::as_slice)
                .any(|v| v.seq > st.wal.durable_seq);
            return Ok(if unsettled {
                Step::Settle
            } else {
                Step::Done(planning.map(|(results, _)| results))
            });
        }
        let Some((results, planned)) = planning else {
            return Ok(Step::Done(None));
        };
        let planned = planned.into_sorted();
        let seq = st.last_seq + 1;
        st.last_seq = seq;
        // The planned rows become the write's versions in place, each given the write's seq and
        // time. Every value row with an expiry gets its expiry-index row in the same batch, after
        // the planned rows (the WAL and the memtable take a batch in no particular order, but
        // never with a key twice). An index row written here names an expiry after `now` (a row
        // due by then is planned as a tombstone), and an index key an op planned itself (an owed
        // event's, the purge's) names one at or before `now`: the two never share a key.
        let mut versions = planned;
        let planned_rows = versions.len();
        versions.reserve(planned_rows);
        let mut earliest: Option<i64> = None;
        for i in 0..planned_rows {
            let Some((key, row)) = versions.get_mut(i) else {
                break;
            };
            row.seq = seq;
            row.ts = now;
            if is_expiry_index_key(key) {
                debug_assert!(parse_expiry_index_key(key).is_some_and(|(at, _)| at <= now));
                continue;
            }
            let (Some(at), Some(_)) = (row.expire_at, &row.value) else {
                continue;
            };
            debug_assert!(at > now);
            let index_key = expiry_index_key(at, key);
            earliest = Some(earliest.map_or(at, |e| e.min(at)));
            let index_row = MemVersion {
                seq,
                ts: now,
                expire_at: Some(at),
                value: Some(Vec::new()),
            };
            versions.push((index_key.into(), index_row));
        }
        let rows: Vec<_> = versions.iter().map(|(k, v)| v.row(k)).collect();
        let ticket = st.wal.append(&rows, seq, now, durable)?;
        drop(rows);
        if let Some(t) = earliest {
            st.note_expiry(t);
        }
        // What older versions of a key this write's version may need kept: those the snapshots
        // read, and the one a commit in flight would make durable (a later commit's failure
        // rolls back to it). Any other version above the durable one goes: whatever commit
        // comes next takes this write with it, so a rollback never stops between the two.
        let mut keep_points = st.snapshot_seqs();
        keep_points.extend(st.wal.committing());
        let durable_seq = st.wal.durable_seq;
        let st = &mut *st;
        let mut active = st.active.borrow_mut();
        for (key, v) in versions {
            let hash = MemtableFilter::hash(&key);
            st.rows.written(&key, hash, &v);
            active.insert(key, hash, v, &keep_points, durable_seq);
        }
        Ok(Step::Written(results, ticket))
    }

    /// Keep memory and read cost bounded when no maintenance runs: flush a memtable that grew
    /// past the stall limit, and compact once L0 holds [`L0_STALL_FACTOR`] times its trigger
    /// (where compactions merge on their own thread: wait for it once L0 holds
    /// `BACKGROUND_L0_STALL_FACTOR` times its trigger).
    async fn relieve_memtable_pressure(&self) {
        let over =
            || self.state.borrow().active.borrow().bytes() >= self.options.memtable_stall_bytes;
        if self.manifest_lock.is_held() {
            // A flush or compaction runs. Past the stall limit, wait for it rather than grow the
            // memtable further: a flush commits the WAL until nothing is pending before it
            // freezes the memtable, so writes that went on appending would keep it committing
            // for as long as they came. (No caller of a write holds the manifest lock.)
            if over() {
                drop(self.manifest_lock.lock().await);
            }
            return;
        }
        if over() {
            // A failure here leaves the data in the memtable and WAL; the next write retries.
            let _ = self.flush().await;
        }
        let l0 = self
            .state
            .borrow()
            .version
            .levels
            .first()
            .map_or(0, Vec::len);
        let trigger = self.options.l0_compaction_trigger.max(1);
        // With compactions on their own thread: wait for the running one (back-pressure), and
        // start the next there, rather than run every one due here.
        #[cfg(feature = "threads")]
        if self.options.background_compaction {
            // Divided, not multiplied: a trigger near `usize::MAX` must not overflow.
            if l0 / BACKGROUND_L0_STALL_FACTOR >= trigger {
                let _ = self.relieve_l0_in_background().await;
            }
            return;
        }
        // l0 >= trigger * factor, divided so that a trigger near `usize::MAX` cannot overflow.
        if l0 / L0_STALL_FACTOR >= trigger {
            let _ = self.compact(false).await;
        }
    }

    /// The point to read at now, for a write that reads first.
    pub(crate) fn read_snapshot(&self) -> Result<ReadSnapshot> {
        let st = self.state.borrow();
        st.check_writable()?;
        Ok(ReadSnapshot {
            seq: st.last_seq,
            manifest_version: st.manifest_version,
            rollbacks: st.wal.rollbacks,
        })
    }
}
