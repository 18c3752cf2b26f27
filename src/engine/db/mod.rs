//! [`Db`]: the public handle of an open database, scoped to one namespace. Each method validates
//! its input, turns it into internal keys (and ops), and hands over to the machinery behind it:
//! the write path (the write calls are in [`writes`]), the read path (the read calls are in
//! [`reads`]), the purge, flush, compaction and the maintenance step. Here: opening, namespaces
//! and call records, and the calls that run background work or close. The write calls and
//! `flush` try once more after a reclaim if they find the store full (`engine/reclaim.rs`).

mod reads;
mod writes;

pub use reads::Lookup;

use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

use super::keys::{call_record_key, internal_key, validate_key, DEFAULT_NAMESPACE};
use super::maintenance::Maintenance;
use super::namespace::{validate_ttl, TtlPolicy};
use super::options::{
    DbOptions, ExpireHook, NamespaceOptions, PurgeReport, PutCondition, PutOptions,
    ReclaimListener, Ttl,
};
use super::state::Inner;
use super::stats::Stats;
use super::write::ops::CallRecord;
use crate::clock::Clock;
use crate::error::Result;
use crate::store::PageStore;

/// An open ttlkv database, or one namespace of it (see [`Db::namespace`]). Cheap to clone:
/// clones share the same database, and any number of calls may be in flight on one database at
/// once (on a single-threaded executor).
#[derive(Clone)]
pub struct Db {
    inner: Rc<Inner>,
    /// The keyspace's handle id (see `namespace.rs`: where its rows are changes when it is
    /// cleared; this does not).
    ns: u32,
    /// The call id this handle's writes record their outcome under (see [`Db::recording_call`]).
    call: Option<Rc<[u8]>>,
}

impl Db {
    /// Open the database held in `store` (creating it if the store is empty), reading time from
    /// `clock`. Opening takes the writer role: a handle still open elsewhere on the same store is
    /// fenced and its writes fail with [`ErrorKind::Fenced`](crate::ErrorKind::Fenced).
    pub async fn open(
        store: impl PageStore + 'static,
        clock: impl Clock + 'static,
        options: DbOptions,
    ) -> Result<Db> {
        if let Some(ms) = options.default_ttl_ms {
            validate_ttl(Ttl::ExpireAfter(ms))?;
        }
        options.validate()?;
        let reset_clock = options.reset_clock;
        let inner = Inner::open(Rc::new(store), Rc::new(clock), options).await?;
        if reset_clock {
            // The WAL may hold times of the bad clock: flushed, they are no longer replayed (and
            // checked) by every later open.
            inner.flush().await?;
        }
        Ok(Db {
            inner: Rc::new(inner),
            ns: DEFAULT_NAMESPACE,
            call: None,
        })
    }

    /// A handle on namespace `name`: a separate keyspace with its own default and maximum TTL.
    /// It is created if it does not exist; `options`, when given, replace its TTL rules.
    pub async fn namespace(&self, name: &str, options: Option<NamespaceOptions>) -> Result<Db> {
        let ns = self.inner.ensure_namespace(name, options).await?;
        Ok(Db {
            inner: self.inner.clone(),
            ns,
            call: None,
        })
    }

    /// This handle, with every write it makes recording its outcome under call id `id` in the
    /// same atomic batch as its effect. A caller that may send the same call twice (a tab that
    /// forwarded it to a writer that went away before answering) asks [`Db::recorded_call`]
    /// first: a call that already took effect is answered from its record and not run again.
    /// Records are kept for ten minutes. Only writes that change something are recorded.
    pub fn recording_call(&self, id: &[u8]) -> Result<Db> {
        validate_key(id)?;
        Ok(Db {
            call: Some(Rc::from(id)),
            ..self.clone()
        })
    }

    /// The recorded outcome of call `id`, if a write made through
    /// [`recording_call(id)`](Db::recording_call) took effect.
    pub async fn recorded_call(&self, id: &[u8]) -> Result<Option<CallRecord>> {
        validate_key(id)?;
        self.inner.state.borrow().check_open()?;
        let read_seq = self.inner.state.borrow().last_seq;
        let found = self.inner.lookup(&call_record_key(id), read_seq).await?;
        Ok(self
            .live_now(found)?
            .and_then(|v| v.value)
            .and_then(|v| CallRecord::decode(&v)))
    }

    /// Drop namespace `name` with every key in it (`false` if there is none). Handles on it fail
    /// with `Closed` from then on; its space is reclaimed by compaction.
    pub async fn drop_namespace(&self, name: &str) -> Result<bool> {
        self.inner.drop_namespace(name).await
    }

    /// The namespaces that exist (the default one is not listed), with their TTL rules.
    pub fn namespaces(&self) -> Vec<(String, NamespaceOptions)> {
        self.inner.namespaces()
    }

    fn policy(&self) -> Result<TtlPolicy> {
        let st = self.inner.state.borrow();
        st.check_open()?;
        st.policy_of(st.keyspace_id(self.ns), self.inner.options.default_ttl_ms)
    }

    /// The namespace id this handle's rows are stored under now.
    fn keyspace(&self) -> u32 {
        self.inner.state.borrow().keyspace_id(self.ns)
    }

    /// [`keyspace`](Self::keyspace) once [`policy`](Self::policy) lets the handle read: one look.
    fn open_keyspace(&self) -> Result<u32> {
        let st = self.inner.state.borrow();
        st.check_open()?;
        let keyspace = st.keyspace_id(self.ns);
        st.policy_of(keyspace, self.inner.options.default_ttl_ms)?;
        Ok(keyspace)
    }

    fn key(&self, key: &[u8]) -> Result<Vec<u8>> {
        validate_key(key)?;
        Ok(internal_key(self.keyspace(), key))
    }

    /// Handle up to `limit` due expiry-index entries (oldest expiry first) and report each
    /// expired key once, with its last value (or rewrite it, if the expire hook says so). An
    /// expired key needs no write; the slice is durable (its `purged_until` committed) before it
    /// reports, so no event fires twice, even across a crash.
    ///
    /// Its report also carries the events of reclaims the engine ran while no reclaim listener
    /// was set (see [`Db::set_reclaim_listener`]). A `limit` of 0 is an
    /// [`InvalidArgument`](crate::ErrorKind::InvalidArgument).
    pub async fn purge_expired(&self, limit: usize) -> Result<PurgeReport> {
        let report = self.inner.purge_expired(limit).await?;
        Ok(self.with_unreported(report))
    }

    /// Set (or clear) the function called for each key about to be removed because it expired;
    /// a returned [`Replacement`](super::options::Replacement) rewrites the key instead.
    pub fn set_expire_hook(&self, hook: Option<ExpireHook>) {
        *self.inner.expire_hook.borrow_mut() = hook;
    }

    /// Set (or clear) the function given the report of each reclaim the engine runs by itself:
    /// when a write finds the store full ([`ErrorKind::QuotaExceeded`]), the engine purges every
    /// due key, compacts, and tries the write once more (see [`Db::reclaim`]). The `expired`
    /// entries of those reports are expire events like a purge's, each delivered once: to this
    /// listener, or, while none is set, with the next purge report (of
    /// [`purge_expired`](Self::purge_expired), [`maintenance_step`](Self::maintenance_step),
    /// [`clear`](Self::clear) or [`reclaim`](Self::reclaim)). The expire hook applies to these
    /// purges as to any other. Events kept that way are lost if the database closes before a
    /// purge report hands them out (their purge is durable, so no later purge reports them
    /// again): set a listener where that matters. The npm package always sets one.
    ///
    /// [`ErrorKind::QuotaExceeded`]: crate::ErrorKind::QuotaExceeded
    pub fn set_reclaim_listener(&self, listener: Option<ReclaimListener>) {
        *self.inner.reclaim_listener.borrow_mut() = listener;
    }

    /// Free the storage expired data holds: purge every due key (in slices of 1,000), then flush,
    /// compact everything into the bottom level and delete the pages nothing reads any more.
    /// Each step is best effort: one that fails (it may need room itself) is skipped. Returns what
    /// the purges did; its `expired` entries are expire events, each reported once (here, not to
    /// the reclaim listener).
    ///
    /// The engine runs this by itself when a write finds the store full, and then tries the write
    /// once more: `put`, `put_with_options`, `delete`, `expire`, `expire_at`, `persist`, `get_ex`,
    /// `write` (on any handle, [`recording_call`](Self::recording_call)'s too), `clear` and
    /// `flush`. A write that fails with `QuotaExceeded` again returns that error, having written
    /// nothing. Writes that find the store full while a reclaim runs wait for it instead of
    /// running another. Other calls (`namespace`, `drop_namespace`, `compact`, `purge_expired`,
    /// `maintenance_step`) return `QuotaExceeded` as they get it: a caller can reclaim and call
    /// again.
    pub async fn reclaim(&self) -> Result<PurgeReport> {
        self.inner.state.borrow().check_writable()?;
        let report = self.inner.reclaim().await;
        Ok(self.with_unreported(report))
    }

    /// `report`, after the events of earlier reclaims that no listener received.
    fn with_unreported(&self, report: PurgeReport) -> PurgeReport {
        let mut all = self.inner.take_unreported();
        all.absorb(report);
        all
    }

    /// Write every memtable to an L0 SST now (and commit pending WAL records first). If the
    /// store is full, once more after a reclaim (see [`Db::reclaim`]).
    pub async fn flush(&self) -> Result<()> {
        let mut full = None;
        loop {
            self.inner.state.borrow().check_writable()?;
            match self.inner.flush().await {
                Err(e) => {
                    self.inner.try_again_after(&mut full, e).await?;
                }
                done => return done,
            }
        }
    }

    /// Merge every SST into the bottom level now, running the TTL compaction filter over all of
    /// them: expired rows the purge has handled, tombstones and dropped namespaces disappear.
    pub async fn compact(&self) -> Result<()> {
        self.inner.flush().await?;
        self.inner.compact(true).await?;
        self.inner.reclaim_obsolete().await.map(|_| ())
    }

    /// Do the background work that is due (commit relaxed writes, flush or compact, delete unused
    /// pages, then purge a slice) and say when to call again. See [`Maintenance`]. Its purge
    /// report also carries the events of reclaims the engine ran while no reclaim listener was set.
    pub async fn maintenance_step(&self) -> Result<Maintenance> {
        let mut step = self.inner.maintenance_step().await?;
        step.purge = self.with_unreported(step.purge);
        Ok(step)
    }

    /// When background work is next due (what the last maintenance step reported, updated by
    /// writes since: a write with an earlier expiry makes it earlier). `None`: nothing is due
    /// until the next write.
    pub fn next_wakeup_ms(&self) -> Option<i64> {
        self.inner.next_wakeup()
    }

    /// Sizes and shapes: memtable, WAL, levels and SSTs with their expiry statistics.
    pub fn stats(&self) -> Stats {
        self.inner.stats()
    }

    /// Commit pending writes and close. Later calls fail with
    /// [`ErrorKind::Closed`](crate::ErrorKind::Closed). The handle then holds none of the data
    /// (memtables, SSTs, caches: the store keeps what a reopen needs; its [`stats`](Self::stats)
    /// show none), not the store itself and neither of the hooks set on it, however long it is
    /// kept.
    ///
    /// A close beside one still running, or after one whose future was dropped half-way (a
    /// caller's timeout), does the work again (each step finds done what the other did) and
    /// returns, as the other does, once the database is closed. If the dropped one was leading
    /// the commit of relaxed writes, they are lost, and this close fails with the error that says
    /// so (as every write after them does, until a reopen).
    pub async fn close(&self) -> Result<()> {
        {
            let mut st = self.inner.state.borrow_mut();
            if st.closed {
                return Ok(());
            }
            // From here on writes are refused, so nothing is accepted that the drain misses.
            st.closing = true;
        }
        let drained = self.inner.drain_wal().await;
        // Time seen by reads alone is in no WAL record: store it, so the clock does not go
        // backwards across a reopen even if the wall clock does. Also after a failed drain (the
        // argument is run either way; the drain's error comes first): the seed's commit waits
        // for the manifest lock, so a flush or compaction under way ends first, giving the host
        // its turns through the store, not after the close let go of it.
        let sealed = drained.and(self.inner.persist_clock_seed().await);
        // A reclaim or a purge under way ends on the state it began with (its writes fail: the
        // database is closing), and a reclaim's expire events still reach its listener. One
        // lock at a time: a reclaim takes the purge lock inside its own.
        drop(self.inner.reclaim_lock.lock().await);
        let _purges = self.inner.purge_lock.lock().await;
        {
            let mut st = self.inner.state.borrow_mut();
            if st.closed {
                // A close beside this one finished first (this one's seal may have found the
                // database closed): the database is closed, as that close reported.
                return Ok(());
            }
            st.closed = true;
            // Nothing of the data stays with a handle the app may keep for long after.
            st.release_data();
        }
        // Nor the store (a memory store's pages live on with whoever else holds it: its
        // registry until `destroy`), nor the app's hooks: one that holds the handle (a
        // JavaScript closure reaching the object that owns this handle) would keep both alive
        // for good, the data with them.
        self.inner.store.set(None);
        *self.inner.expire_hook.borrow_mut() = None;
        *self.inner.reclaim_listener.borrow_mut() = None;
        // A compaction merging on its own thread is dropped: nothing of it was written, and
        // its thread ends on its own.
        #[cfg(feature = "threads")]
        self.inner.compaction_job.borrow_mut().take();
        sealed
    }

    /// The current time on the database's (monotonic) clock; an error if the clock read no
    /// plausible time (see [`MAX_PLAUSIBLE_MS`](crate::clock::MAX_PLAUSIBLE_MS)).
    pub fn now(&self) -> Result<i64> {
        self.inner.clock.now()
    }

    /// The latest time this database handed out (never more than [`Db::now`]; needs no reading
    /// of the clock).
    pub fn last_time(&self) -> i64 {
        self.inner.clock.last_issued()
    }
}

impl core::fmt::Debug for Db {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Db")
            .field("namespace", &self.ns)
            .finish_non_exhaustive()
    }
}

/// Keeps a put option's condition reachable for callers that build `PutOptions` by hand.
impl From<PutCondition> for PutOptions {
    fn from(condition: PutCondition) -> Self {
        PutOptions {
            condition,
            ..PutOptions::default()
        }
    }
}
