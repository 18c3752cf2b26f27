//! What callers and the engine agree on, below every other engine module: database options
//! (and their check), put options (TTL and condition), expire conditions, scan options, the
//! entries reads return, the purge's report and the expire hook, and the tunables that more than
//! one engine file uses (such as [`L0_STALL_FACTOR`]). Plain data: it imports nothing of the
//! engine.

use alloc::rc::Rc;
use alloc::vec::Vec;

use crate::error::{Error, ErrorKind, Result};

/// When a write's promise/future resolves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// After the write's WAL record is committed to the page store (group commit shares that
    /// commit among all writes waiting at the same time).
    #[default]
    Durable,
    /// At once; the WAL record is committed within [`DbOptions::relaxed_commit_interval_ms`]
    /// (by the next maintenance step, flush, durable write or close). A crash before that loses it.
    Relaxed,
}

/// Options fixed when a database is opened.
#[derive(Clone, Debug, PartialEq)]
pub struct DbOptions {
    /// TTL in ms applied by puts that give no expiry ([`Ttl::Default`]); `None` = no expiry.
    pub default_ttl_ms: Option<u64>,
    /// When writes resolve.
    pub durability: Durability,
    /// Target size of one SST data page, in bytes (a point read loads one page).
    pub page_size: usize,
    /// The memtable is flushed to an L0 SST once it holds this many bytes (maintenance step),
    /// or, holding TTL rows and an eighth of this, once it has been filling for an eighth of
    /// the time to its earliest expiry (so short-TTL SSTs leave whole soon after they expire).
    pub memtable_flush_bytes: usize,
    /// A write that finds the memtable this large flushes it before returning (back-pressure,
    /// so memory stays bounded even when no maintenance runs).
    pub memtable_stall_bytes: usize,
    /// A non-empty memtable is flushed at the latest this long after its first write.
    pub memtable_max_age_ms: i64,
    /// Relaxed writes are committed to the WAL at the latest this long after they were made.
    pub relaxed_commit_interval_ms: i64,
    /// Number of L0 SSTs that triggers an L0 → L1 compaction. SSTs whose rows all expire
    /// within a minute do not count (they leave by whole drops), up to three times this many.
    pub l0_compaction_trigger: usize,
    /// Target size of one SST written by compaction, in bytes.
    pub sst_target_bytes: usize,
    /// Target size of level 1 in bytes; each deeper level is [`DbOptions::level_size_multiplier`]
    /// times larger.
    pub level1_target_bytes: u64,
    /// Growth factor between the target sizes of consecutive levels.
    pub level_size_multiplier: u64,
    /// Bytes of decoded data pages kept in the page cache. Pages a store shares in place
    /// ([`PageStore::shared_page`](crate::store::PageStore::shared_page), as [`MemoryStore`]
    /// does) never enter it.
    ///
    /// [`MemoryStore`]: crate::store::MemoryStore
    pub page_cache_bytes: usize,
    /// Bytes of the row cache: the newest version of keys read lately, so that a read of a hot
    /// key answers without searching the memtables and levels (0: none; at most
    /// [`MAX_ROW_CACHE_BYTES`]). Only with the `row-cache` feature (on by default; the npm
    /// package's browser engine leaves it out).
    pub row_cache_bytes: usize,
    /// Long work (building a flush's SST, a compaction's merge) gives the host a turn
    /// ([`PageStore::yield_now`](crate::store::PageStore::yield_now)) after producing about this
    /// many bytes, so no single task of a browser tab runs for long. Must be > 0.
    pub work_slice_bytes: usize,
    /// At most this many expiry-index entries are handled by one purge slice of the maintenance
    /// step (each slice is one atomic write).
    pub purge_slice_keys: usize,
    /// An SST is compacted once at least this share of its rows is estimated expired from its
    /// expiry percentiles (0.0..=1.0; Milvus's trigger).
    pub expiry_compaction_share: f64,
    /// An SST older than this is compacted (SlateDB's periodic compaction), so expired rows and
    /// tombstones in levels nothing else touches still go. `None` = never.
    pub periodic_compaction_ms: Option<i64>,
    /// Bytes a binding puts in front of every value for its own use (the npm package's one-byte
    /// type tag). A value may be [`MAX_VALUE_LEN`](crate::MAX_VALUE_LEN) bytes plus this, so the
    /// caller's own value can still be `MAX_VALUE_LEN` long. 0 for Rust callers; at most
    /// [`MAX_VALUE_HEADER_BYTES`].
    pub value_header_bytes: usize,
    /// Trust the clock over the time the database last handed out. An open refuses a database
    /// whose stored time is more than [`MAX_SEED_LEAD_MS`] ahead of the clock (a bad reading
    /// was stored, or the clock was set back): time would stand still there, and no key would
    /// expire until the clock caught up. With this set, the open takes the clock's time instead.
    /// Keys that expired only because of the bad time become live again until their own expiry
    /// (their expire events may fire a second time then); keys written while it was in force
    /// keep the expiry it gave them. Turn it on for one open, once the clock is known good.
    pub reset_clock: bool,
    /// Merge compactions on a thread of their own (the `threads` feature, natively): the
    /// maintenance step that finds one due starts it and returns, and a later step installs
    /// its result, while writes, reads and flushes go on. Its result is what the same
    /// compaction run inline would have written (`compaction/job.rs` says why). While one runs
    /// no other starts: `compact()` and a write that finds L0 at its stall limit wait for it and
    /// install it first. Closing drops a running one (nothing of it was written). Off by
    /// default: the maintenance step then runs each compaction itself. Without the feature
    /// (wasm, `no_std`) an open that asks for it fails with `UNSUPPORTED`.
    pub background_compaction: bool,
}

/// How far the time a database last handed out may be ahead of the clock at open before the
/// open is refused (see [`DbOptions::reset_clock`]): one day.
pub const MAX_SEED_LEAD_MS: i64 = 86_400_000;

impl Default for DbOptions {
    fn default() -> Self {
        DbOptions {
            default_ttl_ms: None,
            durability: Durability::Durable,
            page_size: 16 * 1024,
            memtable_flush_bytes: 4 * 1024 * 1024,
            memtable_stall_bytes: 16 * 1024 * 1024,
            memtable_max_age_ms: 60_000,
            relaxed_commit_interval_ms: 100,
            l0_compaction_trigger: 4,
            sst_target_bytes: 2 * 1024 * 1024,
            level1_target_bytes: 16 * 1024 * 1024,
            level_size_multiplier: 10,
            page_cache_bytes: 8 * 1024 * 1024,
            row_cache_bytes: 4 * 1024 * 1024,
            work_slice_bytes: 256 * 1024,
            purge_slice_keys: 1_000,
            expiry_compaction_share: 0.5,
            periodic_compaction_ms: Some(24 * 60 * 60 * 1000),
            value_header_bytes: 0,
            reset_clock: false,
            background_compaction: false,
        }
    }
}

impl DbOptions {
    /// Check the options' numbers against each other (the default TTL is checked with the other
    /// TTLs, see `namespace::validate_ttl`).
    pub(crate) fn validate(&self) -> Result<()> {
        let o = self;
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
        if o.row_cache_bytes > MAX_ROW_CACHE_BYTES {
            return fail("row_cache_bytes must be at most 1 GiB");
        }
        if o.value_header_bytes > MAX_VALUE_HEADER_BYTES {
            return fail("value_header_bytes must be at most 64");
        }
        if o.background_compaction && !cfg!(feature = "threads") {
            return Err(Error::new(
                ErrorKind::Unsupported,
                "DbOptions: background_compaction needs threads",
            ));
        }
        Ok(())
    }
}

/// The most bytes [`DbOptions::value_header_bytes`] may put in front of a value: a header is a
/// binding's tag, and one of any size would lift the value limit it is added to.
pub const MAX_VALUE_HEADER_BYTES: usize = 64;

/// The largest row cache [`DbOptions::row_cache_bytes`] may ask for: its slots are allocated
/// at its first fill, and a cache that large already holds more than the hot keys of any store
/// this engine is built for.
pub const MAX_ROW_CACHE_BYTES: usize = 1 << 30;

/// How many times `l0_compaction_trigger` L0 may hold, short-lived SSTs included, before it is
/// merged all the same (the compaction planner), and before writes compact inline (the write
/// path's back-pressure).
pub(crate) const L0_STALL_FACTOR: usize = 3;

/// Where compactions merge on a thread of their own ([`DbOptions::background_compaction`]): how
/// many times `l0_compaction_trigger` L0 may hold before a write waits for that thread. The wait
/// is the only back-pressure there (no write compacts inline), so it is a last resort, as in
/// RocksDB (writes slow at 20 L0 files and stop at 36, against a trigger of 4): 24 SSTs at the
/// default trigger. A read checks each L0 SST's key filter, so while the thread is behind a read
/// may check up to this many more than usual.
#[cfg(feature = "threads")]
pub(crate) const BACKGROUND_L0_STALL_FACTOR: usize = 6;

/// The expiry a put gives its key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ttl {
    /// The database's default TTL ([`DbOptions::default_ttl_ms`]), or no expiry if it has none.
    #[default]
    Default,
    /// Never expires.
    NoExpiry,
    /// Expires this many ms after the write (must be > 0).
    ExpireAfter(u64),
    /// Expires at this absolute time (ms since the Unix epoch). A time not in the future leaves the
    /// key absent, as Redis does.
    ExpireAt(i64),
    /// Keeps the key's current expiry (Redis `KEEPTTL`); a new key gets no expiry.
    Keep,
}

/// When a put is allowed to write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PutCondition {
    /// Always.
    #[default]
    Always,
    /// Only if no live key exists (Redis `NX`).
    IfAbsent,
    /// Only if a live key exists (Redis `XX`).
    IfPresent,
}

/// Options of one put.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PutOptions {
    /// The key's expiry.
    pub ttl: Ttl,
    /// The condition under which the put writes.
    pub condition: PutCondition,
}

impl PutOptions {
    /// A put that expires after `ms` milliseconds.
    pub fn expire_after(ms: u64) -> Self {
        PutOptions {
            ttl: Ttl::ExpireAfter(ms),
            ..Default::default()
        }
    }
}

/// Conditions of `expire` / `expire_at`, as Redis `EXPIRE NX|XX|GT|LT`. For `gt`/`lt` a key
/// without expiry counts as expiring at infinity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExpireCondition {
    /// Only if the key has no expiry.
    pub nx: bool,
    /// Only if the key has an expiry.
    pub xx: bool,
    /// Only if the new expiry is later than the current one.
    pub gt: bool,
    /// Only if the new expiry is earlier than the current one.
    pub lt: bool,
}

/// A namespace's TTL rules (see [`Db::namespace`](super::Db::namespace)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NamespaceOptions {
    /// TTL in ms for puts in the namespace that give none; `None` = no expiry.
    pub default_ttl_ms: Option<u64>,
    /// Longer or missing TTLs are clamped to this many ms; `None` = no limit.
    pub max_ttl_ms: Option<u64>,
}

/// What [`get_ex`](super::Db::get_ex) does to the key's expiry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GetExOptions {
    /// Expire this many ms from now (> 0).
    ExpireAfter(u64),
    /// Expire at this time (ms since the Unix epoch; not in the future removes the key).
    ExpireAt(i64),
    /// Remove the expiry.
    Persist,
}

/// A key the purge removed because it expired (one per expired key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpiredEntry {
    /// The namespace's name (`""` for the default namespace).
    pub namespace: alloc::string::String,
    /// The key.
    pub key: Vec<u8>,
    /// Its last value.
    pub value: Vec<u8>,
    /// When it expired.
    pub expire_at: i64,
}

/// What an expire hook may return instead of letting the key go: a new value and expiry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replacement {
    /// The value the key is rewritten with.
    pub value: Vec<u8>,
    /// Its expiry (must not be due already; `Ttl::Default` uses the namespace default).
    pub ttl: Ttl,
}

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

impl PurgeReport {
    /// Add what a later purge did to this report (its `more_due` is the one that stands).
    pub(crate) fn absorb(&mut self, later: PurgeReport) {
        self.removed += later.removed;
        self.rewritten += later.rewritten;
        self.stale += later.stale;
        self.expired.extend(later.expired);
        self.hook_errors.extend(later.hook_errors);
        self.more_due = later.more_due;
    }
}

/// A function given the report of each reclaim the engine runs by itself, when a write found the
/// store full (see [`Db::set_reclaim_listener`](super::Db::set_reclaim_listener)): its
/// `expired` entries are expire events, each delivered once, here and nowhere else.
pub type ReclaimListener = Rc<dyn Fn(&PurgeReport)>;

/// A live key as a read returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The key.
    pub key: Vec<u8>,
    /// Its value.
    pub value: Vec<u8>,
    /// When it expires (ms since the Unix epoch), or `None` if it never does.
    pub expire_at: Option<i64>,
}

/// Which keys a scan returns: `[start, end)` intersected with `prefix`, in key order (or reverse),
/// at most `limit`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanOptions {
    /// Only keys starting with these bytes.
    pub prefix: Option<Vec<u8>>,
    /// Inclusive lower bound.
    pub start: Option<Vec<u8>>,
    /// Exclusive upper bound.
    pub end: Option<Vec<u8>>,
    /// At most this many entries.
    pub limit: Option<usize>,
    /// Largest key first.
    pub reverse: bool,
}
