//! The LSM engine: memtable, WAL with group commit, flush, the read path over memtables and
//! levels with a page cache, leveled compaction with the TTL compaction filter, atomic batches,
//! scans, and the maintenance step.
//!
//! It sees storage only through [`PageStore`](crate::store::PageStore) and time only through
//! [`Clock`](crate::clock::Clock); it knows bytes only through [`format`](crate::format).
//! [`Db`] is the public handle; everything else here is the machinery behind it, one job per
//! file: `write` (ops → rows), `wal` (group commit), `read` (point lookups), `merge` (ordered
//! iteration), `scan` (range reads), `flush`, `compaction`, `retention` (which versions survive),
//! `purge` (the expiry index walk), `namespace`, `snapshot`, `recovery` (open), `maintenance`
//! (the step and the next wake-up), `commit` (manifest changes through the commit gate).

mod batch;
mod commit;
mod compaction;
mod db;
mod flush;
mod keys;
mod maintenance;
mod memtable;
mod merge;
mod namespace;
mod notify;
mod options;
mod page_cache;
mod purge;
mod read;
mod recovery;
mod retention;
mod scan;
mod snapshot;
mod sst_writer;
mod state;
mod stats;
mod version;
mod wal;
mod work_slices;
mod write;

pub use batch::{BatchOp, WriteBatch};
pub use db::Db;
pub use maintenance::Maintenance;
pub use options::{
    DbOptions, Durability, Entry, ExpireCondition, ExpiredEntry, GetExOptions, NamespaceOptions,
    PutCondition, PutOptions, Replacement, ScanOptions, Ttl, MAX_SEED_LEAD_MS,
};
pub use purge::{ExpireHook, PurgeReport};
pub use snapshot::Snapshot;
pub use stats::{LevelStats, SstStats, Stats};
pub use write::{CallRecord, MAX_TTL_MS};
