//! The point-read path: memtables, then L0 newest first, then one SST per deeper level, through
//! the page cache (or, where the store shares its pages, the pages where they lie). A memtable
//! whose filter rules the key out is not searched (see `MemtableFilter`); each SST is first asked
//! what it tells without a page (`sst_probe.rs`: its range and key filter, or its point index,
//! which gives the key's row). It returns the newest version at or below a sequence number, raw
//! (a tombstone or expired, maybe): callers decide liveness at read time.
//!
//! A read at the newest sequence number ([`lookup_newest`](Inner::lookup_newest), what
//! `get_entry`, `has` and `ttl` use; `get` asks the same row cache through
//! [`with_cached_newest`](Inner::with_cached_newest)) asks the row cache first and fills it (see
//! `RowCache`). Where no page has to be waited for, `get` is answered without a future, its value
//! lent where it lies (`with_searched_newest`).
//!
//! Owns the `Inner` methods [`load_page`](Inner::load_page), [`lookup`](Inner::lookup),
//! [`lookup_newest`](Inner::lookup_newest) (the row cache, then `search_newest`),
//! [`with_cached_newest`](Inner::with_cached_newest) (an answer lent from the row cache, or the
//! hash for `search_newest`), `with_searched_newest` (`point-index`: the search without a
//! wait) and the private `lookup_hashed`, `lookup_in_version`, `lookup_in_sst`, `keep_row`,
//! `newest_from` (a key's versions over page boundaries) and `ssts_for` (the SSTs a read asks, in
//! order); of the state, it fills and reads `State::cache` (the page cache) and `State::rows`
//! (the row cache).

use super::memtable::{live_value, MemVersion};
use super::memtable_filter::MemtableFilter;
use super::page_cache::CacheFill;
use super::sst_probe::Probe;
use super::state::Inner;
use super::version::{SstHandle, Version};
use crate::error::{Error, Result};
use crate::format::key_order::{key_below, keys_equal};
#[cfg(feature = "point-index")]
use crate::format::RowRef;
use crate::format::{key_hash, DataPage};
use crate::store::PageId;

impl Inner {
    /// Data page `index` of `sst`. Where the store shares its pages
    /// ([`PageStore::shared_page`](crate::store::PageStore::shared_page)), the page where it
    /// lies: in this process's own memory, as this engine wrote it, so neither checked nor cached,
    /// and decoded once per SST handle ([`SstHandle::shared_page`]). Else from the page cache, or
    /// from the store, verified as it arrives (checksum, every row, the sort order) and cached
    /// when `fill` says so.
    pub(crate) async fn load_page(
        &self,
        sst: &SstHandle,
        index: usize,
        fill: CacheFill,
    ) -> Result<DataPage> {
        let index = sst.page_number(index)?;
        if let Some(page) = self.shared_page(sst, index) {
            return page;
        }
        let id = PageId::sst_data(sst.id(), index);
        let cached = {
            let mut st = self.state.borrow_mut();
            match fill {
                CacheFill::Keep => st.cache.get(id),
                CacheFill::Skip => st.cache.peek(id),
            }
        };
        if let Some(page) = cached {
            return Ok(page);
        }
        let bytes = self
            .store()
            .ok_or_else(Error::closed)?
            .get_page(id)
            .await?
            .ok_or_else(|| Error::corruption("missing").context(id))?;
        let page = DataPage::decode(bytes).map_err(|e| e.context(id))?;
        if fill == CacheFill::Keep {
            let mut st = self.state.borrow_mut();
            // A closed database keeps no page, not even the one a cache of no room keeps.
            if !st.closed {
                st.cache.insert(id, page.clone());
            }
        }
        Ok(page)
    }

    /// The newest version of internal key `key` with `seq <= read_seq`, from any source.
    pub(crate) async fn lookup(&self, key: &[u8], read_seq: u64) -> Result<Option<MemVersion>> {
        self.lookup_hashed(key, MemtableFilter::hash(key), read_seq)
            .await
    }

    /// The newest version of internal key `key` there is (at the newest sequence number handed
    /// out): from the row cache if it holds the key, else as [`search_newest`](Self::search_newest)
    /// finds it.
    pub(crate) async fn lookup_newest(&self, key: &[u8]) -> Result<Option<MemVersion>> {
        let hash = MemtableFilter::hash(key);
        {
            let st = self.state.borrow();
            if let Some(v) = st.rows.get(key, hash, st.last_seq) {
                return Ok(Some(v));
            }
        }
        self.search_newest(key, hash).await
    }

    /// The newest version of internal key `key` there is, the row cache passed over (it missed:
    /// `hash` is the key's [`MemtableFilter::hash`]), as [`lookup`](Self::lookup) finds it at
    /// the newest sequence number handed out; then kept in the row cache if no write began
    /// meanwhile. (A rollback meanwhile cannot have removed what was found: a version in the
    /// memtables is found without waiting, and one in the levels is durable.)
    pub(crate) async fn search_newest(&self, key: &[u8], hash: u64) -> Result<Option<MemVersion>> {
        let read_seq = self.state.borrow().last_seq;
        let found = self.lookup_hashed(key, hash, read_seq).await?;
        if let Some(v) = &found {
            let mut st = self.state.borrow_mut();
            if st.last_seq == read_seq {
                st.rows.fill(hash, &v.row(key));
            }
        }
        Ok(found)
    }

    /// Where the row cache holds the newest version of internal key `key` there is (what
    /// [`lookup_newest`](Self::lookup_newest) would answer at once): `f` of its value if that
    /// is live at the time `now` reads (`None`: a tombstone, or expired), lent rather than
    /// copied, once `current` says the read may go on. Else, a miss counted and nothing else
    /// read, the key's [`MemtableFilter::hash`] for [`search_newest`](Self::search_newest).
    /// `now` and then `current` run with the state not borrowed: a clock may run the app's
    /// code, so the caller's check of its handle (open, and `key` still in its keyspace: an
    /// error, or `false` to search instead) comes after the clock. `f` runs with the state
    /// borrowed, so it must not call into the engine.
    pub(crate) fn with_cached_newest<R>(
        &self,
        key: &[u8],
        now: impl FnOnce() -> Result<i64>,
        current: impl FnOnce() -> Result<bool>,
        f: impl FnOnce(Option<&[u8]>) -> R,
    ) -> Result<Result<R, u64>> {
        let hash = MemtableFilter::hash(key);
        {
            let st = self.state.borrow();
            if !st.rows.holds(key, hash, st.last_seq) {
                st.rows.missed();
                return Ok(Err(hash));
            }
        }
        let now = now()?;
        if !current()? {
            self.state.borrow().rows.missed();
            return Ok(Err(hash));
        }
        let st = self.state.borrow();
        Ok(match st.rows.hit(key, hash, st.last_seq) {
            Some(row) => Ok(f(live_value(row.expire_at, row.value, now))),
            // Only if `now` ran the app's code, and that changed the state: search instead.
            None => Err(hash),
        })
    }

    /// [`lookup`](Self::lookup), `hash` the key's [`MemtableFilter::hash`].
    async fn lookup_hashed(
        &self,
        key: &[u8],
        hash: u64,
        read_seq: u64,
    ) -> Result<Option<MemVersion>> {
        let version = {
            let st = self.state.borrow();
            for table in st.memtables_newest() {
                if let Some(v) = table.borrow().get(key, hash, read_seq) {
                    return Ok(Some(v.clone()));
                }
            }
            st.version.clone()
        };
        self.lookup_in_version(&version, key, read_seq).await
    }

    /// The newest version of `key` at or below `read_seq` among the SSTs of `version`.
    async fn lookup_in_version(
        &self,
        version: &Version,
        key: &[u8],
        read_seq: u64,
    ) -> Result<Option<MemVersion>> {
        let hash = key_hash(key);
        for sst in ssts_for(version, key) {
            if let Some(v) = self.lookup_in_sst(sst, key, hash, read_seq).await? {
                return Ok(Some(v));
            }
        }
        Ok(None)
    }

    /// The newest version of `key` at or below `read_seq` in one SST (its versions may run over
    /// a page boundary).
    /// `hash` is the key's [`key_hash`].
    async fn lookup_in_sst(
        &self,
        sst: &SstHandle,
        key: &[u8],
        hash: u64,
        read_seq: u64,
    ) -> Result<Option<MemVersion>> {
        match self.probe_at_once(sst, key, hash, read_seq, true, MemVersion::of_row)? {
            Probe::Absent => return Ok(None),
            #[cfg(feature = "point-index")]
            Probe::Found(version) => return Ok(Some(version)),
            #[cfg(not(feature = "point-index"))]
            Probe::Found(never, _) => match never {},
            Probe::Search => {}
        }
        let index = sst.page_for(key);
        match sst.meta.pages.get(index) {
            Some(page_ref) if !key_below(key, &page_ref.first_key) => {
                let page = self.load_page(sst, index, CacheFill::Keep).await?;
                let row_index = page.lower_bound(key)?;
                self.newest_from(sst, key, read_seq, index, page, row_index)
                    .await
            }
            _ => Ok(None),
        }
    }

    /// Where no page has to be read (a memtable holds the key, or each SST the read asks rules
    /// it out by its range or key filter, or finds its row through its point index, whose
    /// pages the store shares: memory storage, SSTs read often): the newest version of internal
    /// key `key` there is, `f` of its value if that is live at time `now` (`None`: absent, a
    /// tombstone or expired), an SST's row lent where it lies (a memtable's version is copied
    /// out first), and kept in the row cache as [`search_newest`](Self::search_newest) keeps
    /// it. `hash` is the key's [`MemtableFilter::hash`]. `None` (nothing read but what a search
    /// reads again, `f` not called) where a page has to be read: then `search_newest`. For a
    /// `get` that missed the row cache ([`with_cached_newest`](Self::with_cached_newest)); `f`
    /// must not call into the engine.
    #[cfg(feature = "point-index")]
    pub(crate) fn with_searched_newest<R>(
        &self,
        key: &[u8],
        hash: u64,
        now: i64,
        f: impl Fn(Option<&[u8]>) -> R,
    ) -> Result<Option<R>> {
        let (read_seq, version) = {
            let st = self.state.borrow();
            let read_seq = st.last_seq;
            let in_memtable = st
                .memtables_newest()
                .find_map(|table| table.borrow().get(key, hash, read_seq).cloned());
            if let Some(v) = in_memtable {
                drop(st);
                self.keep_row(hash, &v.row(key));
                return Ok(Some(f(live_value(v.expire_at, v.value.as_deref(), now))));
            }
            (read_seq, st.version.clone())
        };
        let sst_hash = key_hash(key);
        let answer = |row: &RowRef<'_>| {
            self.keep_row(hash, row);
            f(live_value(row.expire_at, row.value, now))
        };
        for sst in ssts_for(&version, key) {
            match self.probe_at_once(sst, key, sst_hash, read_seq, false, answer)? {
                Probe::Absent => {}
                Probe::Found(answer) => return Ok(Some(answer)),
                Probe::Search => return Ok(None),
            }
        }
        Ok(Some(f(None)))
    }

    /// The row cache's [`fill`](super::row_cache::RowCache::fill) with `row`, unless the state
    /// is borrowed (an `f` of an answer from the cache called back into the engine, which it
    /// must not): the cache is passed by then, never a panic.
    #[cfg(feature = "point-index")]
    fn keep_row(&self, hash: u64, row: &RowRef<'_>) {
        if let Ok(mut st) = self.state.try_borrow_mut() {
            st.rows.fill(hash, row);
        }
    }

    /// The newest version of `key` at or below `read_seq` among its rows in `sst`, from row
    /// `row_index` of `page` (data page `index`) on: no row of `key` lies before it.
    async fn newest_from(
        &self,
        sst: &SstHandle,
        key: &[u8],
        read_seq: u64,
        mut index: usize,
        mut page: DataPage,
        mut row_index: usize,
    ) -> Result<Option<MemVersion>> {
        loop {
            while row_index < page.len() {
                let row = page.row(row_index)?;
                if !keys_equal(row.key, key) {
                    return Ok(None);
                }
                if row.seq <= read_seq {
                    return Ok(Some(MemVersion::of_row(&row)));
                }
                row_index += 1;
            }
            index += 1;
            match sst.meta.pages.get(index) {
                Some(page_ref) if !key_below(key, &page_ref.first_key) => {
                    page = self.load_page(sst, index, CacheFill::Keep).await?;
                    row_index = 0;
                }
                _ => return Ok(None),
            }
        }
    }
}

/// The SSTs of `version` that may hold `key`, in the order a read asks them: every SST of L0,
/// newest first, then the one of each deeper level whose keys reach `key`.
fn ssts_for<'v>(version: &'v Version, key: &'v [u8]) -> impl Iterator<Item = &'v SstHandle> {
    version
        .levels
        .iter()
        .enumerate()
        .flat_map(move |(level, ssts)| {
            let from = if level == 0 {
                0
            } else {
                ssts.partition_point(|s| key_below(s.last_key(), key))
            };
            let to = if level == 0 { ssts.len() } else { from + 1 };
            ssts.get(from..to.min(ssts.len())).unwrap_or_default()
        })
        .map(|sst| &**sst)
}
