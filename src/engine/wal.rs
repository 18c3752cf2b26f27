//! The write-ahead log's bookkeeping: [`WalState`] (the pending buffer of encoded batches not yet
//! committed, the tickets of the durable writers waiting on them, and the live WAL pages), with
//! [`Ticket`] and [`WalSegments`]. Plain data below the engine state, which holds one `WalState`;
//! of the store it knows only the WAL pages' ids.
//!
//! A write appends its batch here ([`WalState::append`]) in the same synchronous step that
//! applies it to the memtable (`write::Inner::apply_planned`). Committing what is pending, one
//! group at a time through the commit gate, and rolling back a group whose commit failed, is
//! `group_commit.rs`'s work ([`WalState::take_group`] and [`WalState::fail_pending`] are its
//! handles on this state).

use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::RefCell;

use crate::error::{Error, Result};
use crate::format::{encode_wal_batch, encode_wal_page, RowRef};
use crate::store::PageId;

/// The largest pending-buffer capacity kept for the next group commit after one is written.
const PENDING_CAPACITY_KEPT: usize = 64 * 1024;

/// The outcome of one durable write, filled in by the leader of its group commit.
#[derive(Default)]
pub(crate) struct Ticket {
    result: RefCell<Option<Result<()>>>,
}

impl Ticket {
    /// Fill in the outcome of the write (the group commit's leader does).
    pub(crate) fn resolve(&self, result: Result<()>) {
        *self.result.borrow_mut() = Some(result);
    }

    /// The write's outcome, once its group commit finished.
    pub(crate) fn outcome(&self) -> Option<Result<()>> {
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
    /// Whether a pending batch is a relaxed write: one no writer waits on, so no caller hears if
    /// it is lost ([`fail_pending`](Self::fail_pending)).
    pending_unawaited: bool,
    /// The group taken for a commit whose outcome is not known yet.
    committing: Option<InFlight>,
    /// The segments of WAL pages whose commit failed or was given up on, oldest first. Such a
    /// page may have landed (a store's error says it did not only when it is `Fenced` or
    /// `QuotaExceeded`), holding writes that were rolled back here: later writes were planned
    /// without them, so recovery must never replay it beside one of those. The next store commit
    /// of any kind deletes them ([`settle_with`](Self::settle_with), `Inner::store_commit`):
    /// once it lands, they are gone, and before it, no write made after them is durable.
    unsettled: Vec<u64>,
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

/// A group taken for a commit whose outcome is not known yet.
#[derive(Clone, Copy)]
struct InFlight {
    /// The segment its page is written as.
    segment: u64,
    /// Its highest seq: if its commit lands and a later one fails, the rollback goes back to it.
    max_seq: u64,
    /// Whether one of its batches is a relaxed write (as [`WalState`]'s `pending_unawaited`).
    unawaited: bool,
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
        self.pending_unawaited |= !durable;
        Ok(if durable {
            let t = Rc::new(Ticket::default());
            self.pending_tickets.push(t.clone());
            Some(t)
        } else {
            None
        })
    }

    /// The highest seq of a group being committed (taken, its outcome not known yet): a point
    /// the durable state may move to, where a later rollback would then stop.
    pub(crate) fn committing(&self) -> Option<u64> {
        self.committing.map(|group| group.max_seq)
    }

    /// Add the pages of the [`unsettled`](Self::unsettled) segments to `deletes` (a commit's),
    /// returning how many: the count to give [`settled`](Self::settled) once it landed.
    pub(crate) fn settle_with(&self, deletes: &mut Vec<PageId>) -> usize {
        deletes.extend(self.unsettled.iter().map(|&segment| PageId::wal(segment)));
        self.unsettled.len()
    }

    /// Record that a store commit landed that deleted the first `count` unsettled pages (as
    /// [`settle_with`](Self::settle_with) counted them). None joins the list while a commit is in
    /// flight (a failed group joins once its own commit returned, and the commit gate lets one
    /// through at a time), so they are all of them; were there more, all would be kept, to be
    /// deleted again (deleting a page that is gone is no error).
    pub(crate) fn settled(&mut self, count: usize) {
        if count == self.unsettled.len() {
            self.unsettled.clear();
        }
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

    /// Take everything pending as one WAL page (`None` if nothing is pending): the next group
    /// commit's content, numbered with the next segment.
    pub(crate) fn take_group(&mut self) -> Option<PendingGroup> {
        if !self.has_pending() {
            return None;
        }
        let page = encode_wal_page(&self.pending, self.pending_batches);
        // Reuse a small buffer; give a large one back, or one burst of writes would hold its
        // size in memory for good.
        if self.pending.capacity() > PENDING_CAPACITY_KEPT {
            self.pending = Vec::new();
        } else {
            self.pending.clear();
        }
        self.pending_batches = 0;
        self.pending_since = None;
        let segment = self.next_segment;
        self.next_segment += 1;
        self.committing = Some(InFlight {
            segment,
            max_seq: self.pending_max_seq,
            unawaited: core::mem::take(&mut self.pending_unawaited),
        });
        Some(PendingGroup {
            page,
            segment,
            max_seq: self.pending_max_seq,
            tickets: core::mem::take(&mut self.pending_tickets),
        })
    }

    /// Record that `group`'s page was committed: its writes are durable.
    pub(crate) fn group_committed(&mut self, segment: u64, max_seq: u64, bytes: usize) {
        self.committing = None;
        self.durable_seq = self.durable_seq.max(max_seq);
        self.segments.insert(segment, max_seq, bytes);
        self.commits += 1;
    }

    /// Forget everything pending and the group being committed (they were rolled back), failing
    /// their tickets with `error`. Returns whether a relaxed write was among them: lost with no
    /// caller told.
    pub(crate) fn fail_pending(&mut self, error: &Error) -> bool {
        let in_flight = self.committing.take();
        self.unsettled.extend(in_flight.map(|group| group.segment));
        let in_flight_unawaited = in_flight.is_some_and(|group| group.unawaited);
        let unawaited = core::mem::take(&mut self.pending_unawaited) || in_flight_unawaited;
        self.pending.clear();
        self.pending_batches = 0;
        self.pending_since = None;
        for t in self.pending_tickets.drain(..) {
            t.resolve(Err(error.clone()));
        }
        unawaited
    }
}

/// What one group commit writes: everything that was pending, as one WAL page.
pub(crate) struct PendingGroup {
    /// The encoded page (`PageId::wal(segment)`).
    pub page: Vec<u8>,
    pub segment: u64,
    /// The highest seq among its rows.
    pub max_seq: u64,
    /// The durable writers waiting on it.
    pub tickets: Vec<Rc<Ticket>>,
}
