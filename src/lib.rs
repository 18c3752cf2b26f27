//! # ttlkv
//!
//! A key-value store with per-key time-to-live: an LSM engine whose rows carry their expiry, on an
//! abstract, atomic page store. `#![no_std]` + `alloc`; the same core runs natively and in
//! WebAssembly (see the `ttlkv-web` crate for the browser bindings).
//!
//! Rooms: [`format`] owns the bytes, [`store`] owns where pages live, [`engine`] owns the LSM, and
//! [`clock`] owns time. This file only wires them together.
#![no_std]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(any(test, feature = "std"))]
extern crate std;

pub mod clock;
pub mod engine;
pub mod error;
pub mod format;
mod join;
mod small_sort;
pub mod store;

#[cfg(feature = "std")]
pub use clock::SystemClock;
pub use clock::{Clock, FakeClock, MonotonicClock};
pub use engine::{
    BatchOp, CallRecord, Db, DbOptions, Durability, Entry, ExpireCondition, ExpireHook,
    ExpiredEntry, GetExOptions, LevelStats, Lookup, Maintenance, NamespaceOptions, PurgeReport,
    PutCondition, PutOptions, ReclaimListener, Replacement, ScanOptions, Snapshot, SstStats, Stats,
    Ttl, WriteBatch, MAX_ROW_CACHE_BYTES, MAX_SEED_LEAD_MS, MAX_TTL_MS, MAX_VALUE_HEADER_BYTES,
};
pub use error::{Error, ErrorKind, Result};

/// The longest key accepted, in bytes (keys must also be at least 1 byte).
pub const MAX_KEY_LEN: usize = 4096;
/// The longest value accepted, in bytes.
pub const MAX_VALUE_LEN: usize = 16 * 1024 * 1024;
