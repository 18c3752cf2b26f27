//! [`Db`]: the public handle of an open database, scoped to one namespace. Each method validates
//! its input, turns it into internal keys and ops, and hands over to the write path, read path,
//! scan, purge, flush or compaction.

use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

use super::batch::{BatchOp, WriteBatch};
use super::keys::{call_record_key, internal_key, validate_key, validate_value, DEFAULT_NAMESPACE};
use super::maintenance::Maintenance;
use super::options::{
    DbOptions, Entry, ExpireCondition, GetExOptions, NamespaceOptions, PutOptions, ScanOptions, Ttl,
};
use super::purge::{ExpireHook, PurgeReport};
use super::read::is_live;
use super::snapshot::Snapshot;
use super::state::Inner;
use super::stats::Stats;
use super::write::{
    expiry_after, validate_expire_condition, validate_ttl, CallRecord, ExpireTarget, Outcome,
    TtlPolicy, WriteOp,
};
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::store::PageStore;

/// Due expiry-index entries a clear purges per slice before it clears.
const CLEAR_PURGE_SLICE: usize = 1_000;

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
        validate_options(&options)?;
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
        let now = self.inner.clock.now()?;
        Ok(found
            .filter(|v| is_live(v, now))
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

    /// Remove every key of this handle's keyspace (the default one, or this namespace) in one
    /// atomic step whose cost does not depend on the number of keys: the keys are gone for every
    /// later read, and compaction reclaims their space. A snapshot taken before still sees them.
    /// `Closed` on a dropped namespace.
    ///
    /// Keys that had expired before the clear still get their one expire event: what is due is
    /// purged first (as [`purge_expired`](Self::purge_expired) would, in every keyspace), and the
    /// report of that purge is returned; the keys the clear itself removes fire none.
    pub async fn clear(&self) -> Result<PurgeReport> {
        let mut report = PurgeReport::default();
        loop {
            let now = self.inner.clock.now()?;
            let due = {
                let st = self.inner.state.borrow();
                st.check_writable()?;
                st.expiry_may_be_due(now)
            };
            if due {
                let slice = self.inner.purge_expired(CLEAR_PURGE_SLICE).await?;
                report.removed += slice.removed;
                report.rewritten += slice.rewritten;
                report.stale += slice.stale;
                report.expired.extend(slice.expired);
                report.hook_errors.extend(slice.hook_errors);
                if slice.more_due || slice.removed + slice.rewritten + slice.stale > 0 {
                    continue;
                }
            }
            // The commit checks again that nothing came due meanwhile; if something did, purge
            // it and try again.
            if self.inner.clear_keyspace(self.ns).await? {
                return Ok(report);
            }
        }
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

    fn key(&self, key: &[u8]) -> Result<Vec<u8>> {
        validate_key(key)?;
        Ok(internal_key(self.keyspace(), key))
    }

    async fn write_one(&self, op: WriteOp) -> Result<Outcome> {
        let policy = self.policy()?;
        let outcomes = self
            .inner
            .write_ops(alloc::vec![op], policy, self.call.as_deref())
            .await?;
        Ok(outcomes
            .and_then(|o| o.into_iter().next())
            .unwrap_or_default())
    }

    /// Store `value` under `key` with the default TTL (the namespace's, else the database's).
    pub async fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.put_with_options(key, value, PutOptions::default())
            .await
            .map(|_| ())
    }

    /// Store `value` under `key` with an explicit TTL and condition. Returns `false` only when the
    /// condition (`IfAbsent` / `IfPresent`) failed and nothing was written.
    pub async fn put_with_options(
        &self,
        key: &[u8],
        value: &[u8],
        options: PutOptions,
    ) -> Result<bool> {
        let key = self.key(key)?;
        validate_value(value, self.inner.options.value_header_bytes)?;
        validate_ttl(options.ttl)?;
        let outcome = self
            .write_one(WriteOp::Put {
                key,
                value: value.to_vec(),
                ttl: options.ttl,
                condition: options.condition,
            })
            .await?;
        Ok(outcome.applied)
    }

    /// The value of `key`, if it is present and not expired.
    pub async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.get_entry(key).await?.map(|e| e.value))
    }

    /// The live entry of `key` with its expiry, if any.
    pub async fn get_entry(&self, key: &[u8]) -> Result<Option<Entry>> {
        let ikey = self.key(key)?;
        self.policy()?;
        let read_seq = self.inner.state.borrow().last_seq;
        let found = self.inner.lookup(&ikey, read_seq).await?;
        let now = self.inner.clock.now()?;
        Ok(found.filter(|v| is_live(v, now)).and_then(|v| {
            v.value.map(|value| Entry {
                key: key.to_vec(),
                value,
                expire_at: v.expire_at,
            })
        }))
    }

    /// The values of `keys`, in the same order (`None` where absent or expired).
    pub async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>> {
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            out.push(self.get(k).await?);
        }
        Ok(out)
    }

    /// Whether `key` is present and not expired.
    pub async fn has(&self, key: &[u8]) -> Result<bool> {
        Ok(self.get_entry(key).await?.is_some())
    }

    /// Remove `key`. Returns whether a live key was removed.
    pub async fn delete(&self, key: &[u8]) -> Result<bool> {
        let key = self.key(key)?;
        Ok(self.write_one(WriteOp::Delete { key }).await?.applied)
    }

    /// Remaining time to live of `key` in ms: `-1` if it has no expiry, `-2` if it is absent or
    /// expired (Redis `PTTL`).
    pub async fn ttl(&self, key: &[u8]) -> Result<i64> {
        let Some(entry) = self.get_entry(key).await? else {
            return Ok(-2);
        };
        Ok(match entry.expire_at {
            None => -1,
            Some(at) => (at - self.inner.clock.now()?).max(1),
        })
    }

    /// Make `key` expire `ttl_ms` from now. `false` if the key is absent or `condition` failed.
    /// A `ttl_ms` of 0 deletes the key (`true` if it was live), as Redis `PEXPIRE` does with a
    /// time not in the future.
    pub async fn expire(
        &self,
        key: &[u8],
        ttl_ms: u64,
        condition: ExpireCondition,
    ) -> Result<bool> {
        let at = expiry_after(self.inner.clock.now()?, ttl_ms)?;
        self.expire_at(key, at, condition).await
    }

    /// Make `key` expire at `at_ms` (ms since the Unix epoch; a time not in the future removes
    /// the key). `false` if the key is absent or `condition` failed.
    pub async fn expire_at(
        &self,
        key: &[u8],
        at_ms: i64,
        condition: ExpireCondition,
    ) -> Result<bool> {
        let key = self.key(key)?;
        validate_expire_condition(condition)?;
        let op = WriteOp::Expire {
            key,
            target: ExpireTarget::At(at_ms),
            condition,
        };
        Ok(self.write_one(op).await?.applied)
    }

    /// Remove the expiry of `key`. `true` if it had one.
    pub async fn persist(&self, key: &[u8]) -> Result<bool> {
        let key = self.key(key)?;
        let op = WriteOp::Expire {
            key,
            target: ExpireTarget::Persist,
            condition: ExpireCondition::default(),
        };
        Ok(self.write_one(op).await?.applied)
    }

    /// Read `key` and change its expiry in the same step (Redis `GETEX`): sliding sessions.
    /// Returns the value, or `None` if the key is absent or expired (then nothing changes).
    pub async fn get_ex(&self, key: &[u8], options: GetExOptions) -> Result<Option<Vec<u8>>> {
        let key = self.key(key)?;
        let target = match options {
            GetExOptions::ExpireAfter(ms) => {
                validate_ttl(Ttl::ExpireAfter(ms))?;
                ExpireTarget::At(expiry_after(self.inner.clock.now()?, ms)?)
            }
            GetExOptions::ExpireAt(at) => ExpireTarget::At(at),
            GetExOptions::Persist => ExpireTarget::Persist,
        };
        Ok(self.write_one(WriteOp::GetEx { key, target }).await?.value)
    }

    /// Apply every operation of `batch` atomically. Returns `false` (and writes nothing) if a
    /// put condition in the batch failed.
    pub async fn write(&self, batch: WriteBatch) -> Result<bool> {
        let mut ops = Vec::with_capacity(batch.ops.len());
        for op in batch.ops {
            ops.push(match op {
                BatchOp::Put {
                    key,
                    value,
                    options,
                } => {
                    validate_value(&value, self.inner.options.value_header_bytes)?;
                    validate_ttl(options.ttl)?;
                    WriteOp::Put {
                        key: self.key(&key)?,
                        value,
                        ttl: options.ttl,
                        condition: options.condition,
                    }
                }
                BatchOp::Delete { key } => WriteOp::Delete {
                    key: self.key(&key)?,
                },
            });
        }
        let policy = self.policy()?;
        if ops.is_empty() {
            self.inner.state.borrow().check_writable()?;
            return Ok(true);
        }
        let record = self.call.as_deref();
        Ok(self.inner.write_ops(ops, policy, record).await?.is_some())
    }

    /// Live entries in key order (or reverse), as [`ScanOptions`] selects.
    pub async fn scan(&self, options: &ScanOptions) -> Result<Vec<Entry>> {
        self.policy()?;
        let read_seq = self.inner.state.borrow().last_seq;
        let now = self.inner.clock.now()?;
        self.inner
            .scan_at(self.keyspace(), options, read_seq, now)
            .await
    }

    /// A consistent view of this namespace now, expiry evaluated at this moment.
    pub fn snapshot(&self) -> Result<Snapshot> {
        Snapshot::take(self.inner.clone(), self.ns)
    }

    /// Handle up to `limit` due expiry-index entries (oldest expiry first) and report each
    /// expired key once, with its last value (or rewrite it, if the expire hook says so). An
    /// expired key needs no write; the slice is durable (its `purged_until` committed) before it
    /// reports, so no event fires twice, even across a crash.
    pub async fn purge_expired(&self, limit: usize) -> Result<PurgeReport> {
        self.inner.purge_expired(limit).await
    }

    /// Set (or clear) the function called for each key about to be removed because it expired;
    /// a returned [`Replacement`](super::options::Replacement) rewrites the key instead.
    pub fn set_expire_hook(&self, hook: Option<ExpireHook>) {
        *self.inner.expire_hook.borrow_mut() = hook;
    }

    /// Write every memtable to an L0 SST now (and commit pending WAL records first).
    pub async fn flush(&self) -> Result<()> {
        self.inner.state.borrow().check_writable()?;
        self.inner.flush().await
    }

    /// Merge every SST into the bottom level now, running the TTL compaction filter over all of
    /// them: expired rows the purge has handled, tombstones and dropped namespaces disappear.
    pub async fn compact(&self) -> Result<()> {
        self.inner.flush().await?;
        self.inner.compact(true).await?;
        self.inner.reclaim_obsolete().await.map(|_| ())
    }

    /// Do the background work that is due (commit relaxed writes, flush or compact, delete unused
    /// pages, then purge a slice) and say when to call again. See [`Maintenance`].
    pub async fn maintenance_step(&self) -> Result<Maintenance> {
        self.inner.maintenance_step().await
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
    /// [`ErrorKind::Closed`](crate::ErrorKind::Closed).
    pub async fn close(&self) -> Result<()> {
        {
            let mut st = self.inner.state.borrow_mut();
            if st.closed || st.closing {
                return Ok(());
            }
            // From here on writes are refused, so nothing is accepted that the drain misses.
            st.closing = true;
        }
        let drained = self.inner.drain_wal().await;
        // Time seen by reads alone is in no WAL record: store it, so the clock does not go
        // backwards across a reopen even if the wall clock does.
        let sealed = match drained {
            Ok(()) => self.inner.persist_clock_seed().await,
            Err(e) => Err(e),
        };
        self.inner.state.borrow_mut().closed = true;
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

fn validate_options(o: &DbOptions) -> Result<()> {
    let fail = |what: &str| Err(Error::invalid(alloc::format!("DbOptions: {what}")));
    if o.page_size < 64 {
        return fail("page_size must be at least 64 bytes");
    }
    if o.memtable_flush_bytes == 0 || o.memtable_stall_bytes < o.memtable_flush_bytes {
        return fail("memtable_flush_bytes must be > 0 and <= memtable_stall_bytes");
    }
    if o.work_slice_bytes == 0 {
        return fail("work_slice_bytes must be at least 1");
    }
    if o.l0_compaction_trigger == 0 {
        return fail("l0_compaction_trigger must be at least 1");
    }
    if o.sst_target_bytes == 0 || o.level1_target_bytes == 0 {
        return fail("sst_target_bytes and level1_target_bytes must be > 0");
    }
    if o.level_size_multiplier < 2 {
        return fail("level_size_multiplier must be at least 2");
    }
    if o.memtable_max_age_ms < 0 || o.relaxed_commit_interval_ms < 0 {
        return fail("intervals must not be negative");
    }
    if o.purge_slice_keys == 0 {
        return fail("purge_slice_keys must be at least 1");
    }
    if !(o.expiry_compaction_share > 0.0 && o.expiry_compaction_share <= 1.0) {
        return fail("expiry_compaction_share must be in (0, 1]");
    }
    if o.periodic_compaction_ms.is_some_and(|ms| ms <= 0) {
        return fail("periodic_compaction_ms must be positive");
    }
    Ok(())
}

impl core::fmt::Debug for Db {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Db")
            .field("namespace", &self.ns)
            .finish_non_exhaustive()
    }
}

/// Keeps a put option's condition reachable for callers that build `PutOptions` by hand.
impl From<super::options::PutCondition> for PutOptions {
    fn from(condition: super::options::PutCondition) -> Self {
        PutOptions {
            condition,
            ..PutOptions::default()
        }
    }
}
