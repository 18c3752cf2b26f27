//! The current shape of the tree: which SSTs are in which level, as an immutable [`Version`]
//! shared behind `Rc`. Readers clone the `Rc` and keep a consistent view; an SST's pages are
//! deleted only once no version or reader holds its [`SstHandle`] any more.

use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::RefCell;
#[cfg(feature = "point-index")]
use core::cell::{Cell, OnceCell};

#[cfg(feature = "point-index")]
use super::point_index::PointIndex;
use crate::error::{Error, Result};
use crate::format::key_order::key_below;

use crate::format::{DataPage, SearchAid, SstMeta};
use crate::store::PageId;

/// An SST that is (or was) part of the tree: its metadata, loaded once, its size (summed once:
/// the planner asks for it on every wake-up computation), the prefixes of its pages' last keys
/// (built once searches show the SST is read often), the data pages a store that shares its
/// pages has handed out for it, and (`point-index`) where each of its keys lies, once lookups
/// show it is read often.
#[derive(Debug)]
pub(crate) struct SstHandle {
    pub meta: SstMeta,
    bytes: u64,
    /// Its first and last keys, copied out of the page list: a point read compares them with
    /// its key in every level's binary search, and here they are one load away, not three.
    first_key: Box<[u8]>,
    last_key: Box<[u8]>,
    last_key_search: SearchAid,
    /// Shared pages by index, each decoded once: a later read of one finds it here instead of
    /// searching the store's map and reading the page's header again. They hold the store's own
    /// bytes (no copy), which live as long as this handle anyway (see the module docs).
    shared: RefCell<Vec<Option<DataPage>>>,
    /// Point lookups that reached this SST's rows, until its index is built.
    #[cfg(feature = "point-index")]
    lookups: Cell<u64>,
    /// Its [`PointIndex`] once built; `None` inside if it could not be (see `point_index`).
    #[cfg(feature = "point-index")]
    point_index: OnceCell<Option<PointIndex>>,
}

/// Lookups of an SST, as a share of its rows, before its [`PointIndex`] is built. Building reads
/// every row's key once (a few tens of nanoseconds a row); a lookup with the index saves about
/// half a microsecond of searching. An SST read by a sixteenth as many lookups as it has rows
/// has paid for it; one read less (a short-lived SST a compaction soon replaces) never builds.
#[cfg(feature = "point-index")]
const LOOKUPS_PER_ROW_BEFORE_INDEX: u64 = 16;

/// At least this many lookups before an index is built, however few the rows.
#[cfg(feature = "point-index")]
const LOOKUPS_BEFORE_INDEX: u64 = 64;

/// Every page of SST `meta`: its metadata page, then its data pages in order (what deleting
/// the SST deletes).
pub(crate) fn sst_pages(meta: &SstMeta) -> impl Iterator<Item = PageId> {
    let id = meta.id;
    let data_pages = u32::try_from(meta.pages.len()).unwrap_or(u32::MAX);
    core::iter::once(PageId::sst_meta(id))
        .chain((0..data_pages).map(move |i| PageId::sst_data(id, i)))
}

impl SstHandle {
    pub(crate) fn new(meta: SstMeta) -> SstHandle {
        let bytes = meta.data_bytes();
        SstHandle {
            first_key: meta.first_key().unwrap_or(&[]).into(),
            last_key: meta.last_key().unwrap_or(&[]).into(),
            meta,
            bytes,
            last_key_search: SearchAid::default(),
            shared: RefCell::new(Vec::new()),
            #[cfg(feature = "point-index")]
            lookups: Cell::new(0),
            #[cfg(feature = "point-index")]
            point_index: OnceCell::new(),
        }
    }

    /// Its [`PointIndex`], built by `build` at the lookup that shows it is read often (counted
    /// by each call that says it is `counted`: a get that the search without a wait hands on to
    /// the search that waits counts once, not twice). `None` where it cannot be: the store does
    /// not share its pages, the SST is too large, or a page would not decode (an error building
    /// it is kept as "no index": the search meets that page, and fails, only for the keys that
    /// lie on it).
    #[cfg(feature = "point-index")]
    pub(crate) fn point_index(
        &self,
        counted: bool,
        build: impl FnOnce(&SstHandle) -> Result<Option<PointIndex>>,
    ) -> Option<&PointIndex> {
        if let Some(built) = self.point_index.get() {
            return built.as_ref();
        }
        if !counted {
            return None;
        }
        let lookups = self.lookups.get() + 1;
        self.lookups.set(lookups);
        let due = (self.meta.row_count / LOOKUPS_PER_ROW_BEFORE_INDEX).max(LOOKUPS_BEFORE_INDEX);
        if lookups < due {
            return None;
        }
        let built = build(self).unwrap_or(None);
        self.point_index.get_or_init(|| built).as_ref()
    }

    /// The index of the first data page whose last key is `>= key` (the only page that can hold
    /// `key`'s newest version), or the number of pages if there is none.
    pub(crate) fn page_for(&self, key: &[u8]) -> usize {
        let pages = &self.meta.pages;
        let range = self.last_key_search.narrow(key, pages.len(), || {
            Some(pages.iter().map(|p| p.last_key.as_slice()).collect())
        });
        let within = pages.get(range.clone()).unwrap_or_default();
        range.start + within.partition_point(|p| key_below(&p.last_key, key))
    }

    /// Data page `index` as the `u32` its page id carries: `Corruption` for an SST of more pages
    /// than page ids can name.
    pub(crate) fn page_number(&self, index: usize) -> Result<u32> {
        u32::try_from(index)
            .map_err(|_| Error::corruption("too many pages").context(PageId::sst_meta(self.id())))
    }

    /// Data page `index` as a store that shares its pages handed it out before, if it did.
    pub(crate) fn shared_page(&self, index: u32) -> Option<DataPage> {
        let index = usize::try_from(index).ok()?;
        self.shared.borrow().get(index)?.clone()
    }

    /// Keep data page `index`, shared by the store, for the next [`shared_page`](Self::shared_page).
    pub(crate) fn keep_shared_page(&self, index: u32, page: DataPage) {
        let Ok(index) = usize::try_from(index) else {
            return;
        };
        if index >= self.meta.pages.len() {
            return;
        }
        let mut shared = self.shared.borrow_mut();
        if shared.is_empty() {
            shared.resize(self.meta.pages.len(), None);
        }
        shared[index] = Some(page);
    }

    /// Bytes its [`PointIndex`] holds (0 if it has none).
    pub(crate) fn point_index_bytes(&self) -> usize {
        #[cfg(feature = "point-index")]
        if let Some(Some(index)) = self.point_index.get() {
            return index.bytes();
        }
        0
    }

    pub(crate) fn id(&self) -> u64 {
        self.meta.id
    }

    pub(crate) fn first_key(&self) -> &[u8] {
        &self.first_key
    }

    pub(crate) fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// Whether `[lo, hi]` (inclusive) overlaps this SST's key range.
    pub(crate) fn overlaps(&self, lo: &[u8], hi: &[u8]) -> bool {
        !key_below(hi, self.first_key()) && !key_below(self.last_key(), lo)
    }

    /// Bytes of the SST's data pages.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// The SSTs by level: `levels[0]` is L0, newest first (ranges may overlap); every deeper level is
/// one sorted run of non-overlapping SSTs in key order, older than the level above it.
#[derive(Debug, Default, Clone)]
pub(crate) struct Version {
    pub levels: Vec<Vec<Rc<SstHandle>>>,
}

impl Version {
    /// The SST ids per level, as the manifest records them.
    pub(crate) fn level_ids(&self) -> Vec<Vec<u64>> {
        self.levels
            .iter()
            .map(|l| l.iter().map(|s| s.id()).collect())
            .collect()
    }

    /// Bytes of data pages in `level`.
    pub(crate) fn level_bytes(&self, level: usize) -> u64 {
        self.levels
            .get(level)
            .map_or(0, |l| l.iter().map(|s| s.bytes()).sum())
    }

    /// The deepest level holding any SST.
    pub(crate) fn deepest_nonempty(&self) -> Option<usize> {
        self.levels.iter().rposition(|l| !l.is_empty())
    }
}

#[cfg(all(test, feature = "point-index"))]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::format::{RowFeatures, FORMAT_VERSION};
    use core::cell::Cell;

    fn handle(rows: u64) -> SstHandle {
        SstHandle::new(SstMeta {
            id: 1,
            format_version: FORMAT_VERSION,
            row_features: RowFeatures::V1_WITH_EXPIRY,
            creation_ts: 0,
            min_ts: 0,
            max_ts: 0,
            min_seq: 1,
            max_seq: 1,
            min_expire_at: None,
            max_expire_at: None,
            row_count: rows,
            tombstone_count: 0,
            ttl_row_count: 0,
            expiry_percentiles: None,
            pages: Vec::new(),
            key_filter: None,
        })
    }

    #[test]
    fn an_index_is_built_once_at_the_lookup_that_shows_the_sst_is_read_often() {
        let sst = handle(16 * 100);
        let builds = Cell::new(0);
        let build = |_: &SstHandle| {
            builds.set(builds.get() + 1);
            Ok(None)
        };
        for _ in 0..99 {
            assert!(sst.point_index(true, build).is_none());
            // Asked without counting (the search without a wait): neither counted nor built.
            assert!(sst.point_index(false, build).is_none());
        }
        assert_eq!(builds.get(), 0, "a sixteenth of the rows: 100 lookups");
        assert!(sst.point_index(true, build).is_none());
        assert_eq!(builds.get(), 1);
        for _ in 0..1_000 {
            assert!(sst.point_index(true, build).is_none());
        }
        assert_eq!(builds.get(), 1, "\"no index\" is kept too");
    }

    #[test]
    fn a_build_that_fails_leaves_the_sst_without_an_index_and_is_not_tried_again() {
        let sst = handle(0);
        let builds = Cell::new(0);
        let build = |_: &SstHandle| {
            builds.set(builds.get() + 1);
            Err(Error::corruption("a damaged row"))
        };
        for _ in 0..1_000 {
            assert!(sst.point_index(true, build).is_none());
        }
        assert_eq!(builds.get(), 1);
        assert_eq!(sst.point_index_bytes(), 0);
    }
}
