//! The maintenance step: one call that does a bounded slice of due background work and says
//! when it is next needed, so a host (a JS timer, a tokio task, a test) can drive the engine
//! without the engine owning a thread or a timer (RethinkDB's expiry loop: sleep until the next
//! expiry, woken early by a write with an earlier one).
//!
//! Owns the `Inner` methods [`maintenance_step`](Inner::maintenance_step),
//! [`next_wakeup`](Inner::next_wakeup) and the private `flush_due_at`; it owns no state of its own:
//! it reads what is due and calls the WAL drain (`group_commit.rs`), flush (`flush.rs`), compaction
//! (`compaction/`) and purge (`purge.rs`).

use alloc::vec::Vec;

use super::options::PurgeReport;
use super::state::{Inner, State};
use crate::error::Result;

/// What one [`maintenance_step`](super::Db::maintenance_step) did and when to call again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Maintenance {
    /// Pending relaxed writes were committed to the WAL.
    pub committed_wal: bool,
    /// A memtable was flushed.
    pub flushed: bool,
    /// What the purge slice did (its `expired` entries are the expire events to deliver).
    pub purge: PurgeReport,
    /// Number of compactions installed: at most one per step, or two where compactions merge on
    /// a thread of their own (one of those finished, and one run at once: an SST dropped whole,
    /// or a merge where no thread could be started).
    pub compactions: usize,
    /// A compaction started merging on a thread of its own
    /// ([`DbOptions::background_compaction`](super::DbOptions::background_compaction)); a later
    /// step installs it (`next_wakeup_ms` says when to look).
    pub compaction_started: bool,
    /// Number of pages of unused SSTs deleted.
    pub pages_reclaimed: usize,
    /// When the next step is due (ms since the Unix epoch; `Some(now)` = more work is ready now),
    /// or `None` if nothing will be due until the next write.
    pub next_wakeup_ms: Option<i64>,
}

impl Maintenance {
    /// Whether the step found nothing to do.
    pub fn is_idle(&self) -> bool {
        !self.committed_wal
            && !self.flushed
            && self.purge == PurgeReport::default()
            && self.compactions == 0
            && !self.compaction_started
            && self.pages_reclaimed == 0
    }
}

/// A memtable holding TTL rows is flushed once it has been filling for this share of the time
/// to its earliest expiry (and holds this share of `memtable_flush_bytes`); see
/// `Inner::flush_due_at`.
const SHORT_TTL_FLUSH_SHARE: usize = 8;

/// While a compaction merges on its own thread, the next wake-up is at most this many ms away,
/// for the step that installs it.
const COMPACTION_JOB_POLL_MS: i64 = 2;

impl Inner {
    pub(crate) async fn maintenance_step(&self) -> Result<Maintenance> {
        let mut report = Maintenance::default();
        let now = self.clock.now()?;
        let (wal_due, flush_due, purge_due) = {
            let st = self.state.borrow();
            st.check_writable()?;
            let wal_due = st
                .wal
                .pending_since()
                .is_some_and(|t| now >= t.saturating_add(self.options.relaxed_commit_interval_ms));
            let flush_due = self.flush_due_at(&st, now).is_some_and(|t| now >= t);
            let purge_due = !st.next_expiry_known || st.next_expiry.is_some_and(|t| t <= now);
            (wal_due, flush_due, purge_due)
        };
        if wal_due {
            self.drain_wal().await?;
            report.committed_wal = true;
        }
        // A compaction merged on its own thread is installed by the first step that finds it
        // done, flush due or not (a step that always flushes would leave it waiting).
        #[cfg(feature = "threads")]
        if self.compaction_job_running() {
            let _guard = self.manifest_lock.lock().await;
            if self.install_compaction_job(false).await? {
                report.compactions += 1;
            }
        }
        if flush_due {
            self.flush().await?;
            report.flushed = true;
        } else {
            // One compaction per step keeps each step bounded; it is planned under the lock so
            // no other flush or compaction can make the plan stale, and none beside a job on its
            // own thread (asked under the lock: one may have started while this step waited).
            let _guard = self.manifest_lock.lock().await;
            let plan = {
                let st = self.state.borrow();
                let idle = !self.compaction_job_running();
                idle.then(|| self.plan_compaction(&st)).flatten()
            };
            if let Some(plan) = plan {
                // Without threads, straight to the merge: no future around it to carry.
                #[cfg(feature = "threads")]
                let ran_now = self.run_or_start_compaction(plan).await?;
                #[cfg(not(feature = "threads"))]
                let ran_now = self.run_compaction(plan).await.map(|_| true)?;
                if ran_now {
                    report.compactions += 1;
                } else {
                    report.compaction_started = true;
                }
            }
        }
        report.pages_reclaimed = self.reclaim_obsolete().await?;
        // Last: the expire events leave with this step's report, so nothing that could fail may
        // run after the purge that produced them (their purge is durable and never repeats).
        if purge_due {
            report.purge = self.purge_expired(self.options.purge_slice_keys).await?;
        }
        report.next_wakeup_ms = self.next_wakeup();
        Ok(report)
    }

    /// When the memtables fall due for a flush (`None`: nothing to flush). Now if a frozen one
    /// waits or the active one holds `memtable_flush_bytes`; else `memtable_max_age_ms` after
    /// the active one's first write; and, for short TTLs, as soon as the active one holds
    /// 1/[`SHORT_TTL_FLUSH_SHARE`] of `memtable_flush_bytes` and has been filling for
    /// 1/`SHORT_TTL_FLUSH_SHARE` of the time from its first write to its earliest expiry. Each
    /// SST then covers a short stretch of expiry times, so it leaves by a whole drop soon after
    /// its first rows expire: with a 5 s TTL an SST spans about 0.6 s of writes, not the 2 s a
    /// full memtable takes at 10,000 puts/s, and that gap is stored bytes the churn holds on to.
    fn flush_due_at(&self, st: &State, now: i64) -> Option<i64> {
        let active = st.active.borrow();
        if !st.frozen.is_empty() || active.bytes() >= self.options.memtable_flush_bytes {
            return Some(now);
        }
        let first = active.first_write_ts()?;
        let by_age = first.saturating_add(self.options.memtable_max_age_ms);
        let share = SHORT_TTL_FLUSH_SHARE;
        let by_expiry = active
            .min_expire_at()
            .filter(|_| active.bytes() >= self.options.memtable_flush_bytes / share)
            .map(|min| first.saturating_add(min.saturating_sub(first).max(0) / share as i64));
        Some(by_expiry.map_or(by_age, |t| t.min(by_age)))
    }

    /// The earliest time background work becomes due.
    pub(crate) fn next_wakeup(&self) -> Option<i64> {
        let st = self.state.borrow();
        // A clock reading that is no plausible time leaves the wake-up to the last good one.
        let now = self
            .clock
            .now()
            .unwrap_or_else(|_| self.clock.last_issued());
        let mut candidates: Vec<i64> = Vec::new();
        candidates.extend(
            st.wal
                .pending_since()
                .map(|t| t.saturating_add(self.options.relaxed_commit_interval_ms)),
        );
        candidates.extend(self.flush_due_at(&st, now));
        if st.next_expiry_known {
            candidates.extend(st.next_expiry);
        } else {
            candidates.push(now);
        }
        if self.compaction_job_running() {
            // Not its own plan again: the step that finds the job done installs it.
            candidates.push(now.saturating_add(COMPACTION_JOB_POLL_MS));
            if self.any_reclaimable(&st) {
                candidates.push(now);
            }
        } else if self.compaction_due(&st) || self.any_reclaimable(&st) {
            candidates.push(now);
        }
        candidates.into_iter().min().map(|t| t.max(now))
    }
}
