//! The engine's shared state: what one open database holds between calls.
//!
//! [`Inner`] is shared by every clone of a [`Db`](super::Db) handle and every in-flight future.
//! Its mutable part, [`State`], lives in a `RefCell` that is only ever borrowed between awaits,
//! never across one, so concurrent calls on one database are safe in a single-threaded executor.
//!
//! This file defines the state and the few `State` methods every part uses (the checks, the
//! pins, the expiry bookkeeping). `Inner`'s methods live with the part of the state they work
//! on, one `impl Inner` block per file, each file's doc naming what it owns:
//!
//! - `recovery.rs`: `open`, which builds the state;
//! - `db/mod.rs`: `Db::close`: `closing`, `closed`, then [`State::release_data`] and the `Inner`
//!   fields `store`, `expire_hook` and `reclaim_listener` emptied;
//! - `write/mod.rs`: `write_ops`, `write_ops_prefetched`, `read_snapshot`; hands out `last_seq`,
//!   inserts into `active` (and the new versions of keys `rows` holds), appends to the pending `wal`;
//! - `group_commit.rs`: `wait_durable`, `drain_wal`; makes `wal` durable, or rolls `active` back
//!   (and empties `rows`);
//! - `commit.rs`: `commit_gated`, `commit_manifest_change`, `persist_clock_seed`; `manifest`,
//!   `manifest_version`, `halted`;
//! - `flush.rs`: `flush`, `flush_locked`; `active` into `frozen` into L0 of `version`, and the
//!   WAL segments that makes redundant;
//! - `compaction/plan.rs`: `plan_compaction`, `plan_full_step`, `compaction_due`; decides,
//!   changes nothing but the kept answer `none_due`;
//! - `compaction/run.rs`: `compact`, `run_compaction`; `version`, and `obsolete` (adds; a full
//!   compaction also deletes between its steps);
//! - `compaction/job.rs` (`threads`): `start_compaction_job`, `install_compaction_job`; the
//!   `Inner` field `compaction_job`, and `ssts_reserved_until`;
//! - `compaction/page_gc.rs`: `reclaimable`, `forget_reclaimed`, `reclaim_obsolete`; `obsolete`
//!   (deletes) and `cache`;
//! - `purge.rs`: `purge_expired`, `find_next_expiry`; the manifest's `purged_until`,
//!   `next_expiry*`, `purge_resume`, `purge_rows_walked`;
//! - `reclaim.rs`: `reclaim_if_full`, `reclaim`, `take_unreported`; the
//!   `Inner` fields `reclaim_lock`, `reclaims`, `reclaim_listener`, `unreported`;
//! - `namespace.rs`: `ensure_namespace`, `drop_namespace`, `clear_keyspace`, `namespaces`; the
//!   manifest's namespaces;
//! - `read.rs`: `load_page`, `lookup`, `lookup_newest`; `cache` and `rows` (fills);
//! - `sst_probe.rs`: `shared_page`, `probe_at_once`; reads only (an SST handle keeps the pages
//!   and the point index it builds);
//! - `scan.rs`: `scan_at`, `range`; read pins in `snapshots`;
//! - `maintenance.rs`: `maintenance_step`, `next_wakeup`; no state of its own;
//! - `stats.rs`: `stats`; reads only.

use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use super::lock::AsyncLock;
use super::memtable::Memtable;
use super::options::{DbOptions, ExpireHook, PurgeReport, ReclaimListener};
use super::page_cache::PageCache;
use super::row_cache::RowCache;
use super::version::{SstHandle, Version};
use super::wal::WalState;
use crate::clock::MonotonicClock;
use crate::error::{Error, Result};
use crate::format::Manifest;
use crate::store::{Commit, PageStore};

/// A memtable that no longer takes writes and waits to be flushed.
pub(crate) struct Frozen {
    pub table: Rc<RefCell<Memtable>>,
    /// Every write with a seq up to this is in this memtable or older data.
    pub max_seq: u64,
}

/// Everything mutable about an open database.
pub(crate) struct State {
    /// `Db::close` finished (set by `db/mod.rs`).
    pub closed: bool,
    /// `close()` has begun: no new writes are accepted, reads still are.
    pub closing: bool,
    /// Set once a commit found another writer in charge, a rollback took relaxed writes (lost,
    /// and no caller heard), or a manifest commit's outcome is unknown; every later write fails
    /// with it, and so does the close ([`State::note_failure`], by `commit.rs` and
    /// `group_commit.rs`).
    pub halted: Option<Error>,
    /// The highest sequence number handed out (by the write path, `write/mod.rs`).
    pub last_seq: u64,
    /// The manifest as last committed, and the version the store holds it under: changed only
    /// by commits through `commit.rs` (`install_manifest`), except `purged_until`, which the
    /// purge also moves in memory when it has nothing to commit.
    pub manifest: Manifest,
    pub manifest_version: u64,
    /// The SSTs by level (replaced by `flush.rs` and `compaction/run.rs`).
    pub version: Rc<Version>,
    /// The memtable taking writes (`write/mod.rs` inserts, `group_commit.rs` rolls back,
    /// `flush.rs` freezes it).
    pub active: Rc<RefCell<Memtable>>,
    /// Memtables waiting to be flushed, oldest first (`flush.rs`).
    pub frozen: Vec<Frozen>,
    /// The WAL: batches are appended by `write/mod.rs`, committed or rolled back by
    /// `group_commit.rs`, and their segments deleted by `flush.rs`.
    pub wal: WalState,
    /// Decoded data pages (`read.rs` fills it; `compaction/page_gc.rs` drops deleted pages).
    pub cache: PageCache,
    /// The newest versions of keys read lately (`read.rs` fills it, `write/mod.rs` hands it the
    /// versions it writes, `group_commit.rs` empties it on a rollback).
    pub rows: RowCache,
    /// SSTs replaced by compaction whose pages are deleted once nobody holds them
    /// (`compaction/run.rs` adds, `compaction/page_gc.rs` deletes).
    pub obsolete: Vec<Rc<SstHandle>>,
    /// Pinned read points (snapshots and running scans), ordered by (seq, time): a few at a
    /// time, so a sorted list ([`State::pin`], [`ReadPin`]).
    pub snapshots: Vec<PinnedRead>,
    /// That no compaction was due, and until when that holds unless the manifest, the purge
    /// horizon or the pins change (`compaction/plan.rs`, `Inner::compaction_due`).
    pub none_due: Cell<Option<crate::engine::compaction::NoneDue>>,
    /// The plans `Inner::compaction_due` made (tests count them).
    #[cfg(test)]
    pub none_due_plans: Cell<u64>,
    /// The earliest expiry that may be due (`None`: none known); lowered by writes with an
    /// earlier expiry ([`State::note_expiry`]), recomputed by the purge (`purge.rs`).
    pub next_expiry: Option<i64>,
    /// Whether `next_expiry` is known (it is not right after open, until a purge looked).
    pub next_expiry_known: bool,
    /// Lookups of the next expiry in flight (a purge's, or a first write's): `next_expiry` holds
    /// only what writes noted meanwhile, and says nothing yet of the entries being looked at.
    pub next_expiry_lookups: u32,
    /// The last expiry-index entry a purge slice removed inside the millisecond `purged_until`
    /// names: every entry of that millisecond up to it is gone, so the next slice starts after
    /// it instead of walking past their tombstones (see `purge`). In memory only: after a reopen
    /// the first slice walks them once.
    pub purge_resume: Option<Vec<u8>>,
    /// Expiry-index rows the purges walked since open (see [`Stats`](super::Stats)).
    pub purge_rows_walked: u64,
    /// SST ids below this are taken by a compaction merging on its own thread, which numbered
    /// its outputs when it started (`compaction/job.rs`); the manifest's `next_sst_id` catches
    /// up when the job is installed. Kept apart from the manifest, which a commit in flight
    /// replaces with its own copy. See [`State::next_sst_id`].
    #[cfg(feature = "threads")]
    pub ssts_reserved_until: u64,
}

impl State {
    /// The id the next SST written gets: the manifest's next one, past any reserved.
    pub(crate) fn next_sst_id(&self) -> u64 {
        #[cfg(feature = "threads")]
        return self.manifest.next_sst_id.max(self.ssts_reserved_until);
        #[cfg(not(feature = "threads"))]
        self.manifest.next_sst_id
    }
}

/// A read point held by a snapshot or a running scan, and how many hold it.
#[derive(Debug)]
pub(crate) struct PinnedRead {
    pub seq: u64,
    pub time: i64,
    pub count: usize,
}

impl State {
    /// Fail if the database may not be used for writing.
    pub(crate) fn check_writable(&self) -> Result<()> {
        self.check_open()?;
        if self.closing {
            return Err(Error::closed());
        }
        match &self.halted {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Let go of the data a closed handle would otherwise keep for as long as the app keeps the
    /// handle (in JavaScript, until a collector frees it, if ever): the memtables, the SSTs'
    /// handles (their metadata, point indexes and shared pages), the page and row caches and
    /// the SSTs awaiting deletion. The store keeps all a reopen needs (`Db::close` drained the
    /// WAL into it), and every call on a closed handle fails `Closed` before it looks at any of
    /// this; a read already under way goes on with the memtables and version it took.
    pub(crate) fn release_data(&mut self) {
        debug_assert!(self.closed, "only a closed database lets go of its data");
        self.active = Rc::default();
        self.frozen = Vec::new();
        self.version = Rc::default();
        // Caches of no room (and `load_page` keeps no page once closed): a read that was under
        // way at the close fills nothing anew.
        self.cache = PageCache::new(0);
        self.rows = RowCache::new(0);
        self.obsolete = Vec::new();
        self.purge_resume = None;
    }

    /// Fail if the database was closed.
    pub(crate) fn check_open(&self) -> Result<()> {
        if self.closed {
            Err(Error::closed())
        } else {
            Ok(())
        }
    }

    /// Keep every version visible at `seq` (in memtables and through compaction) until
    /// [`State::unpin`]; scans and snapshots pin their read point and the time they read at.
    pub(crate) fn pin(&mut self, seq: u64, time: i64) {
        match self.find_pin(seq, time) {
            Ok(i) => {
                if let Some(pin) = self.snapshots.get_mut(i) {
                    pin.count += 1;
                }
            }
            Err(i) => self.snapshots.insert(
                i,
                PinnedRead {
                    seq,
                    time,
                    count: 1,
                },
            ),
        }
    }

    /// Release one [`State::pin`] of `(seq, time)`.
    pub(crate) fn unpin(&mut self, seq: u64, time: i64) {
        if let Ok(i) = self.find_pin(seq, time) {
            if let Some(pin) = self.snapshots.get_mut(i) {
                pin.count -= 1;
                if pin.count == 0 {
                    self.snapshots.remove(i);
                }
            }
        }
    }

    /// Where `(seq, time)` is in `snapshots`, or where it would go.
    fn find_pin(&self, seq: u64, time: i64) -> Result<usize, usize> {
        self.snapshots
            .binary_search_by(|p| (p.seq, p.time).cmp(&(seq, time)))
    }

    /// Whether some pinned reader at or after `seq` reads at a time before `t` (and so may
    /// still see rows of that seq that expire at `t`).
    pub(crate) fn pinned_before(&self, seq: u64, t: i64) -> bool {
        self.newest_pin_before(t)
            .is_some_and(|newest| newest >= seq)
    }

    /// The newest seq a pinned reader reading at a time before `t` holds: what
    /// [`pinned_before`](Self::pinned_before) asks of the pins at `t`, whatever the seq.
    pub(crate) fn newest_pin_before(&self, t: i64) -> Option<u64> {
        // Ordered by (seq, time): the last that reads before `t` has the newest seq.
        self.snapshots
            .iter()
            .rev()
            .find(|p| p.time < t)
            .map(|p| p.seq)
    }

    /// Whether some expiry-index entry may be due at `now` and not purged yet.
    pub(crate) fn expiry_may_be_due(&self, now: i64) -> bool {
        !self.next_expiry_known
            || self.next_expiry_lookups > 0
            || self.next_expiry.is_some_and(|t| t <= now)
    }

    /// Note a write of an expiry at `t` (the next wake-up may have to come earlier).
    pub(crate) fn note_expiry(&mut self, t: i64) {
        if self.next_expiry_known {
            self.next_expiry = Some(self.next_expiry.map_or(t, |n| n.min(t)));
        }
    }

    /// The sequence numbers of live snapshots, ascending.
    pub(crate) fn snapshot_seqs(&self) -> Vec<u64> {
        let mut seqs: Vec<u64> = self.snapshots.iter().map(|p| p.seq).collect();
        seqs.dedup();
        seqs
    }

    /// Every memtable, newest first.
    pub(crate) fn memtables_newest(&self) -> impl Iterator<Item = &Rc<RefCell<Memtable>>> {
        core::iter::once(&self.active).chain(self.frozen.iter().rev().map(|f| &f.table))
    }

    /// Every memtable, newest first, held (for a reader that awaits while it reads them).
    pub(crate) fn memtables_newest_first(&self) -> Vec<Rc<RefCell<Memtable>>> {
        let mut out = Vec::with_capacity(1 + self.frozen.len());
        out.extend(self.memtables_newest().cloned());
        out
    }

    /// The highest seq written for `key` in any memtable.
    pub(crate) fn memtable_latest_seq(&self, key: &[u8]) -> Option<u64> {
        self.memtables_newest()
            .filter_map(|t| t.borrow().latest_seq(key))
            .max()
    }

    /// Remember a failure every later write, and the close, must fail with: a commit that found
    /// another writer in charge, or one that `stops` this handle (relaxed writes lost, which no
    /// caller heard of; a manifest commit whose outcome is unknown). The first one is kept.
    pub(crate) fn note_failure(&mut self, e: &Error, stops: bool) {
        if (stops || e.kind() == crate::ErrorKind::Fenced) && self.halted.is_none() {
            self.halted = Some(e.clone());
        }
    }
}

/// What every handle and future of one open database shares.
pub(crate) struct Inner {
    /// The store, until `Db::close` lets go of it ([`Inner::store`]): a closed handle the app
    /// keeps then keeps none of the store's data alive (a destroyed memory store's pages go
    /// with its last other holder).
    pub store: Cell<Option<Rc<dyn PageStore>>>,
    pub clock: MonotonicClock,
    pub options: DbOptions,
    pub state: RefCell<State>,
    /// Serializes the operations that replace the manifest (flush, compaction), from planning
    /// to installing, so no plan goes stale.
    pub manifest_lock: AsyncLock,
    /// Serializes purges (two at once would judge the same entries).
    pub purge_lock: AsyncLock,
    /// Called for each key the purge is about to remove.
    pub expire_hook: RefCell<Option<ExpireHook>>,
    /// Given the report of each reclaim run after a `QuotaExceeded` (`reclaim.rs`).
    pub reclaim_listener: RefCell<Option<ReclaimListener>>,
    /// What reclaims run after a `QuotaExceeded` purged while no listener was set: handed out
    /// with the next purge report (`reclaim.rs`).
    pub unreported: RefCell<PurgeReport>,
    /// Serializes reclaims: callers that find the store full while one runs wait for it.
    pub reclaim_lock: AsyncLock,
    /// Reclaims finished since open (a caller that waited for one does not run another).
    pub reclaims: Cell<u64>,
    /// Lets one store commit through at a time (WAL group commits and manifest changes alike),
    /// so every commit's precondition names the manifest version that is current when it lands.
    pub commit_gate: AsyncLock,
    /// The compaction merging on a thread of its own, until it is installed
    /// (`compaction/job.rs`).
    #[cfg(feature = "threads")]
    pub compaction_job: RefCell<Option<crate::engine::compaction::RunningJob>>,
}

impl Inner {
    /// The store, `None` once the database let go of it (`Db::close`). Taken out (not
    /// borrowed) by a caller that awaits it.
    pub(crate) fn store(&self) -> Option<Rc<dyn PageStore>> {
        let store = self.store.take();
        let copy = store.clone();
        self.store.set(store);
        copy
    }

    /// Commit `commit` to the store (`Closed` once the database let go of it), deleting with it
    /// the WAL pages failed commits may have left ([`WalState::settle_with`]): every commit passes
    /// here, so none lands while one of those pages could still be replayed beside it.
    pub(crate) async fn store_commit(&self, mut commit: Commit) -> Result<()> {
        let store = self.store().ok_or_else(Error::closed)?;
        let settling = self.state.borrow().wal.settle_with(&mut commit.deletes);
        let result = store.commit(commit).await;
        if result.is_ok() {
            self.state.borrow_mut().wal.settled(settling);
        }
        result
    }

    /// Let the host run other work a while, as the store does it (at once once the database
    /// let go of its store).
    pub(crate) async fn yield_to_host(&self) {
        if let Some(store) = self.store() {
            store.yield_now().await;
        }
    }
}

/// Keeps a read point pinned (see [`State::pin`]) for as long as it lives.
pub(crate) struct ReadPin<'a> {
    inner: &'a Inner,
    seq: u64,
    time: i64,
}

impl<'a> ReadPin<'a> {
    /// Pin `(seq, time)` in `inner`'s state.
    pub(crate) fn new(inner: &'a Inner, st: &mut State, seq: u64, time: i64) -> Self {
        st.pin(seq, time);
        ReadPin { inner, seq, time }
    }
}

impl Drop for ReadPin<'_> {
    fn drop(&mut self) {
        if let Ok(mut st) = self.inner.state.try_borrow_mut() {
            st.unpin(self.seq, self.time);
        }
    }
}
