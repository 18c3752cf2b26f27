//! The write path: turning puts, deletes and expiry changes into rows, atomically.
//!
//! Writes that depend on the current row (conditions, `Ttl::Keep`, delete's result, `expire`,
//! `persist`) read it first, possibly awaiting SST pages, then re-check in one synchronous step
//! that no newer write touched those keys meanwhile (optimistic concurrency; they retry if one
//! did). Everything a call writes gets one sequence number, goes into the memtable and into the
//! pending WAL in that same step, so a batch is all-or-nothing for readers and for recovery.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::memtable::MemVersion;
use super::options::{Durability, ExpireCondition, PutCondition, Ttl};
use super::read::is_live;
use super::state::Inner;
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
}

impl WriteOp {
    fn key(&self) -> &[u8] {
        match self {
            WriteOp::Put { key, .. } | WriteOp::Delete { key } | WriteOp::Expire { key, .. } => key,
        }
    }

    fn needs_current(&self) -> bool {
        match self {
            WriteOp::Put { ttl, condition, .. } => {
                *condition != PutCondition::Always || *ttl == Ttl::Keep
            }
            WriteOp::Delete { .. } | WriteOp::Expire { .. } => true,
        }
    }
}

/// Check a `Ttl` given by a caller.
pub(crate) fn validate_ttl(ttl: Ttl) -> Result<()> {
    match ttl {
        Ttl::ExpireAfter(0) => Err(Error::invalid("a TTL must be greater than 0 ms")),
        Ttl::ExpireAfter(ms) if i64::try_from(ms).is_err() => {
            Err(Error::invalid("a TTL must be at most i64::MAX ms"))
        }
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

fn clamp(expire_at: Option<i64>, now: i64, policy: &TtlPolicy) -> Option<i64> {
    match policy.max_ttl_ms {
        Some(max) => {
            let cap = now.saturating_add(i64::try_from(max).unwrap_or(i64::MAX));
            Some(expire_at.map_or(cap, |at| at.min(cap)))
        }
        None => expire_at,
    }
}

fn ms_to_i64(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// The expiry a put gives its key, or `Err` for invalid input.
fn put_expiry(ttl: Ttl, now: i64, current: Option<&MemVersion>, policy: &TtlPolicy) -> Option<i64> {
    let raw = match ttl {
        Ttl::Default => policy
            .default_ttl_ms
            .map(|ms| now.saturating_add(ms_to_i64(ms))),
        Ttl::NoExpiry => None,
        Ttl::ExpireAfter(ms) => Some(now.saturating_add(ms_to_i64(ms))),
        Ttl::ExpireAt(at) => Some(at),
        Ttl::Keep => current.and_then(|c| c.expire_at),
    };
    clamp(raw, now, policy)
}

/// Each op's result, and the row every touched key ends up with.
type Planning = (Vec<bool>, BTreeMap<Vec<u8>, Planned>);

/// What the synchronous step of a write decided.
enum Step {
    /// Finished without writing (`None`: a put condition failed).
    Done(Option<Vec<bool>>),
    /// A newer write or a rollback touched what was read: read again.
    Retry,
    /// The answer rests on a write that is not durable yet: wait for it, then read again.
    Settle,
    /// Written (one seq, memtable and pending WAL); wait on the ticket if durable.
    Written(Vec<bool>, Option<alloc::rc::Rc<super::wal::Ticket>>),
}

/// A row a write decided on (its seq and ts are assigned when it is applied).
struct Planned {
    expire_at: Option<i64>,
    value: Option<Vec<u8>>,
}

impl Inner {
    /// Apply `ops` atomically. `Ok(None)`: a put condition failed and nothing was written;
    /// `Ok(Some(results))`: one boolean per op (put: written; delete: a live key was removed;
    /// expire: the expiry changed).
    pub(crate) async fn write_ops(
        &self,
        ops: Vec<WriteOp>,
        policy: TtlPolicy,
    ) -> Result<Option<Vec<bool>>> {
        let durable = self.options.durability == Durability::Durable;
        let needs_read = ops.iter().any(WriteOp::needs_current);
        let (results, ticket) = loop {
            // Read what the ops depend on, at a fixed sequence number.
            let (read_seq, manifest_version, rollbacks) = {
                let st = self.state.borrow();
                st.check_writable()?;
                (st.last_seq, st.manifest_version, st.wal.rollbacks)
            };
            let mut current: BTreeMap<Vec<u8>, Option<MemVersion>> = BTreeMap::new();
            if needs_read {
                for op in ops.iter().filter(|op| op.needs_current()) {
                    if !current.contains_key(op.key()) {
                        let found = self.lookup(op.key(), read_seq).await?;
                        current.insert(op.key().to_vec(), found);
                    }
                }
            }
            match self.apply_planned(
                &ops,
                &current,
                read_seq,
                manifest_version,
                rollbacks,
                &policy,
                durable,
            )? {
                Step::Done(results) => return Ok(results),
                Step::Retry => continue,
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
    #[allow(
        clippy::too_many_arguments,
        reason = "the read's snapshot travels as plain values"
    )]
    fn apply_planned(
        &self,
        ops: &[WriteOp],
        current: &BTreeMap<Vec<u8>, Option<MemVersion>>,
        read_seq: u64,
        manifest_version: u64,
        rollbacks: u64,
        policy: &TtlPolicy,
        durable: bool,
    ) -> Result<Step> {
        let mut st = self.state.borrow_mut();
        st.check_writable()?;
        let raced = st.manifest_version != manifest_version
            || st.wal.rollbacks != rollbacks
            || current
                .keys()
                .any(|k| st.memtable_latest_seq(k).is_some_and(|s| s > read_seq));
        if raced {
            return Ok(Step::Retry);
        }
        let now = self.clock.now();
        let planning = plan(ops, current, now, policy);
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
        let Some((results, planned)) = planning else {
            return Ok(Step::Done(None));
        };
        let seq = st.last_seq + 1;
        st.last_seq = seq;
        let versions: Vec<(Vec<u8>, MemVersion)> = planned
            .into_iter()
            .map(|(key, p)| {
                let v = MemVersion {
                    seq,
                    ts: now,
                    expire_at: p.expire_at,
                    value: p.value,
                };
                (key, v)
            })
            .collect();
        let rows: Vec<_> = versions.iter().map(|(k, v)| v.row(k)).collect();
        let ticket = st.wal.append(&rows, seq, now, durable)?;
        drop(rows);
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

/// How many times the L0 compaction trigger L0 may reach before writes compact inline.
const L0_STALL_FACTOR: usize = 3;

/// Decide every op's outcome against the current rows (ops see the effects of earlier ops of the
/// same call). `None` if a put condition failed.
fn plan(
    ops: &[WriteOp],
    current: &BTreeMap<Vec<u8>, Option<MemVersion>>,
    now: i64,
    policy: &TtlPolicy,
) -> Option<Planning> {
    let mut planned: BTreeMap<Vec<u8>, Planned> = BTreeMap::new();
    let mut results = Vec::with_capacity(ops.len());
    for op in ops {
        let key = op.key();
        let live: Option<MemVersion> = match planned.get(key) {
            Some(p) => p.value.as_ref().map(|v| MemVersion {
                seq: 0,
                ts: now,
                expire_at: p.expire_at,
                value: Some(v.clone()),
            }),
            None => current.get(key).cloned().flatten(),
        }
        .filter(|v| is_live(v, now));
        match op {
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
                    return None;
                }
                let expire_at = put_expiry(*ttl, now, live.as_ref(), policy);
                let p = if expire_at.is_some_and(|at| at <= now) {
                    // An expiry not in the future leaves the key absent, as Redis does.
                    Planned {
                        expire_at: None,
                        value: None,
                    }
                } else {
                    Planned {
                        expire_at,
                        value: Some(value.clone()),
                    }
                };
                planned.insert(key.to_vec(), p);
                results.push(true);
            }
            WriteOp::Delete { .. } => {
                let existed = live.is_some();
                if existed {
                    planned.insert(
                        key.to_vec(),
                        Planned {
                            expire_at: None,
                            value: None,
                        },
                    );
                }
                results.push(existed);
            }
            WriteOp::Expire {
                target, condition, ..
            } => {
                let Some(row) = live else {
                    results.push(false);
                    continue;
                };
                let new_expire = match target {
                    ExpireTarget::Persist => {
                        if row.expire_at.is_none() {
                            results.push(false);
                            continue;
                        }
                        clamp(None, now, policy)
                    }
                    ExpireTarget::At(at) => {
                        let cur = row.expire_at;
                        let ok = (!condition.nx || cur.is_none())
                            && (!condition.xx || cur.is_some())
                            && (!condition.gt || cur.is_some_and(|c| *at > c))
                            && (!condition.lt || cur.is_none_or(|c| *at < c));
                        if !ok {
                            results.push(false);
                            continue;
                        }
                        clamp(Some(*at), now, policy)
                    }
                };
                if new_expire == row.expire_at {
                    results.push(matches!(target, ExpireTarget::At(_)));
                    continue;
                }
                let p = if new_expire.is_some_and(|at| at <= now) {
                    Planned {
                        expire_at: None,
                        value: None,
                    }
                } else {
                    Planned {
                        expire_at: new_expire,
                        value: row.value,
                    }
                };
                planned.insert(key.to_vec(), p);
                results.push(true);
            }
        }
    }
    Some((results, planned))
}
