//! [`Db`]: the public handle of an open database. Each method validates its input, turns it into
//! internal keys and ops, and hands over to the write path, read path, scan, flush or compaction.

use alloc::rc::Rc;
use alloc::vec::Vec;

use super::batch::{BatchOp, WriteBatch};
use super::keys::{
    internal_key, namespace_end, namespace_start, prefix_successor, user_key, validate_key,
    validate_value, DEFAULT_NAMESPACE,
};
use super::maintenance::Maintenance;
use super::merge::MergeCursor;
use super::options::{
    DbOptions, Entry, ExpireCondition, PutCondition, PutOptions, ScanOptions, Ttl,
};
use super::read::is_live;
use super::state::{Inner, ReadPin};
use super::stats::Stats;
use super::write::{validate_expire_condition, validate_ttl, ExpireTarget, TtlPolicy, WriteOp};
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::store::PageStore;

/// An open ttlkv database. Cheap to clone: clones share the same database, and any number of
/// calls may be in flight on one database at once (on a single-threaded executor).
#[derive(Clone)]
pub struct Db {
    inner: Rc<Inner>,
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
        let inner = Inner::open(Rc::new(store), Rc::new(clock), options).await?;
        Ok(Db {
            inner: Rc::new(inner),
        })
    }

    fn policy(&self) -> TtlPolicy {
        TtlPolicy {
            default_ttl_ms: self.inner.options.default_ttl_ms,
            max_ttl_ms: None,
        }
    }

    fn key(key: &[u8]) -> Result<Vec<u8>> {
        validate_key(key)?;
        Ok(internal_key(DEFAULT_NAMESPACE, key))
    }

    async fn write_one(&self, op: WriteOp) -> Result<bool> {
        let results = self.inner.write_ops(alloc::vec![op], self.policy()).await?;
        Ok(results.and_then(|r| r.first().copied()).unwrap_or(false))
    }

    /// Store `value` under `key` with the database's default TTL (if any).
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
        let key = Self::key(key)?;
        validate_value(value)?;
        validate_ttl(options.ttl)?;
        self.write_one(WriteOp::Put {
            key,
            value: value.to_vec(),
            ttl: options.ttl,
            condition: options.condition,
        })
        .await
    }

    /// The value of `key`, if it is present and not expired.
    pub async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.get_entry(key).await?.map(|e| e.value))
    }

    /// The live entry of `key` with its expiry, if any.
    pub async fn get_entry(&self, key: &[u8]) -> Result<Option<Entry>> {
        let ikey = Self::key(key)?;
        let read_seq = {
            let st = self.inner.state.borrow();
            st.check_open()?;
            st.last_seq
        };
        let found = self.inner.lookup(&ikey, read_seq).await?;
        let now = self.inner.clock.now();
        Ok(found.filter(|v| is_live(v, now)).and_then(|v| {
            v.value.map(|value| Entry {
                key: key.to_vec(),
                value,
                expire_at: v.expire_at,
            })
        }))
    }

    /// Whether `key` is present and not expired.
    pub async fn has(&self, key: &[u8]) -> Result<bool> {
        Ok(self.get_entry(key).await?.is_some())
    }

    /// Remove `key`. Returns whether a live key was removed.
    pub async fn delete(&self, key: &[u8]) -> Result<bool> {
        let key = Self::key(key)?;
        self.write_one(WriteOp::Delete { key }).await
    }

    /// Remaining time to live of `key` in ms: `-1` if it has no expiry, `-2` if it is absent or
    /// expired (Redis `PTTL`).
    pub async fn ttl(&self, key: &[u8]) -> Result<i64> {
        let Some(entry) = self.get_entry(key).await? else {
            return Ok(-2);
        };
        Ok(match entry.expire_at {
            None => -1,
            Some(at) => (at - self.inner.clock.now()).max(1),
        })
    }

    /// Make `key` expire `ttl_ms` from now. `false` if the key is absent or `condition` failed.
    pub async fn expire(
        &self,
        key: &[u8],
        ttl_ms: u64,
        condition: ExpireCondition,
    ) -> Result<bool> {
        validate_ttl(Ttl::ExpireAfter(ttl_ms))?;
        let at = self
            .inner
            .clock
            .now()
            .saturating_add(i64::try_from(ttl_ms).unwrap_or(i64::MAX));
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
        let key = Self::key(key)?;
        validate_expire_condition(condition)?;
        self.write_one(WriteOp::Expire {
            key,
            target: ExpireTarget::At(at_ms),
            condition,
        })
        .await
    }

    /// Remove the expiry of `key`. `true` if it had one.
    pub async fn persist(&self, key: &[u8]) -> Result<bool> {
        let key = Self::key(key)?;
        self.write_one(WriteOp::Expire {
            key,
            target: ExpireTarget::Persist,
            condition: ExpireCondition::default(),
        })
        .await
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
                    validate_value(&value)?;
                    validate_ttl(options.ttl)?;
                    WriteOp::Put {
                        key: Self::key(&key)?,
                        value,
                        ttl: options.ttl,
                        condition: options.condition,
                    }
                }
                BatchOp::Delete { key } => WriteOp::Delete {
                    key: Self::key(&key)?,
                },
            });
        }
        if ops.is_empty() {
            self.inner.state.borrow().check_writable()?;
            return Ok(true);
        }
        Ok(self.inner.write_ops(ops, self.policy()).await?.is_some())
    }

    /// Live entries in key order (or reverse), as [`ScanOptions`] selects.
    pub async fn scan(&self, options: &ScanOptions) -> Result<Vec<Entry>> {
        let ns = DEFAULT_NAMESPACE;
        let mut lower = namespace_start(ns);
        let mut upper = namespace_end(ns);
        let mut narrow_lower = |k: Vec<u8>| {
            if k > lower {
                lower = k;
            }
        };
        if let Some(p) = &options.prefix {
            narrow_lower(internal_key(ns, p));
        }
        if let Some(s) = &options.start {
            narrow_lower(internal_key(ns, s));
        }
        let mut narrow_upper = |k: Option<Vec<u8>>| {
            if let Some(k) = k {
                if upper.as_ref().is_none_or(|u| k < *u) {
                    upper = Some(k);
                }
            }
        };
        if let Some(p) = &options.prefix {
            narrow_upper(prefix_successor(&internal_key(ns, p)));
        }
        if let Some(e) = &options.end {
            narrow_upper(Some(internal_key(ns, e)));
        }
        let limit = options.limit.unwrap_or(usize::MAX);
        if limit == 0 || upper.as_ref().is_some_and(|u| *u <= lower) {
            self.inner.state.borrow().check_open()?;
            return Ok(Vec::new());
        }
        let (read_seq, memtables, version, _pin) = {
            let mut st = self.inner.state.borrow_mut();
            st.check_open()?;
            // Pinned: overwrites during the scan must not prune the versions it is to see.
            let seq = st.last_seq;
            let pin = ReadPin::new(&self.inner, &mut st, seq);
            (seq, st.memtables_newest_first(), st.version.clone(), pin)
        };
        let now = self.inner.clock.now();
        let runs = version.levels.iter().enumerate().flat_map(|(level, ssts)| {
            if level == 0 {
                ssts.iter()
                    .map(|s| alloc::vec![s.clone()])
                    .collect::<Vec<_>>()
            } else {
                alloc::vec![ssts.clone()]
            }
        });
        let mut cursor = MergeCursor::open(
            &self.inner,
            memtables,
            runs.filter(|r| !r.is_empty()).collect(),
            &lower,
            upper.as_deref(),
            options.reverse,
            read_seq,
        )
        .await?;
        let mut out = Vec::new();
        while let Some((key, versions)) = cursor.next_key(&self.inner).await? {
            let outside = if options.reverse {
                key < lower
            } else {
                upper.as_ref().is_some_and(|u| key >= *u)
            };
            if outside {
                break;
            }
            let Some(v) = versions.into_iter().find(|v| v.seq <= read_seq) else {
                continue;
            };
            if !is_live(&v, now) {
                continue;
            }
            if let Some(value) = v.value {
                out.push(Entry {
                    key: user_key(&key).to_vec(),
                    value,
                    expire_at: v.expire_at,
                });
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok(out)
    }

    /// Write every memtable to an L0 SST now (and commit pending WAL records first).
    pub async fn flush(&self) -> Result<()> {
        self.inner.state.borrow().check_writable()?;
        self.inner.flush().await
    }

    /// Merge every SST into the bottom level now, running the TTL compaction filter over all of
    /// them: expired rows and tombstones disappear from storage.
    pub async fn compact(&self) -> Result<()> {
        self.inner.flush().await?;
        self.inner.compact(true).await?;
        self.inner.reclaim_obsolete().await.map(|_| ())
    }

    /// Do the background work that is due (commit relaxed writes, flush, compact, delete unused
    /// pages) and say when to call again. See [`Maintenance`].
    pub async fn maintenance_step(&self) -> Result<Maintenance> {
        self.inner.maintenance_step().await
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

    /// The current time on the database's (monotonic) clock.
    pub fn now(&self) -> i64 {
        self.inner.clock.now()
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
    Ok(())
}

impl core::fmt::Debug for Db {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Db").finish_non_exhaustive()
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
