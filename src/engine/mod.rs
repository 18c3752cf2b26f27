//! The LSM engine: memtable, WAL with group commit, flush, the read path over memtables and
//! levels with a page cache, leveled compaction with the TTL compaction filter, atomic batches,
//! scans, and the maintenance step.
//!
//! It sees storage only through [`PageStore`](crate::store::PageStore) and time only through
//! [`Clock`](crate::clock::Clock); it knows bytes only through [`format`](crate::format).
//! [`Db`] is the public handle; everything else here is the machinery behind it, one job per
//! file, in layers that only import downwards (`tests/source_layout.rs` checks there is no
//! circle):
//!
//! 1. Plain data and rules, which know nothing of the engine's state: `options` (what callers
//!    ask for and get back, the expire hook, shared tunables), `keys` (the internal key space),
//!    `memtable`, `retention` (which versions survive), `version` (the SSTs by level),
//!    `page_cache`, `row_cache` (its entries: `row_cache_slot`), `point_index` (where an SST's
//!    keys lie), `sst_writer`, `wal` (the
//!    WAL's bookkeeping), `batch`, `lock` (the async lock),
//!    `work_slices`.
//! 2. `state`: `Inner` and its mutable `State`, made of the above.
//! 3. The parts that work on the state, each an `impl Inner` block in its own file: `recovery`
//!    (open), `commit` (manifest changes through the commit gate), `group_commit` (making the WAL
//!    durable), `read` (point lookups), `merge` (ordered iteration), `scan` (range reads),
//!    `namespace` (keyspaces and their TTL rules), `write` (ops → rows), `flush`, `compaction`
//!    (plan, run, page GC), `purge` (the expiry index walk), `reclaim` (freeing a full store
//!    and trying again), `maintenance` (the step and the next wake-up), `stats`.
//! 4. The handles: `db` ([`Db`]) and `snapshot` ([`Snapshot`]).

mod batch;
mod commit;
mod compaction;
mod db;
mod flush;
mod group_commit;
mod keys;
mod lock;
mod maintenance;
mod map_key;
mod memtable;
mod memtable_filter;
mod memtable_map;
mod merge;
mod namespace;
mod options;
mod page_cache;
#[cfg(feature = "point-index")]
mod point_index;
mod purge;
mod read;
mod reclaim;
mod recovery;
mod retention;
mod row_cache;
#[cfg(feature = "row-cache")]
mod row_cache_slot;
mod scan;
mod snapshot;
mod sst_probe;
mod sst_writer;
mod state;
mod stats;
mod version;
mod wal;
mod work_slices;
mod write;

pub use batch::{BatchOp, WriteBatch};
pub use db::{Db, Lookup};
pub use maintenance::Maintenance;
pub use namespace::MAX_TTL_MS;
pub use options::{
    DbOptions, Durability, Entry, ExpireCondition, ExpireHook, ExpiredEntry, GetExOptions,
    NamespaceOptions, PurgeReport, PutCondition, PutOptions, ReclaimListener, Replacement,
    ScanOptions, Ttl, MAX_ROW_CACHE_BYTES, MAX_SEED_LEAD_MS, MAX_VALUE_HEADER_BYTES,
};
pub use snapshot::Snapshot;
pub use stats::{LevelStats, SstStats, Stats};
pub use write::ops::CallRecord;
