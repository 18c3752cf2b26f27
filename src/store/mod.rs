//! Storage, as the engine sees it: the [`PageStore`] trait and its implementations.
//!
//! A page store holds opaque pages addressed by [`PageId`] plus one manifest record, and applies a
//! [`Commit`] (page puts, page deletes, optionally a new manifest) **atomically**, guarded by a
//! precondition on the manifest version. That precondition is how a writer that lost its role is
//! fenced: its commits name a version that is no longer current and fail with
//! [`ErrorKind::Fenced`](crate::ErrorKind::Fenced).
//!
//! Rooms here: [`memory`] (the in-memory store), and with the `test-util` feature (test support,
//! not stable API) `faulty` (a decorator that injects failures and crashes) and `conformance` (one
//! `async fn` per behaviour, run against every store). This module knows nothing of page
//! contents: those are `format`'s business.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::fmt;
use core::future::Future;
use core::pin::Pin;

use crate::error::Result;

#[cfg(feature = "test-util")]
pub mod conformance;
#[cfg(feature = "test-util")]
pub mod faulty;
pub mod memory;

#[cfg(feature = "test-util")]
pub use faulty::{FaultPlan, FaultyStore};
pub use memory::MemoryStore;

/// What a page holds; stores may keep each kind in its own table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum PageKind {
    /// One group commit of write-ahead-log records.
    Wal = 1,
    /// An SST's metadata page (statistics, expiry percentiles, the index of its data pages).
    SstMeta = 2,
    /// One bounded-size page of an SST's rows.
    SstData = 3,
}

impl PageKind {
    /// Every kind, in order.
    pub const ALL: [PageKind; 3] = [PageKind::Wal, PageKind::SstMeta, PageKind::SstData];

    /// The kind with this numeric tag, if any.
    pub fn from_u8(tag: u8) -> Option<PageKind> {
        match tag {
            1 => Some(PageKind::Wal),
            2 => Some(PageKind::SstMeta),
            3 => Some(PageKind::SstData),
            _ => None,
        }
    }
}

/// The address of a page: its kind, the file it belongs to (WAL segment or SST id) and its index
/// within that file (always 0 except for SST data pages). Ordered by kind, file, index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PageId {
    /// What the page holds.
    pub kind: PageKind,
    /// The WAL segment number or the SST id.
    pub file: u64,
    /// The data page's index within its SST; 0 for other kinds.
    pub index: u32,
}

impl PageId {
    /// Sorts `ids` (each once, as in a listing) ascending, with nothing to do when they come
    /// sorted already, as an ordered store lists them: what a [`PageStore::list_pages`] can use
    /// to keep its promise. Duplicates collapse into one.
    pub fn sort(ids: &mut Vec<PageId>) {
        // Strictly ascending: a sorted list with a duplicate still goes through the map.
        if ids.is_sorted_by(|a, b| a < b) {
            return;
        }
        // Listed in another order (a JS adapter may list its keys in any order): sorted through
        // a map of the type the memory store keeps its pages in, read back by the same kind of
        // range as the memory store lists with, so the wasm module carries no code for it that
        // it does not carry anyway (a sort routine of its own would add kilobytes).
        let (Some(&first), Some(&last)) = (ids.iter().min(), ids.iter().max()) else {
            return;
        };
        let nothing = PageBytes::default();
        let mut by_id: BTreeMap<PageId, PageBytes> = BTreeMap::new();
        for id in ids.iter() {
            by_id.insert(*id, nothing.clone());
        }
        *ids = by_id.range(first..=last).map(|(id, _)| *id).collect();
    }

    /// The WAL page written by group commit number `segment`.
    pub const fn wal(segment: u64) -> PageId {
        PageId {
            kind: PageKind::Wal,
            file: segment,
            index: 0,
        }
    }

    /// The metadata page of SST `sst`.
    pub const fn sst_meta(sst: u64) -> PageId {
        PageId {
            kind: PageKind::SstMeta,
            file: sst,
            index: 0,
        }
    }

    /// Data page `index` of SST `sst`.
    pub const fn sst_data(sst: u64, index: u32) -> PageId {
        PageId {
            kind: PageKind::SstData,
            file: sst,
            index,
        }
    }
}

impl fmt::Display for PageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            PageKind::Wal => write!(f, "page wal/{}", self.file),
            PageKind::SstMeta => write!(f, "page sst/{}/meta", self.file),
            PageKind::SstData => write!(f, "page sst/{}/data/{}", self.file, self.index),
        }
    }
}

/// The manifest as a store keeps it: an opaque encoded manifest plus the version the commit
/// precondition compares against. Version 0 means "no manifest yet" and is never stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestRecord {
    /// Strictly increasing with every manifest a writer commits.
    pub version: u64,
    /// The encoded manifest (see `format::manifest`).
    pub bytes: Vec<u8>,
}

/// The highest manifest version a store keeps: the largest integer a JavaScript number holds
/// exactly, so that every store, those of the npm package among them, keeps a version as it is.
/// An open refuses a store whose manifest is at it or beyond (`Corruption`): it could not number
/// the next commit. No database makes that many commits.
pub const MAX_MANIFEST_VERSION: u64 = (1 << 53) - 1;

/// One atomic change to a store.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Commit {
    /// The commit applies only if the store's current manifest version equals this (0 = the store
    /// has no manifest yet); otherwise it fails with `ErrorKind::Fenced` and changes nothing.
    pub expected_manifest_version: u64,
    /// A new manifest to install, if any. Its version must be greater than the expected one.
    pub manifest: Option<ManifestRecord>,
    /// Pages to write (a page that exists is replaced).
    pub puts: Vec<(PageId, Vec<u8>)>,
    /// Pages to delete (deleting a page that does not exist is not an error).
    pub deletes: Vec<PageId>,
}

impl Commit {
    /// The number of bytes of page data and manifest this commit writes.
    pub fn bytes_written(&self) -> usize {
        self.puts.iter().map(|(_, p)| p.len()).sum::<usize>()
            + self.manifest.as_ref().map_or(0, |m| m.bytes.len())
    }
}

/// A page's bytes, shared rather than copied: what [`PageStore::shared_page`] hands out and what a
/// decoded data page reads its rows from. The `Vec` a commit brings is kept as it is (no copy
/// into a new allocation), at the cost of one more pointer to follow.
pub type PageBytes = alloc::rc::Rc<Vec<u8>>;

/// The future every [`PageStore`] method returns: boxed so the trait stays object safe, and not
/// `Send`, because in WebAssembly everything runs on one thread.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + 'a>>;

/// The future of [`PageStore::yield_now`]: it cannot fail.
pub type YieldFuture<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// Where pages live: memory, IndexedDB, or anything a host plugs in.
///
/// Contract (checked by `conformance`, with the `test-util` feature):
/// - `commit` is atomic: after a crash at any moment the store holds either everything of a commit
///   or nothing of it;
/// - `commit` checks `expected_manifest_version` against the current manifest **inside** the same
///   atomic step, and fails with `ErrorKind::Fenced` on a mismatch, writing nothing;
/// - a page or manifest read after a successful commit returns what that commit wrote;
/// - `list_pages` returns the ids of one kind in ascending order;
/// - storage that runs out of room fails with `ErrorKind::QuotaExceeded`, writing nothing.
pub trait PageStore {
    /// The current manifest, or `None` for a store nothing was ever committed to.
    fn read_manifest(&self) -> StoreFuture<'_, Option<ManifestRecord>>;
    /// The bytes of page `id`, or `None` if there is no such page.
    fn get_page(&self, id: PageId) -> StoreFuture<'_, Option<Vec<u8>>>;
    /// The ids of every page of `kind`, ascending.
    fn list_pages(&self, kind: PageKind) -> StoreFuture<'_, Vec<PageId>>;
    /// Apply `commit` atomically if its precondition holds.
    fn commit(&self, commit: Commit) -> StoreFuture<'_, ()>;
    /// The bytes of each page of `ids`, in the same order (`None` for a missing page). Opening a
    /// database reads every SST's metadata page this way; a store that can read several pages in
    /// one round trip (IndexedDB: one transaction) overrides it, the default reads them one by one.
    fn get_pages(&self, ids: Vec<PageId>) -> StoreFuture<'_, Vec<Option<Vec<u8>>>> {
        Box::pin(async move {
            let mut pages = Vec::with_capacity(ids.len());
            for id in ids {
                pages.push(self.get_page(id).await?);
            }
            Ok(pages)
        })
    }
    /// Page `id` where it lies, shared rather than copied, for a store that holds its pages in
    /// this process's memory exactly as this process committed them, so nothing outside the
    /// process can have changed them. The engine reads such a page in place: no copy, no
    /// checksum or row check (it is checked when it crosses a storage boundary, and this one
    /// never did), and no page cache (that would hold the same bytes twice). `None` (the default)
    /// means "read it with [`get_page`](Self::get_page)", which a store must also serve.
    fn shared_page(&self, id: PageId) -> Option<PageBytes> {
        let _ = id;
        None
    }
    /// Give the host a turn. Long engine work (building a flush's SST, a compaction's merge)
    /// calls this after each [`DbOptions::work_slice_bytes`](crate::DbOptions::work_slice_bytes)
    /// of output, so a host that runs the engine on its only thread (a browser tab) can handle
    /// other tasks in between. Anything may happen while it is pending: reads, writes, other
    /// commits. The default returns at once, for hosts that give the engine a thread of its own.
    fn yield_now(&self) -> YieldFuture<'_> {
        Box::pin(core::future::ready(()))
    }
}

impl<S: PageStore + ?Sized> PageStore for alloc::rc::Rc<S> {
    fn read_manifest(&self) -> StoreFuture<'_, Option<ManifestRecord>> {
        (**self).read_manifest()
    }
    fn get_page(&self, id: PageId) -> StoreFuture<'_, Option<Vec<u8>>> {
        (**self).get_page(id)
    }
    fn list_pages(&self, kind: PageKind) -> StoreFuture<'_, Vec<PageId>> {
        (**self).list_pages(kind)
    }
    fn commit(&self, commit: Commit) -> StoreFuture<'_, ()> {
        (**self).commit(commit)
    }
    fn get_pages(&self, ids: Vec<PageId>) -> StoreFuture<'_, Vec<Option<Vec<u8>>>> {
        (**self).get_pages(ids)
    }
    fn shared_page(&self, id: PageId) -> Option<PageBytes> {
        (**self).shared_page(id)
    }
    fn yield_now(&self) -> YieldFuture<'_> {
        (**self).yield_now()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn page_ids_listed_in_order_with_a_duplicate_collapse_into_one() {
        let mut ids = alloc::vec![PageId::wal(6), PageId::wal(6), PageId::wal(7)];
        PageId::sort(&mut ids);
        assert_eq!(ids, alloc::vec![PageId::wal(6), PageId::wal(7)]);
    }

    proptest! {
        #[test]
        fn page_ids_sort_like_the_standard_sort_in_any_order(
            ids in proptest::collection::vec((1u8..=3, 0u64..50, 0u32..4), 0..80)
        ) {
            let mut ids: Vec<PageId> = ids
                .into_iter()
                .map(|(kind, file, index)| PageId {
                    kind: PageKind::from_u8(kind).unwrap(),
                    file,
                    index,
                })
                .collect();
            let mut expected = ids.clone();
            expected.sort();
            expected.dedup();
            PageId::sort(&mut ids);
            prop_assert_eq!(ids, expected);
        }
    }
}
