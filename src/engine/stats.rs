//! [`Stats`]: what a caller (or the demo page) can see of the engine's shape.
//!
//! Owns the `Inner` method [`stats`](Inner::stats), which reads the state and changes nothing.

use alloc::vec::Vec;

use super::state::Inner;

/// One SST as [`Stats`] reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct SstStats {
    /// The SST id.
    pub id: u64,
    /// Bytes of data pages.
    pub bytes: u64,
    /// Rows (all versions and tombstones).
    pub rows: u64,
    /// Rows that are tombstones.
    pub tombstones: u64,
    /// Earliest expiry of any row.
    pub min_expire_at: Option<i64>,
    /// Latest expiry of any row.
    pub max_expire_at: Option<i64>,
    /// Expiry at which 20/40/60/80/100 % of the rows with a TTL have expired.
    pub expiry_percentiles: Option<[i64; 5]>,
    /// When the SST was written.
    pub creation_ts: i64,
}

/// One level as [`Stats`] reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelStats {
    /// 0 for L0.
    pub level: usize,
    /// Its SSTs (L0 newest first, deeper levels in key order).
    pub ssts: Vec<SstStats>,
}

/// A picture of the engine.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// Bytes held by memtables (active and waiting to be flushed).
    pub memtable_bytes: usize,
    /// Bytes of WAL: pending plus committed pages not yet flushed.
    pub wal_bytes: usize,
    /// The highest sequence number issued.
    pub last_seq: u64,
    /// WAL group commits since open.
    pub wal_commits: u64,
    /// Bytes of decoded pages in the page cache.
    pub cache_bytes: usize,
    /// Page cache (hits, misses) since open.
    pub cache_hits: u64,
    /// See `cache_hits`.
    pub cache_misses: u64,
    /// Bytes the row cache holds ([`DbOptions::row_cache_bytes`](super::DbOptions::row_cache_bytes)).
    pub row_cache_bytes: usize,
    /// Reads of the newest version (`get`, `has`, `ttl`) the row cache answered since open.
    pub row_cache_hits: u64,
    /// See `row_cache_hits`: those it did not.
    pub row_cache_misses: u64,
    /// Expiry-index rows the purges walked since open: the entries they handled, and the
    /// tombstones of entries handled before that they had to pass. Beside the number of keys
    /// they removed, it shows what a purge costs (O(expired keys), whatever their expiries).
    pub purge_rows_walked: u64,
    /// Bytes held by the point indexes of the SSTs in the tree (where each key lies, built in
    /// memory for SSTs read often on a store that shares its pages; 0 without the
    /// `point-index` feature).
    pub point_index_bytes: usize,
    /// The levels.
    pub levels: Vec<LevelStats>,
}

impl Inner {
    pub(crate) fn stats(&self) -> Stats {
        let st = self.state.borrow();
        let (cache_hits, cache_misses) = st.cache.hit_counts();
        let (row_cache_bytes, row_cache_hits, row_cache_misses) = st.rows.counts();
        let active_bytes = st.active.borrow().bytes();
        let frozen_bytes: usize = st.frozen.iter().map(|f| f.table.borrow().bytes()).sum();
        Stats {
            memtable_bytes: active_bytes + frozen_bytes,
            wal_bytes: st.wal.bytes(),
            last_seq: st.last_seq,
            wal_commits: st.wal.commits,
            cache_bytes: st.cache.bytes(),
            cache_hits,
            cache_misses,
            row_cache_bytes,
            row_cache_hits,
            row_cache_misses,
            purge_rows_walked: st.purge_rows_walked,
            point_index_bytes: st
                .version
                .levels
                .iter()
                .flatten()
                .map(|s| s.point_index_bytes())
                .sum(),
            levels: st
                .version
                .levels
                .iter()
                .enumerate()
                .map(|(level, ssts)| LevelStats {
                    level,
                    ssts: ssts
                        .iter()
                        .map(|s| SstStats {
                            id: s.id(),
                            bytes: s.bytes(),
                            rows: s.meta.row_count,
                            tombstones: s.meta.tombstone_count,
                            min_expire_at: s.meta.min_expire_at,
                            max_expire_at: s.meta.max_expire_at,
                            expiry_percentiles: s.meta.expiry_percentiles,
                            creation_ts: s.meta.creation_ts,
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}
