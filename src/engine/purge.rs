//! The purge: removing expired keys through the expiry index in O(expired keys).
//!
//! A slice walks the index from its oldest entry and stops at the first entry not yet due (or
//! at the slice's limit). For each entry it reads the key's current row: if the row is still the
//! one the entry was written for, the key expired — it is removed (or rewritten, if the expire
//! hook returns a replacement) and produces exactly one [`ExpiredEntry`]; otherwise the entry is
//! stale (the key was overwritten, deleted or persisted) and only the entry goes. The whole slice
//! is one atomic write, made durable before the slice reports.
//!
//! Afterwards `purged_until` records that every entry expiring before the slice's horizon has
//! been handled, durably: only then may compaction drop such expired rows by itself, so no key
//! expires without its event.

use alloc::collections::BTreeMap;
use alloc::rc::Rc;
use alloc::vec::Vec;

use super::keys::{expiry_index_from, namespace_of, parse_expiry_index_key, user_key};
use super::memtable::MemVersion;
use super::options::{ExpiredEntry, Replacement};
use super::state::Inner;
use super::write::{Outcome, TtlPolicy, WriteOp};
use crate::error::{Error, Result};

/// A function called for each key about to be removed because it expired. Returning a
/// [`Replacement`] rewrites the key instead (RethinkDB's replace function).
pub type ExpireHook = Rc<dyn Fn(&ExpiredEntry) -> Option<Replacement>>;

/// What one purge did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PurgeReport {
    /// Keys removed because they expired (one event each in `expired`).
    pub removed: usize,
    /// Keys the expire hook rewrote instead.
    pub rewritten: usize,
    /// Stale index entries dropped (their key had been overwritten, deleted or persisted).
    pub stale: usize,
    /// The removed keys with their last values.
    pub expired: Vec<ExpiredEntry>,
    /// Replacements the hook returned that were already due; each such key was removed, and is
    /// reported here once.
    pub hook_errors: Vec<Error>,
    /// More entries were due than the limit allowed: call again.
    pub more_due: bool,
}

/// One due index entry and what the purge decided about it.
struct Due {
    op: WriteOp,
    event: Option<ExpiredEntry>,
    rewrites: bool,
}

impl Inner {
    /// Handle up to `limit` due expiry-index entries, oldest first.
    pub(crate) async fn purge_expired(&self, limit: usize) -> Result<PurgeReport> {
        let _guard = self.purge_lock.lock().await;
        let limit = limit.max(1);
        let snapshot = self.read_snapshot()?;
        let read_seq = snapshot.seq;
        let (now, hook) = (self.clock.now(), self.expire_hook.borrow().clone());
        let due_end = expiry_index_from(now.saturating_add(1));
        let entries = self
            .range(
                &expiry_index_from(i64::MIN),
                Some(&due_end),
                false,
                limit,
                read_seq,
                None,
            )
            .await?;
        let mut report = PurgeReport {
            more_due: entries.len() >= limit,
            ..PurgeReport::default()
        };
        let horizon = match entries.last() {
            Some((key, _)) if report.more_due => {
                parse_expiry_index_key(key).map_or(now, |(at, _)| at)
            }
            _ => now.saturating_add(1),
        };
        let mut due = Vec::with_capacity(entries.len());
        let mut rows = BTreeMap::new();
        for (index_key, _) in &entries {
            let Some((expire_at, data_key)) = parse_expiry_index_key(index_key) else {
                continue;
            };
            let row = self.lookup(data_key, read_seq).await?;
            let judged = self.judge(
                expire_at,
                data_key,
                row.as_ref(),
                now,
                hook.as_ref(),
                &mut report,
            );
            due.push(judged);
            rows.insert(data_key.to_vec(), row);
        }
        if !due.is_empty() {
            let ops = due.iter().map(|d| d.op.clone()).collect();
            // The rows just read serve as the write's reads, unless something changed meanwhile
            // (then it reads again): each key is read once, not twice.
            // Durable whatever the database's durability: purged_until may only move once the
            // slice's removals cannot be lost, and its own commit is the only one that counts
            // (a failure after it must not swallow the events).
            let outcomes = self
                .write_ops_prefetched(ops, TtlPolicy::default(), Some((snapshot, rows)), true)
                .await?
                .unwrap_or_default();
            for (d, outcome) in due.into_iter().zip(outcomes) {
                tally(&mut report, d, outcome);
            }
        }
        {
            let mut st = self.state.borrow_mut();
            if horizon > st.manifest.purged_until {
                st.manifest.purged_until = horizon;
            }
        }
        self.find_next_expiry(&due_end, report.more_due.then_some(now))
            .await;
        Ok(report)
    }

    /// Look up when the next index entry is due (from `from` on) and record it, or `due_now`.
    /// A failure leaves the next expiry unknown (so the next maintenance step purges again)
    /// rather than failing a purge whose removals already stand.
    async fn find_next_expiry(&self, from: &[u8], due_now: Option<i64>) {
        let read_seq = {
            let mut st = self.state.borrow_mut();
            // Expiries written from here on are collected while the index is looked at.
            st.next_expiry_known = true;
            st.next_expiry = due_now;
            st.last_seq
        };
        if due_now.is_some() {
            return;
        }
        match self.range(from, None, false, 1, read_seq, None).await {
            Ok(next) => {
                let at = next
                    .first()
                    .and_then(|(k, _)| parse_expiry_index_key(k))
                    .map(|(at, _)| at);
                if let Some(at) = at {
                    self.state.borrow_mut().note_expiry(at);
                }
            }
            Err(_) => {
                let mut st = self.state.borrow_mut();
                st.next_expiry_known = false;
                st.next_expiry = None;
            }
        }
    }

    /// Decide what to do with one due entry, given the key's current `row` (calling the hook).
    fn judge(
        &self,
        expire_at: i64,
        data_key: &[u8],
        row: Option<&MemVersion>,
        now: i64,
        hook: Option<&ExpireHook>,
        report: &mut PurgeReport,
    ) -> Due {
        let stale = |seen_seq| Due {
            op: WriteOp::ResolveExpired {
                key: data_key.to_vec(),
                expire_at,
                seen_seq,
                replacement: None,
            },
            event: None,
            rewrites: false,
        };
        let ns = namespace_of(data_key).unwrap_or(0);
        let (name, policy) = {
            let st = self.state.borrow();
            match (
                st.namespace_name(ns),
                st.policy_of(ns, self.options.default_ttl_ms),
            ) {
                (Some(name), Ok(policy)) => (name, policy),
                // A dropped namespace: its entries go, whatever rows are left behind.
                _ => {
                    return Due {
                        op: WriteOp::DropIndexEntry {
                            key: super::keys::expiry_index_key(expire_at, data_key),
                        },
                        event: None,
                        rewrites: false,
                    }
                }
            }
        };
        let Some(row) = row.filter(|v| v.expire_at == Some(expire_at)) else {
            return stale(0);
        };
        let Some(value) = row.value.clone() else {
            return stale(0);
        };
        let event = ExpiredEntry {
            namespace: name,
            key: user_key(data_key).to_vec(),
            value,
            expire_at,
        };
        let mut replacement = None;
        if let Some(hook) = hook {
            if let Some(r) = hook(&event) {
                let at = policy.expiry(r.ttl, now, None);
                if at.is_some_and(|at| at <= now) {
                    report.hook_errors.push(Error::invalid(alloc::format!(
                        "the expire hook's replacement for key {:?} is already due; the key was removed",
                        alloc::string::String::from_utf8_lossy(&event.key)
                    )));
                } else {
                    replacement = Some((r.value, at));
                }
            }
        }
        let rewrites = replacement.is_some();
        Due {
            op: WriteOp::ResolveExpired {
                key: data_key.to_vec(),
                expire_at,
                seen_seq: row.seq,
                replacement,
            },
            event: Some(event),
            rewrites,
        }
    }
}

fn tally(report: &mut PurgeReport, due: Due, outcome: Outcome) {
    match (outcome.applied, due.event) {
        (true, Some(event)) if due.rewrites => {
            let _ = event;
            report.rewritten += 1;
        }
        (true, Some(event)) => {
            report.removed += 1;
            report.expired.push(event);
        }
        _ => report.stale += 1,
    }
}
