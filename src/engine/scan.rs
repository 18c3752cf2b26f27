//! Range reads: the user-facing scan of one namespace at a read point (sequence number and
//! time), and the raw range read the purge uses on the expiry index. Both walk the tree through
//! a [`MergeCursor`] while the read point is pinned, so concurrent overwrites cannot prune a
//! version the scan is about to see.
//!
//! Owns the `Inner` methods [`scan_at`](Inner::scan_at) and [`range`](Inner::range); of the state,
//! only the read pins in `State::snapshots`, held for the length of a scan.

use alloc::vec::Vec;

use super::keys::{internal_key, namespace_end, namespace_start, prefix_successor, user_key};
use super::memtable::{is_live, MemVersion};
use super::merge::{MergeCursor, Next};
use super::options::{Entry, ScanOptions};
use super::state::{Inner, ReadPin};
use crate::error::Result;
use crate::format::key_order::key_below;

impl Inner {
    /// Live entries of namespace `ns` selected by `options`, as of `read_seq` and time `now`.
    pub(crate) async fn scan_at(
        &self,
        ns: u32,
        options: &ScanOptions,
        read_seq: u64,
        now: i64,
    ) -> Result<Vec<Entry>> {
        let mut lower = namespace_start(ns);
        let mut upper = namespace_end(ns);
        for k in [&options.prefix, &options.start].into_iter().flatten() {
            let k = internal_key(ns, k);
            if k > lower {
                lower = k;
            }
        }
        let prefix_end = options
            .prefix
            .as_ref()
            .map(|p| prefix_successor(&internal_key(ns, p)));
        let end = options.end.as_ref().map(|e| Some(internal_key(ns, e)));
        for k in [prefix_end, end].into_iter().flatten().flatten() {
            if upper.as_ref().is_none_or(|u| k < *u) {
                upper = Some(k);
            }
        }
        let limit = options.limit.unwrap_or(usize::MAX);
        if limit == 0 || upper.as_ref().is_some_and(|u| *u <= lower) {
            return Ok(Vec::new());
        }
        let (rows, _walked) = self
            .range(
                &lower,
                upper.as_deref(),
                options.reverse,
                limit,
                read_seq,
                Some(now),
            )
            .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(key, v)| {
                let expire_at = v.expire_at;
                v.value.map(|value| Entry {
                    key: user_key(&key).to_vec(),
                    value,
                    expire_at,
                })
            })
            .collect())
    }

    /// Up to `limit` keys in `[lower, upper)` whose newest version at `read_seq` is a value,
    /// with that version. With `live_at`, rows expired at that time are skipped; without, expiry
    /// is ignored (the purge reads expiry-index rows, which expire with their keys).
    /// Also says how many keys it walked to find them (the ones returned, and the tombstones
    /// and hidden rows it passed).
    pub(crate) async fn range(
        &self,
        lower: &[u8],
        upper: Option<&[u8]>,
        reverse: bool,
        limit: usize,
        read_seq: u64,
        live_at: Option<i64>,
    ) -> Result<(Vec<(Vec<u8>, MemVersion)>, u64)> {
        let (memtables, version, _pin) = {
            let mut st = self.state.borrow_mut();
            st.check_open()?;
            let pin = ReadPin::new(self, &mut st, read_seq, live_at.unwrap_or(i64::MIN));
            (st.memtables_newest_first(), st.version.clone(), pin)
        };
        let runs = version
            .levels
            .iter()
            .enumerate()
            .flat_map(|(level, ssts)| {
                if level == 0 {
                    ssts.iter()
                        .map(|s| alloc::vec![s.clone()])
                        .collect::<Vec<_>>()
                } else {
                    alloc::vec![ssts.clone()]
                }
            })
            .filter(|r| !r.is_empty())
            .collect();
        let mut cursor =
            MergeCursor::open(self, memtables, runs, lower, upper, reverse, read_seq).await?;
        let mut out = Vec::new();
        let mut walked = 0;
        while let Some(next) = cursor.next(self).await? {
            walked += 1;
            // The key, and its newest version at the scan's read point (if any).
            let (key, v) = match next {
                Next::Lone(lone) => {
                    let (row, _) = lone.row_and_bytes()?;
                    let v = (row.seq <= read_seq).then(|| MemVersion::of_row(&row));
                    (row.key.to_vec(), v)
                }
                Next::Versions(key, versions) => {
                    let v = versions.into_iter().find(|v| v.seq <= read_seq);
                    (key, v)
                }
            };
            let outside = if reverse {
                key_below(&key, lower)
            } else {
                upper.is_some_and(|u| !key_below(&key, u))
            };
            if outside {
                break;
            }
            let Some(v) = v else {
                continue;
            };
            let visible = match live_at {
                Some(now) => is_live(&v, now),
                None => v.value.is_some(),
            };
            if visible {
                out.push((key, v));
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok((out, walked))
    }
}
