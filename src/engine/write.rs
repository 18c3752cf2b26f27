//! The write path: turning puts, deletes and expiry changes into rows, atomically.
//!
//! Writes that depend on the current row (conditions, `Ttl::Keep`, delete's result, `expire`,
//! `persist`, `get_ex`, the purge) read it first, possibly awaiting SST pages, then re-check in
//! one synchronous step that no newer write touched those keys meanwhile (optimistic
//! concurrency; they retry if one did). Everything a call writes gets one sequence number, goes
//! into the memtable and into the pending WAL in that same step, so a batch is all-or-nothing for
//! readers and for recovery. Every row written with an expiry gets its expiry-index row in the
//! same step (see `keys`), so the index never misses a key.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::compaction::L0_STALL_FACTOR;
use super::keys::{
    call_record_key, expiry_index_from, expiry_index_key, owed_entry_value, EXPIRY_INDEX_NS,
    NAMESPACE_PREFIX_LEN,
};
use super::memtable::MemVersion;
use super::options::{Durability, ExpireCondition, PutCondition, Ttl};
use super::read::is_live;
use super::state::Inner;
use crate::clock::MAX_PLAUSIBLE_MS;
use crate::error::{Error, Result};

/// The TTL rules of the keyspace a write goes to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TtlPolicy {
    /// TTL applied by `Ttl::Default`.
    pub default_ttl_ms: Option<u64>,
    /// Longer or missing TTLs are clamped to this.
    pub max_ttl_ms: Option<u64>,
}

/// What `expire` sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExpireTarget {
    /// Expire at this absolute time.
    At(i64),
    /// Remove the expiry.
    Persist,
}

/// One change, on an internal key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum WriteOp {
    Put {
        key: Vec<u8>,
        value: Vec<u8>,
        ttl: Ttl,
        condition: PutCondition,
    },
    Delete {
        key: Vec<u8>,
    },
    Expire {
        key: Vec<u8>,
        target: ExpireTarget,
        condition: ExpireCondition,
    },
    /// Read the live value and change its expiry in one step (Redis `GETEX`).
    GetEx {
        key: Vec<u8>,
        target: ExpireTarget,
    },
    /// Remove an expiry-index entry unconditionally (the purge handled it, and its slice ends
    /// inside the entries of one expiry time).
    DropIndexEntry {
        key: Vec<u8>,
    },
    /// A tombstone for a key the purge found expired, written only if the key still holds the
    /// row the purge saw (`seen_seq`, expiring at `expire_at`): so that no later write takes
    /// the row for one whose expire event is still owed (see [`plan`]). Used where the purge
    /// cannot record that through `purged_until` (a slice ending inside one millisecond).
    RemoveExpired {
        key: Vec<u8>,
        expire_at: i64,
        seen_seq: u64,
    },
    /// The expire hook's replacement for a key the purge found expired: written only if the key
    /// still holds the row the purge saw (`seen_seq`, expiring at `expire_at`).
    ReplaceExpired {
        key: Vec<u8>,
        expire_at: i64,
        seen_seq: u64,
        value: Vec<u8>,
        new_expire_at: Option<i64>,
    },
}

impl WriteOp {
    fn key(&self) -> &[u8] {
        match self {
            WriteOp::Put { key, .. }
            | WriteOp::Delete { key }
            | WriteOp::Expire { key, .. }
            | WriteOp::GetEx { key, .. }
            | WriteOp::DropIndexEntry { key }
            | WriteOp::RemoveExpired { key, .. }
            | WriteOp::ReplaceExpired { key, .. } => key,
        }
    }

    /// Whether the op depends on the key's current row. A plain put does not, but while an
    /// expiry may be due and not yet purged (`owing`) it reads it anyway: replacing an expired
    /// row whose event has not fired records that event (see [`plan`]).
    fn needs_current(&self, owing: bool) -> bool {
        (owing && self.is_plain_put()) || self.needs_current_anyway()
    }

    /// A put that needs no current row for itself (no condition, no `Ttl::Keep`).
    fn is_plain_put(&self) -> bool {
        matches!(self, WriteOp::Put { .. }) && !self.needs_current_anyway()
    }

    /// Whether the op depends on the key's current row for its own outcome.
    fn needs_current_anyway(&self) -> bool {
        match self {
            WriteOp::Put { ttl, condition, .. } => {
                *condition != PutCondition::Always || *ttl == Ttl::Keep
            }
            WriteOp::DropIndexEntry { .. } => false,
            _ => true,
        }
    }
}

/// What one op did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// put: written; delete: a live key was removed; expire/persist: the expiry changed;
    /// get_ex: the key was live; replace_expired: the key was rewritten.
    pub applied: bool,
    /// get_ex: the live value.
    pub value: Option<Vec<u8>>,
    /// replace_expired: not written because the replacement's expiry had come by then.
    pub due: bool,
}

impl Outcome {
    fn yes() -> Self {
        Outcome {
            applied: true,
            ..Outcome::default()
        }
    }

    fn no() -> Self {
        Outcome::default()
    }
}

/// The longest TTL: added to any plausible time it stays within `i64`, so no write with it can
/// overflow (a default or maximum TTL is stored with a namespace, and an overflowing one would
/// fail every later put there).
pub const MAX_TTL_MS: u64 = (i64::MAX - MAX_PLAUSIBLE_MS) as u64;

/// Check a `Ttl` given by a caller.
pub(crate) fn validate_ttl(ttl: Ttl) -> Result<()> {
    match ttl {
        Ttl::ExpireAfter(0) => Err(Error::invalid("a TTL must be greater than 0 ms")),
        Ttl::ExpireAfter(ms) if ms > MAX_TTL_MS => Err(Error::invalid(alloc::format!(
            "a TTL must be at most {MAX_TTL_MS} ms"
        ))),
        _ => Ok(()),
    }
}

/// Check an `ExpireCondition` given by a caller (Redis rejects the same combinations).
pub(crate) fn validate_expire_condition(c: ExpireCondition) -> Result<()> {
    if c.nx && (c.xx || c.gt || c.lt) {
        return Err(Error::invalid("nx cannot be combined with xx, gt or lt"));
    }
    if c.gt && c.lt {
        return Err(Error::invalid("gt and lt cannot be combined"));
    }
    Ok(())
}

fn ms_to_i64(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// The time `ms` after `now`: an error, never a saturated time, if it is past the range of
/// times (a saturated expiry would read as "now", and the write would become a delete).
pub(crate) fn expiry_after(now: i64, ms: u64) -> Result<i64> {
    i64::try_from(ms)
        .ok()
        .and_then(|ms| now.checked_add(ms))
        .ok_or_else(|| {
            Error::invalid(alloc::format!(
                "an expiry {ms} ms after {now} is beyond the range of times"
            ))
        })
}

impl TtlPolicy {
    /// Clamp an expiry to the policy's maximum TTL (a missing expiry becomes the maximum).
    pub(crate) fn clamp(&self, expire_at: Option<i64>, now: i64) -> Option<i64> {
        match self.max_ttl_ms {
            Some(max) => {
                let cap = now.saturating_add(ms_to_i64(max));
                Some(expire_at.map_or(cap, |at| at.min(cap)))
            }
            None => expire_at,
        }
    }

    /// The expiry a write with `ttl` gives its key (clamped to the maximum TTL); an error if it
    /// is past the range of times.
    pub(crate) fn expiry(
        &self,
        ttl: Ttl,
        now: i64,
        current: Option<&MemVersion>,
    ) -> Result<Option<i64>> {
        let raw = match ttl {
            Ttl::Default => self
                .default_ttl_ms
                .map(|ms| expiry_after(now, ms))
                .transpose()?,
            Ttl::NoExpiry => None,
            Ttl::ExpireAfter(ms) => Some(expiry_after(now, ms)?),
            Ttl::ExpireAt(at) => Some(at),
            Ttl::Keep => current.and_then(|c| c.expire_at),
        };
        Ok(self.clamp(raw, now))
    }
}

/// The seq of a planned row until the write is applied: newer than any real one.
const UNASSIGNED_SEQ: u64 = u64::MAX;

/// The expiry and value of `row` if it expired (by `now`) and the purge has not reported it yet
/// (its expiry is not before `purged_until`), so that replacing it owes an expire event.
fn owed_event(row: &MemVersion, now: i64, purged_until: i64) -> Option<(i64, &[u8])> {
    let at = row
        .expire_at
        .filter(|at| *at <= now && *at >= purged_until)?;
    Some((at, row.value.as_deref()?))
}

/// The row a write decided on: a value, or a tombstone if its expiry is not in the future (as
/// Redis does). Written at `now`; its seq is assigned when the write is applied.
fn planned_value(value: Vec<u8>, expire_at: Option<i64>, now: i64) -> Vec<MemVersion> {
    if expire_at.is_some_and(|at| at <= now) {
        return planned_tombstone(now);
    }
    alloc::vec![MemVersion {
        seq: UNASSIGNED_SEQ,
        ts: now,
        expire_at,
        value: Some(value),
    }]
}

/// A tombstone a write decided on (see [`planned_value`]).
fn planned_tombstone(now: i64) -> Vec<MemVersion> {
    alloc::vec![MemVersion {
        seq: UNASSIGNED_SEQ,
        ts: now,
        expire_at: None,
        value: None,
    }]
}

/// Each op's outcome, and the row every touched key ends up with (always one: the planned rows
/// share [`CurrentRows`]' map type).
type Planning = (Vec<Outcome>, CurrentRows);

/// What the synchronous step of a write decided.
enum Step {
    /// Finished without writing (`None`: a put condition failed).
    Done(Option<Vec<Outcome>>),
    /// A newer write or a rollback touched what was read: read again.
    Retry,
    /// The answer rests on a write that is not durable yet: wait for it, then read again.
    Settle,
    /// Written (one seq, memtable and pending WAL); wait on the ticket if durable.
    Written(Vec<Outcome>, Option<alloc::rc::Rc<super::wal::Ticket>>),
}

impl Inner {
    /// Apply `ops` atomically. `Ok(None)`: a put condition failed and nothing was written;
    /// `Ok(Some(outcomes))`: one [`Outcome`] per op.
    ///
    /// With `record` (a call id), a write that changes anything also writes the record of its
    /// outcome under that id in the same batch (see [`CallRecord`]).
    pub(crate) async fn write_ops(
        &self,
        ops: Vec<WriteOp>,
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
    pub(crate) async fn write_ops_prefetched(
        &self,
        ops: Vec<WriteOp>,
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
                match self.apply_planned(&ops, &current, &snapshot, &planner, (durable, true))? {
                    Step::Done(results) => return Ok(results),
                    Step::Written(results, ticket) => break (results, ticket),
                    Step::Retry | Step::Settle => {}
                }
            }
            // Read what the ops depend on, at a fixed sequence number.
            let snapshot = self.read_snapshot()?;
            let mut current: CurrentRows = BTreeMap::new();
            if ops.iter().any(|op| op.needs_current(owing)) {
                for op in ops.iter().filter(|op| op.needs_current(owing)) {
                    if !current.contains_key(op.key()) {
                        let found = self.lookup(op.key(), snapshot.seq).await?;
                        current.insert(op.key().to_vec(), found.into_iter().collect());
                    }
                }
            }
            let read_all = owing || !plain_puts;
            match self.apply_planned(&ops, &current, &snapshot, &planner, (durable, read_all))? {
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
    /// now, it is a `Retry`).
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
                .flatten()
                .any(|v| v.seq > st.wal.durable_seq);
            return Ok(if unsettled {
                Step::Settle
            } else {
                Step::Done(planning.map(|(results, _)| results))
            });
        }
        let Some((results, mut planned)) = planning else {
            return Ok(Step::Done(None));
        };
        let seq = st.last_seq + 1;
        st.last_seq = seq;
        // Every value row with an expiry gets its expiry-index row in the same batch. The index
        // rows join the planned rows in their map, which hands them all out in key order (the
        // WAL and the memtable take a batch so). Should an index row's key also be a planned key,
        // the row of the key that comes first in key order wins (the index row is its data key's).
        let mut index_rows: Vec<(Vec<u8>, i64)> = Vec::new();
        let mut earliest: Option<i64> = None;
        for (key, rows) in &planned {
            let Some(row) = rows.first() else {
                continue;
            };
            if let (Some(at), Some(_)) = (row.expire_at, &row.value) {
                if !is_index_key(key) {
                    let index_key = expiry_index_key(at, key);
                    if index_key > *key || !planned.contains_key(&index_key) {
                        index_rows.push((index_key, at));
                    }
                    earliest = Some(earliest.map_or(at, |e| e.min(at)));
                }
            }
        }
        for (index_key, at) in index_rows {
            let row = MemVersion {
                seq,
                ts: now,
                expire_at: Some(at),
                value: Some(Vec::new()),
            };
            planned.insert(index_key, alloc::vec![row]);
        }
        let versions: Vec<(Vec<u8>, MemVersion)> = planned
            .into_iter()
            .filter_map(|(key, mut rows)| {
                let mut row = rows.pop()?;
                row.seq = seq;
                row.ts = now;
                Some((key, row))
            })
            .collect();
        let rows: Vec<_> = versions.iter().map(|(k, v)| v.row(k)).collect();
        let ticket = st.wal.append(&rows, seq, now, durable)?;
        drop(rows);
        if let Some(t) = earliest {
            st.note_expiry(t);
        }
        let keep_points = st.snapshot_seqs();
        let durable_seq = st.wal.durable_seq;
        let mut active = st.active.borrow_mut();
        for (key, v) in versions {
            active.insert(&key, v, &keep_points, durable_seq);
        }
        Ok(Step::Written(results, ticket))
    }

    /// Keep memory and read cost bounded when no maintenance runs: flush a memtable that grew
    /// past the stall limit, and compact once L0 holds [`L0_STALL_FACTOR`] times its trigger.
    async fn relieve_memtable_pressure(&self) {
        if self.manifest_lock.is_held() {
            return;
        }
        let over = self.state.borrow().active.borrow().bytes() >= self.options.memtable_stall_bytes;
        if over {
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
        if l0 >= self.options.l0_compaction_trigger.max(1) * L0_STALL_FACTOR {
            let _ = self.compact(false).await;
        }
    }
}

/// The rows a write read, by internal key: the key's row, or an empty list if it has none. (A
/// list of at most one, not an `Option`: this map then has the memtable's map type, and the wasm
/// module carries the code of one map where it would carry two.)
pub(crate) type CurrentRows = BTreeMap<Vec<u8>, Vec<MemVersion>>;

/// The point a write read its rows at, to detect anything that happened since.
pub(crate) struct ReadSnapshot {
    pub seq: u64,
    manifest_version: u64,
    rollbacks: u64,
}

impl Inner {
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

fn is_index_key(key: &[u8]) -> bool {
    key.len() >= NAMESPACE_PREFIX_LEN && key.starts_with(&EXPIRY_INDEX_NS.to_be_bytes())
}

/// Decide every op's outcome against the current rows (ops see the effects of earlier ops of the
/// same call). `None` if a put condition failed; an error if an expiry is past the range of times.
///
/// A put that replaces a row which expired and whose expire event has not fired (its expiry is
/// not before `purged_until`) records that event in the same batch: the row's expiry-index entry
/// is written again carrying the row's value, and the purge reports it from there (Redis fires
/// `expired` for a key that is overwritten after it expired, too).
fn plan(
    ops: &[WriteOp],
    current: &CurrentRows,
    now: i64,
    planner: &Planner<'_>,
    purged_until: i64,
) -> Result<Option<Planning>> {
    let policy = &planner.policy;
    let mut planned = CurrentRows::new();
    let mut results = Vec::with_capacity(ops.len());
    for op in ops {
        let key = op.key();
        // The key's row as this call sees it: an earlier op's plan, or what was read.
        let raw: Option<MemVersion> = planned
            .get(key)
            .or_else(|| current.get(key))
            .and_then(|rows| rows.last())
            .cloned();
        let live = raw.clone().filter(|v| is_live(v, now));
        let outcome = match op {
            WriteOp::Put {
                value,
                ttl,
                condition,
                ..
            } => {
                let ok = match condition {
                    PutCondition::Always => true,
                    PutCondition::IfAbsent => live.is_none(),
                    PutCondition::IfPresent => live.is_some(),
                };
                if !ok {
                    return Ok(None);
                }
                if let Some((at, old)) = raw.as_ref().and_then(|r| owed_event(r, now, purged_until))
                {
                    let entry = MemVersion {
                        seq: UNASSIGNED_SEQ,
                        ts: now,
                        expire_at: Some(at),
                        value: Some(owed_entry_value(old)),
                    };
                    planned.insert(expiry_index_key(at, key), alloc::vec![entry]);
                }
                let expire_at = policy.expiry(*ttl, now, live.as_ref())?;
                planned.insert(key.to_vec(), planned_value(value.clone(), expire_at, now));
                Outcome::yes()
            }
            WriteOp::Delete { .. } => match live {
                Some(_) => {
                    planned.insert(key.to_vec(), planned_tombstone(now));
                    Outcome::yes()
                }
                None => Outcome::no(),
            },
            WriteOp::Expire {
                target, condition, ..
            } => {
                let Some(row) = live else {
                    results.push(Outcome::no());
                    continue;
                };
                let cur = row.expire_at;
                let new_expire = match target {
                    ExpireTarget::Persist => {
                        if cur.is_none() {
                            results.push(Outcome::no());
                            continue;
                        }
                        policy.clamp(None, now)
                    }
                    ExpireTarget::At(at) => {
                        let ok = (!condition.nx || cur.is_none())
                            && (!condition.xx || cur.is_some())
                            && (!condition.gt || cur.is_some_and(|c| *at > c))
                            && (!condition.lt || cur.is_none_or(|c| *at < c));
                        if !ok {
                            results.push(Outcome::no());
                            continue;
                        }
                        policy.clamp(Some(*at), now)
                    }
                };
                if new_expire != cur {
                    let value = row.value.unwrap_or_default();
                    planned.insert(key.to_vec(), planned_value(value, new_expire, now));
                }
                Outcome {
                    applied: new_expire != cur || matches!(target, ExpireTarget::At(_)),
                    ..Outcome::default()
                }
            }
            WriteOp::GetEx { target, .. } => {
                let Some(row) = live else {
                    results.push(Outcome::no());
                    continue;
                };
                let new_expire = match target {
                    ExpireTarget::Persist => policy.clamp(None, now),
                    ExpireTarget::At(at) => policy.clamp(Some(*at), now),
                };
                let value = row.value.unwrap_or_default();
                if new_expire != row.expire_at {
                    planned.insert(key.to_vec(), planned_value(value.clone(), new_expire, now));
                }
                Outcome {
                    applied: true,
                    value: Some(value),
                    due: false,
                }
            }
            WriteOp::DropIndexEntry { .. } => {
                planned.insert(key.to_vec(), planned_tombstone(now));
                Outcome::no()
            }
            WriteOp::RemoveExpired {
                expire_at,
                seen_seq,
                ..
            } => {
                let same_row = raw.as_ref().is_some_and(|v| {
                    v.seq == *seen_seq && v.value.is_some() && v.expire_at == Some(*expire_at)
                });
                if same_row && *expire_at <= now {
                    planned.insert(key.to_vec(), planned_tombstone(now));
                }
                Outcome::no()
            }
            WriteOp::ReplaceExpired {
                expire_at,
                seen_seq,
                value,
                new_expire_at,
                ..
            } => {
                let same_row = raw.as_ref().is_some_and(|v| {
                    v.seq == *seen_seq && v.value.is_some() && v.expire_at == Some(*expire_at)
                });
                if !same_row || *expire_at > now {
                    Outcome::no()
                } else if new_expire_at.is_some_and(|at| at <= now) {
                    // Due by now (time passed since the hook answered): the purge reports the key
                    // as expired, and its row goes (so no later write takes it for one whose
                    // event is owed).
                    planned.insert(key.to_vec(), planned_tombstone(now));
                    Outcome {
                        due: true,
                        ..Outcome::no()
                    }
                } else {
                    planned.insert(
                        key.to_vec(),
                        planned_value(value.clone(), *new_expire_at, now),
                    );
                    Outcome::yes()
                }
            }
        };
        results.push(outcome);
    }
    if let (Some(id), false) = (planner.record, planned.is_empty()) {
        let record = MemVersion {
            seq: UNASSIGNED_SEQ,
            ts: now,
            expire_at: Some(now.saturating_add(CALL_RECORD_TTL_MS)),
            value: Some(CallRecord::of(&results).encode()),
        };
        planned.insert(call_record_key(id), alloc::vec![record]);
    }
    Ok(Some((results, planned)))
}

/// How long the record of a call's outcome is kept: far longer than a resent call can take to
/// arrive (a writer's timeout, then a new writer's open).
const CALL_RECORD_TTL_MS: i64 = 10 * 60 * 1000;

/// The rules a write is planned by: its keyspace's TTL policy, and the call id whose outcome it
/// records, if any.
#[derive(Clone, Copy, Default)]
pub(crate) struct Planner<'a> {
    pub policy: TtlPolicy,
    pub record: Option<&'a [u8]>,
}

/// The outcome of a write that was recorded under its call id, written in the same batch as
/// its effect: a call sent again (after its writer went away without answering) gets this
/// instead of running twice. Only writes that changed something are recorded; one that did not
/// can run again, as if it had been sent once, later.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallRecord {
    /// The first op's outcome: put written, delete removed a key, expiry changed...
    pub applied: bool,
    /// The value `get_ex` read, if the call was one.
    pub value: Option<Vec<u8>>,
}

impl CallRecord {
    fn of(results: &[Outcome]) -> Self {
        let first = results.first();
        CallRecord {
            applied: first.is_some_and(|o| o.applied),
            value: first.and_then(|o| o.value.clone()),
        }
    }

    /// `[applied, has value]`, then the value's bytes.
    fn encode(&self) -> Vec<u8> {
        let value = self.value.as_deref();
        let mut out = alloc::vec![u8::from(self.applied), u8::from(value.is_some())];
        out.extend_from_slice(value.unwrap_or_default());
        out
    }

    /// The record in `bytes`, or `None` if they are not one.
    pub(crate) fn decode(bytes: &[u8]) -> Option<Self> {
        match bytes {
            [applied @ (0 | 1), has_value @ (0 | 1), value @ ..] => Some(CallRecord {
                applied: *applied == 1,
                value: (*has_value == 1).then(|| value.to_vec()),
            }),
            _ => None,
        }
    }
}
