//! What an SST tells of a key without a wait: that it holds no version of the key (the key lies
//! outside its keys, or its key filter rules the key out), or, through its point index, the
//! key's row, lent where it lies; else that its pages have to be searched ([`Probe`]). Both
//! searches of the read path (`read.rs`) ask it: the one that may wait, and the one that may not.
//!
//! Owns the `Inner` methods [`shared_page`](Inner::shared_page) (a data page where a store that
//! shares its pages holds it, decoded once per SST handle), [`probe_at_once`](Inner::probe_at_once)
//! and the private `indexed_row` and `build_point_index`, and [`Probe`].

#[cfg(feature = "point-index")]
use super::point_index::PointIndex;
use super::state::Inner;
use super::version::SstHandle;
use crate::error::Result;
#[cfg(feature = "point-index")]
use crate::format::key_order::keys_equal;
use crate::format::{DataPage, RowRef};
use crate::store::PageId;

impl Inner {
    /// Data page `index` of `sst` if the store shares its pages, kept with the handle.
    pub(crate) fn shared_page(&self, sst: &SstHandle, index: u32) -> Option<Result<DataPage>> {
        if let Some(page) = sst.shared_page(index) {
            return Some(Ok(page));
        }
        let id = PageId::sst_data(sst.id(), index);
        let bytes = self.store()?.shared_page(id)?;
        let page = DataPage::decode_trusted(bytes).map_err(|e| e.context(id));
        if let Ok(page) = &page {
            sst.keep_shared_page(index, page.clone());
        }
        Some(page)
    }

    /// What `sst` can tell of `key`'s newest version at or below `read_seq` without waiting:
    /// that it holds none (the key lies outside its keys, or its key filter rules the key out),
    /// or, through its point index, `found` of the row (lent where it lies, decoded once); else
    /// its pages have to be searched. `hash` is the key's
    /// [`key_hash`](crate::format::key_hash). `counted`: the lookup counts toward building the
    /// SST's point index (the search that waits, which follows the search without a wait where
    /// it found no index).
    pub(crate) fn probe_at_once<R>(
        &self,
        sst: &SstHandle,
        key: &[u8],
        hash: u64,
        read_seq: u64,
        counted: bool,
        found: impl FnOnce(&RowRef<'_>) -> R,
    ) -> Result<Probe<R>> {
        if key < sst.first_key() || key > sst.last_key() {
            return Ok(Probe::Absent);
        }
        #[cfg(feature = "point-index")]
        if let Some(index) = sst.point_index(counted, |sst| self.build_point_index(sst)) {
            return self.indexed_row(sst, index, key, hash, read_seq, found);
        }
        // Only an index tells a version's row without a page.
        #[cfg(not(feature = "point-index"))]
        let _ = (read_seq, counted, found);
        let ruled_out = sst
            .meta
            .key_filter
            .as_ref()
            .is_some_and(|filter| !filter.may_contain_hash(hash));
        Ok(if ruled_out {
            Probe::Absent
        } else {
            Probe::Search
        })
    }

    /// [`probe_at_once`](Self::probe_at_once) through `sst`'s point index: its candidate rows,
    /// then the key's rows newest first, walked by their places in the page. `Search` where
    /// the versions too new for `read_seq` run to the end of a page (they may go on in the
    /// next: rare, a key with many versions a snapshot holds), or where a page is not at hand
    /// (never, as the index is only built where every page is shared).
    #[cfg(feature = "point-index")]
    fn indexed_row<R>(
        &self,
        sst: &SstHandle,
        index: &PointIndex,
        key: &[u8],
        hash: u64,
        read_seq: u64,
        found: impl FnOnce(&RowRef<'_>) -> R,
    ) -> Result<Probe<R>> {
        for (page_index, at) in index.candidates(hash) {
            let Some(page) = u32::try_from(page_index)
                .ok()
                .and_then(|i| self.shared_page(sst, i))
            else {
                return Ok(Probe::Search);
            };
            let page = page?;
            let (mut row, mut next) = page.row_at(at)?;
            if !keys_equal(row.key, key) {
                continue;
            }
            loop {
                if row.seq <= read_seq {
                    return Ok(Probe::Found(found(&row)));
                }
                if next == page.rows_len() {
                    return Ok(Probe::Search);
                }
                (row, next) = page.row_at(next)?;
                if !keys_equal(row.key, key) {
                    return Ok(Probe::Absent);
                }
            }
        }
        Ok(Probe::Absent)
    }

    /// `sst`'s [`PointIndex`] if the store shares every one of its pages (see `point_index.rs`).
    #[cfg(feature = "point-index")]
    fn build_point_index(&self, sst: &SstHandle) -> Result<Option<PointIndex>> {
        if !PointIndex::may_cover(sst.meta.row_count, sst.meta.pages.len()) {
            return Ok(None);
        }
        let mut pages = alloc::vec::Vec::with_capacity(sst.meta.pages.len());
        for index in 0..sst.meta.pages.len() {
            match self.shared_page(sst, sst.page_number(index)?) {
                Some(page) => pages.push(page?),
                None => return Ok(None),
            }
        }
        PointIndex::build(sst.meta.row_count, &pages)
    }
}

/// What an SST tells of a key's version without waiting (see `Inner::probe_at_once`).
pub(crate) enum Probe<R> {
    /// It holds no version of the key a read at its sequence number sees.
    Absent,
    /// What the probe's `found` made of the version's row.
    #[cfg(feature = "point-index")]
    Found(R),
    /// Uninhabited: only a point index finds a row (so the engine keeps no code for one).
    #[cfg(not(feature = "point-index"))]
    #[allow(dead_code)]
    Found(core::convert::Infallible, core::marker::PhantomData<R>),
    /// Its pages have to be searched.
    Search,
}
