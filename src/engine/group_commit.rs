//! Group commit: making pending WAL batches durable, and rolling them back when that fails.
//!
//! Owns the `Inner` methods [`wait_durable`](Inner::wait_durable), [`drain_wal`](Inner::drain_wal)
//! and the private `commit_wal_group_gated` / `roll_back`; of the state, it moves `State::wal`
//! (through [`WalState::take_group`](super::wal::WalState::take_group) and friends) and, on a
//! rollback, removes the non-durable versions from `State::active` and empties `State::rows`.
//!
//! Durable writers wait on a [`Ticket`] (given by `WalState::append`, see the write path in
//! `write/mod.rs`). Store commits pass one at a time through the engine's commit gate
//! (`Inner::commit_gate`, shared with flush and compaction, so a WAL commit never races a manifest
//! change). Whoever gets through the gate with its ticket still open becomes the leader: it takes
//! *everything* pending, writes it as one WAL page in one store commit, and resolves every ticket
//! of that group. A burst of concurrent durable writes therefore costs a few commits, not one
//! each. This is the last step of a write: the store commit is [`PageStore::commit`].
//!
//! If a WAL commit fails (or its future is dropped before it finishes), every write not yet durable
//! is rolled back out of the memtable and its ticket gets the error: the visible state returns to
//! the last durable one, nothing half-written. If a relaxed write (no ticket: no caller waits on
//! it) is among those rolled back, every later write, and the close, also fail with the error
//! (`State::halted`).
//!
//! [`PageStore::commit`]: crate::store::PageStore::commit

use alloc::rc::Rc;
use alloc::vec::Vec;

use super::state::{Inner, State};
use super::wal::Ticket;
use crate::error::{Error, Result};
use crate::store::{Commit, PageId};

impl Inner {
    /// Wait until the write behind `ticket` is durable (leading group commits as needed).
    pub(crate) async fn wait_durable(&self, ticket: &Ticket) -> Result<()> {
        loop {
            if let Some(result) = ticket.outcome() {
                return result;
            }
            let _gate = self.commit_gate.lock().await;
            if let Some(result) = ticket.outcome() {
                return result;
            }
            // The outcome lands in the ticket either way.
            let _ = self.commit_wal_group_gated().await;
        }
    }

    /// Commit everything pending in the WAL, after the commit in flight, if any, is done (its
    /// failure rolls back what the caller would otherwise go on to rest on: a flush freezing the
    /// memtable, a purge judging by the rows).
    pub(crate) async fn drain_wal(&self) -> Result<()> {
        loop {
            let idle = {
                let st = self.state.borrow();
                !st.wal.has_pending() && st.wal.committing().is_none()
            };
            if idle {
                return Ok(());
            }
            let _gate = self.commit_gate.lock().await;
            // Through the gate, no commit is in flight any more.
            if !self.state.borrow().wal.has_pending() {
                return Ok(());
            }
            self.commit_wal_group_gated().await?;
        }
    }

    /// Lead one group commit: everything pending becomes one WAL page in one store commit.
    /// The caller holds the commit gate.
    async fn commit_wal_group_gated(&self) -> Result<()> {
        let (commit, segment, max_seq, tickets, bytes) = {
            let mut st = self.state.borrow_mut();
            let Some(group) = st.wal.take_group() else {
                return Ok(());
            };
            let bytes = group.page.len();
            let commit = Commit {
                expected_manifest_version: st.manifest_version,
                manifest: None,
                puts: alloc::vec![(PageId::wal(group.segment), group.page)],
                deletes: Vec::new(),
            };
            (commit, group.segment, group.max_seq, group.tickets, bytes)
        };
        let mut abandoned = AbandonedGroup {
            inner: self,
            tickets: Some(tickets),
        };
        let result = self.store_commit(commit).await;
        let Some(tickets) = abandoned.tickets.take() else {
            return result;
        };
        {
            let mut st = self.state.borrow_mut();
            match &result {
                Ok(()) => {
                    st.wal.group_committed(segment, max_seq, bytes);
                    for t in &tickets {
                        t.resolve(Ok(()));
                    }
                }
                Err(e) => {
                    for t in &tickets {
                        t.resolve(Err(e.clone()));
                    }
                    roll_back(&mut st, e);
                }
            }
        }
        result
    }
}

/// Back to the last durable state: nothing of a failed group, nor of anything queued on top
/// of it, stays visible; every waiting writer gets `error`. If a relaxed write was among them,
/// it was acknowledged and is now lost, and no caller hears of it (a maintenance step's error
/// reaches no app): later writes landing would keep them and lose it, which no crash does, so
/// every later write, and the close, fail with `error` until a reopen, which recovers what is
/// durable ([`State::note_failure`]). Durable writers were each told.
fn roll_back(st: &mut State, error: &Error) {
    let durable = st.wal.durable_seq;
    st.active.borrow_mut().rollback_after(durable);
    st.rows.clear();
    let unawaited = st.wal.fail_pending(error);
    st.wal.rollbacks += 1;
    if unawaited {
        // What the later writes and the close answer says what happened and what to do.
        let lost = error
            .clone()
            .context("relaxed writes were lost; reopen the database");
        st.note_failure(&lost, true);
    } else {
        st.note_failure(error, false);
    }
}

/// Fails a group whose commit future was dropped before it finished (a caller gave up on it):
/// whether the commit landed is unknown, so its writers get an error and the memtable goes back
/// to the durable state, exactly as for a crash. Defused once the commit's outcome is known.
struct AbandonedGroup<'a> {
    inner: &'a Inner,
    tickets: Option<Vec<Rc<Ticket>>>,
}

impl Drop for AbandonedGroup<'_> {
    fn drop(&mut self) {
        if let Some(tickets) = self.tickets.take() {
            let e = Error::storage("a WAL commit was abandoned before it finished");
            for t in &tickets {
                t.resolve(Err(e.clone()));
            }
            if let Ok(mut st) = self.inner.state.try_borrow_mut() {
                roll_back(&mut st, &e);
            }
        }
    }
}
