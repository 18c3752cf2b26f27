//! The write-ahead log and group commit.
//!
//! A write encodes its batch into the pending buffer in the same synchronous step that applies it
//! to the memtable. Durable writers then wait on a [`Ticket`]. Store commits pass one at a time
//! through the engine's commit gate (`Inner::commit_gate`, shared with flush and compaction, so a
//! WAL commit never races a manifest change). Whoever gets through the gate with its ticket still
//! open becomes the leader: it takes *everything* pending, writes it as one WAL page in one store
//! commit, and resolves every ticket of that group. A burst of concurrent durable writes therefore
//! costs a few commits, not one each.
//!
//! If a WAL commit fails (or its future is dropped before it finishes), every write not yet durable
//! is rolled back out of the memtable and its ticket gets the error: the visible state returns to
//! the last durable one, nothing half-written.

use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::RefCell;

use super::state::Inner;
use crate::error::Result;
use crate::format::{encode_wal_batch, encode_wal_page, RowRef};
use crate::store::{Commit, PageId};

/// The largest pending-buffer capacity kept for the next group commit after one is written.
const PENDING_CAPACITY_KEPT: usize = 64 * 1024;

/// The outcome of one durable write, filled in by the leader of its group commit.
#[derive(Default)]
pub(crate) struct Ticket {
    result: RefCell<Option<Result<()>>>,
}

impl Ticket {
    fn resolve(&self, result: Result<()>) {
        *self.result.borrow_mut() = Some(result);
    }

    fn outcome(&self) -> Option<Result<()>> {
        self.result.borrow().clone()
    }
}

/// The WAL's bookkeeping inside the engine state.
#[derive(Default)]
pub(crate) struct WalState {
    /// Encoded batches not yet committed.
    pending: Vec<u8>,
    pending_batches: u32,
    pending_max_seq: u64,
    /// When the oldest pending batch was written (relaxed writes must be committed soon after).
    pending_since: Option<i64>,
    pending_tickets: Vec<Rc<Ticket>>,
    /// Every write with a seq up to this is durable.
    pub durable_seq: u64,
    /// The number the next WAL page gets.
    pub next_segment: u64,
    /// Live WAL pages, oldest first.
    pub segments: WalSegments,
    /// Number of WAL commits made since open.
    pub commits: u64,
    /// Bumped every time writes are rolled back, so a write that read a rolled-back version
    /// notices and plans again.
    pub rollbacks: u64,
}

/// One live WAL page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WalSegment {
    /// Its number (the page is `PageId::wal(segment)`).
    pub segment: u64,
    /// The highest seq among its rows.
    pub max_seq: u64,
    /// Its size.
    pub bytes: usize,
}

/// The live WAL pages in segment order, a sorted list: segments are added in order (at the end)
/// and a flush removes them in one pass.
#[derive(Clone, Debug, Default)]
pub(crate) struct WalSegments(Vec<WalSegment>);

impl WalSegments {
    /// Add (or replace) segment `segment`, keeping the order.
    pub(crate) fn insert(&mut self, segment: u64, max_seq: u64, bytes: usize) {
        let entry = WalSegment {
            segment,
            max_seq,
            bytes,
        };
        match self.0.binary_search_by_key(&segment, |s| s.segment) {
            Ok(i) => {
                if let Some(slot) = self.0.get_mut(i) {
                    *slot = entry;
                }
            }
            Err(i) => self.0.insert(i, entry),
        }
    }

    /// Forget the segments in `deleted` (ascending; their pages were deleted), in one pass.
    pub(crate) fn remove_all(&mut self, deleted: &[u64]) {
        self.0
            .retain(|s| deleted.binary_search(&s.segment).is_err());
    }

    /// The segments, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &WalSegment> {
        self.0.iter()
    }

    /// Bytes of all of them.
    pub(crate) fn bytes(&self) -> usize {
        self.0.iter().map(|s| s.bytes).sum()
    }
}

impl WalState {
    /// The WAL as recovery found it: everything up to `durable_seq` is durable, the live pages are
    /// `segments`, and the next page gets number `next_segment`.
    pub(crate) fn recovered(durable_seq: u64, next_segment: u64, segments: WalSegments) -> Self {
        WalState {
            durable_seq,
            next_segment,
            segments,
            ..WalState::default()
        }
    }

    /// Append one batch (the rows of one write, sharing `seq`). Returns a ticket to wait on when
    /// the write is durable.
    pub(crate) fn append(
        &mut self,
        rows: &[RowRef<'_>],
        seq: u64,
        now: i64,
        durable: bool,
    ) -> Result<Option<Rc<Ticket>>> {
        encode_wal_batch(&mut self.pending, rows)?;
        self.pending_batches += 1;
        self.pending_max_seq = self.pending_max_seq.max(seq);
        self.pending_since.get_or_insert(now);
        Ok(if durable {
            let t = Rc::new(Ticket::default());
            self.pending_tickets.push(t.clone());
            Some(t)
        } else {
            None
        })
    }

    /// Whether anything is waiting to be committed.
    pub(crate) fn has_pending(&self) -> bool {
        self.pending_batches > 0
    }

    /// When the oldest pending batch was written.
    pub(crate) fn pending_since(&self) -> Option<i64> {
        self.pending_since
    }

    /// Bytes waiting plus bytes in live WAL pages.
    pub(crate) fn bytes(&self) -> usize {
        self.pending.len() + self.segments.bytes()
    }

    /// Forget everything pending (it was rolled back), failing its tickets with `error`.
    fn fail_pending(&mut self, error: &crate::Error) {
        self.pending.clear();
        self.pending_batches = 0;
        self.pending_since = None;
        for t in self.pending_tickets.drain(..) {
            t.resolve(Err(error.clone()));
        }
    }
}

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

    /// Commit everything pending in the WAL.
    pub(crate) async fn drain_wal(&self) -> Result<()> {
        loop {
            if !self.state.borrow().wal.has_pending() {
                return Ok(());
            }
            let _gate = self.commit_gate.lock().await;
            self.commit_wal_group_gated().await?;
        }
    }

    /// Lead one group commit: everything pending becomes one WAL page in one store commit.
    /// The caller holds the commit gate.
    async fn commit_wal_group_gated(&self) -> Result<()> {
        let (commit, segment, max_seq, tickets, bytes) = {
            let mut st = self.state.borrow_mut();
            let wal = &mut st.wal;
            if !wal.has_pending() {
                return Ok(());
            }
            let page = encode_wal_page(&wal.pending, wal.pending_batches);
            // Reuse a small buffer; give a large one back, or one burst of writes would hold its
            // size in memory for good.
            if wal.pending.capacity() > PENDING_CAPACITY_KEPT {
                wal.pending = Vec::new();
            } else {
                wal.pending.clear();
            }
            wal.pending_batches = 0;
            wal.pending_since = None;
            let tickets = core::mem::take(&mut wal.pending_tickets);
            let segment = wal.next_segment;
            wal.next_segment += 1;
            let max_seq = wal.pending_max_seq;
            let bytes = page.len();
            let commit = Commit {
                expected_manifest_version: st.manifest_version,
                manifest: None,
                puts: alloc::vec![(PageId::wal(segment), page)],
                deletes: Vec::new(),
            };
            (commit, segment, max_seq, tickets, bytes)
        };
        let mut abandoned = AbandonedGroup {
            inner: self,
            tickets: Some(tickets),
        };
        let result = self.store.commit(commit).await;
        let Some(tickets) = abandoned.tickets.take() else {
            return result;
        };
        {
            let mut st = self.state.borrow_mut();
            match &result {
                Ok(()) => {
                    st.wal.durable_seq = st.wal.durable_seq.max(max_seq);
                    st.wal.segments.insert(segment, max_seq, bytes);
                    st.wal.commits += 1;
                    for t in &tickets {
                        t.resolve(Ok(()));
                    }
                }
                Err(e) => {
                    for t in &tickets {
                        t.resolve(Err(e.clone()));
                    }
                    self.roll_back(&mut st, e);
                }
            }
        }
        result
    }

    /// Back to the last durable state: nothing of a failed group, nor of anything queued on top
    /// of it, stays visible; every waiting writer gets `error`.
    fn roll_back(&self, st: &mut super::state::State, error: &crate::Error) {
        let durable = st.wal.durable_seq;
        st.active.borrow_mut().rollback_after(durable);
        st.wal.fail_pending(error);
        st.wal.rollbacks += 1;
        st.note_failure(error);
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
            let e = crate::Error::storage("a WAL commit was abandoned before it finished");
            for t in &tickets {
                t.resolve(Err(e.clone()));
            }
            if let Ok(mut st) = self.inner.state.try_borrow_mut() {
                self.inner.roll_back(&mut st, &e);
            }
        }
    }
}
