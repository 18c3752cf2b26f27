//! [`MemoryStore`]: the in-memory [`PageStore`], for native tests and for `storage: "memory"`.
//!
//! It owns only the pages, the manifest and the optional knobs a test turns (a byte quota and an
//! artificial latency, with the `test-util` feature), plus counters a test reads. Clones share
//! one "disk", so the data outlives a dropped database handle and a test reopens by cloning. It
//! knows nothing of page contents.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::RefCell;
use core::fmt;
#[cfg(feature = "test-util")]
use core::future::Future;
use core::ops::RangeInclusive;
#[cfg(feature = "test-util")]
use core::pin::Pin;
#[cfg(feature = "test-util")]
use core::task::{Context, Poll};

use super::{
    Commit, ManifestRecord, PageBytes, PageId, PageKind, PageStore, StoreFuture, YieldFuture,
};
use crate::error::{Error, ErrorKind, Result};

/// A [`PageStore`] that keeps everything in memory.
///
/// Clones share the same data, quota, latency and counters: cloning is how a test keeps a handle
/// on the "disk" while a database owns another, and how it reopens after dropping the database.
///
/// A commit is checked in this order, and a failed check writes nothing:
/// 1. a new manifest must have a version greater than `expected_manifest_version`, else
///    [`ErrorKind::InvalidArgument`];
/// 2. the current manifest version (0 if none) must equal `expected_manifest_version`, else
///    [`ErrorKind::Fenced`];
/// 3. with a quota set (`test-util`), a commit that grows the stored bytes (page lengths plus
///    manifest bytes) past the quota fails with [`ErrorKind::QuotaExceeded`]. A commit that does
///    not grow them always passes, so a store that is over its quota (after `set_quota` lowered
///    it) can still be cleaned up.
///
/// Within one commit, deletes apply before puts (a page both deleted and put ends up present) and
/// of several puts of one page the last wins.
///
/// ```
/// use ttlkv::store::{Commit, ManifestRecord, MemoryStore, PageId, PageStore};
///
/// let disk = MemoryStore::new();
/// let handle = disk.clone();
/// futures::executor::block_on(handle.commit(Commit {
///     expected_manifest_version: 0,
///     manifest: Some(ManifestRecord { version: 1, bytes: b"m1".to_vec() }),
///     puts: vec![(PageId::wal(1), b"records".to_vec())],
///     deletes: vec![],
/// }))
/// .unwrap();
/// drop(handle);
/// assert_eq!(disk.page_count(), 1);
/// assert_eq!(disk.stored_bytes(), 2 + 7);
/// ```
#[derive(Clone, Default)]
pub struct MemoryStore {
    disk: Rc<RefCell<Disk>>,
}

/// Everything clones of one [`MemoryStore`] share.
#[derive(Default)]
struct Disk {
    /// Shared, so that [`PageStore::shared_page`] hands a page out without copying it.
    pages: BTreeMap<PageId, PageBytes>,
    manifest: Option<ManifestRecord>,
    /// Sum of page lengths plus manifest bytes, kept in step with every commit.
    stored_bytes: usize,
    #[cfg(feature = "test-util")]
    quota: Option<usize>,
    #[cfg(feature = "test-util")]
    latency: u32,
    /// [`MemoryStore::set_copies_only`]: `shared_page` serves nothing.
    #[cfg(feature = "test-util")]
    copies_only: bool,
    /// The counters tests read; with the `test-util` feature only.
    #[cfg(feature = "test-util")]
    page_reads: u64,
    #[cfg(feature = "test-util")]
    commits: u64,
    #[cfg(feature = "test-util")]
    yields: u64,
}

impl MemoryStore {
    /// An empty store with no quota and no latency.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store that holds at most `max_bytes` of pages and manifest. With the
    /// `test-util` feature.
    #[cfg(feature = "test-util")]
    pub fn with_quota(max_bytes: usize) -> Self {
        let store = Self::new();
        store.set_quota(Some(max_bytes));
        store
    }

    /// Sets (or with `None` lifts) the quota of this store and every clone; data already stored
    /// stays even if it is over the new quota. With the `test-util` feature.
    #[cfg(feature = "test-util")]
    pub fn set_quota(&self, max_bytes: Option<usize>) {
        self.with_disk(|disk| disk.quota = max_bytes);
    }

    /// This store, with every operation pending for `polls` polls before it does its work.
    /// With the `test-util` feature.
    #[cfg(feature = "test-util")]
    pub fn with_latency(self, polls: u32) -> Self {
        self.set_latency(polls);
        self
    }

    /// Makes every operation started from now on (on this store and every clone) return
    /// `Poll::Pending` `polls` times, waking its own waker each time, before it does its work.
    /// A commit takes effect, atomically, at the poll that completes it; a commit future dropped
    /// before then writes nothing. With 0 (the default) every operation completes on its first poll.
    /// With the `test-util` feature: without it, the store has no latency and no code for one.
    #[cfg(feature = "test-util")]
    pub fn set_latency(&self, polls: u32) {
        self.with_disk(|disk| disk.latency = polls);
    }

    /// With `true`, this store (and every clone) shares no page
    /// ([`shared_page`](PageStore::shared_page) answers `None`), so the engine reads every page
    /// with [`get_page`](PageStore::get_page), through its page cache and its checks, as it reads
    /// a store outside this process: how tests run those paths on memory. `false` (the default)
    /// shares them again. With the `test-util` feature.
    #[cfg(feature = "test-util")]
    pub fn set_copies_only(&self, copies_only: bool) {
        self.with_disk(|disk| disk.copies_only = copies_only);
    }

    /// Bytes stored: the sum of page lengths plus the manifest's bytes.
    pub fn stored_bytes(&self) -> usize {
        self.with_disk(|disk| disk.stored_bytes)
    }

    /// Number of pages stored, of every kind.
    pub fn page_count(&self) -> usize {
        self.with_disk(|disk| disk.pages.len())
    }

    /// Number of pages of `kind` stored.
    pub fn page_count_of(&self, kind: PageKind) -> usize {
        self.with_disk(|disk| disk.pages.range(ids_of(kind)).count())
    }

    /// Number of `get_page` calls that found a page, since creation or [`reset_counters`](Self::reset_counters).
    #[cfg(feature = "test-util")]
    pub fn page_reads(&self) -> u64 {
        self.with_disk(|disk| disk.page_reads)
    }

    /// Number of successful commits, since creation or [`reset_counters`](Self::reset_counters).
    #[cfg(feature = "test-util")]
    pub fn commits(&self) -> u64 {
        self.with_disk(|disk| disk.commits)
    }

    /// Number of [`yield_now`](PageStore::yield_now) calls (turns given to the host during long
    /// work), since creation or [`reset_counters`](Self::reset_counters).
    #[cfg(feature = "test-util")]
    pub fn yields(&self) -> u64 {
        self.with_disk(|disk| disk.yields)
    }

    /// Sets [`page_reads`](Self::page_reads), [`commits`](Self::commits) and
    /// [`yields`](Self::yields) back to 0; the data, quota and latency stay.
    #[cfg(feature = "test-util")]
    pub fn reset_counters(&self) {
        self.with_disk(|disk| {
            disk.page_reads = 0;
            disk.commits = 0;
            disk.yields = 0;
        });
    }

    /// Runs `f` on the shared state. Every borrow of the `RefCell` goes through here and ends
    /// before `f` returns; `f` never calls back into the store nor awaits, so no borrow is ever
    /// live when another begins and `borrow_mut` cannot fail.
    fn with_disk<R>(&self, f: impl FnOnce(&mut Disk) -> R) -> R {
        f(&mut self.disk.borrow_mut())
    }

    /// The future for one operation: wait out the latency, then run `work` on the disk.
    fn operation<'a, T: 'a>(
        &'a self,
        work: impl FnOnce(&mut Disk) -> Result<T> + 'a,
    ) -> StoreFuture<'a, T> {
        #[cfg(feature = "test-util")]
        let polls = self.with_disk(|disk| disk.latency);
        Box::pin(async move {
            #[cfg(feature = "test-util")]
            Latency { remaining: polls }.await;
            self.with_disk(work)
        })
    }
}

impl Disk {
    fn manifest_version(&self) -> u64 {
        self.manifest.as_ref().map_or(0, |m| m.version)
    }

    /// Checks `commit` against the current state and applies it whole, or changes nothing.
    fn apply(&mut self, commit: Commit) -> Result<()> {
        let expected = commit.expected_manifest_version;
        if let Some(manifest) = &commit.manifest {
            if manifest.version <= expected {
                return Err(Error::invalid(format!(
                    "new manifest version {} is not greater than the expected version {expected}",
                    manifest.version
                )));
            }
        }
        let current = self.manifest_version();
        if current != expected {
            return Err(Error::new(
                ErrorKind::Fenced,
                format!("commit expected manifest version {expected}, but it is {current}"),
            ));
        }
        let Commit {
            manifest,
            puts,
            deletes,
            ..
        } = commit;
        // Apply, noting (with a quota possible) what each step replaced: it is all undone if the
        // result is over the quota.
        #[cfg(feature = "test-util")]
        let mut undo: Vec<(PageId, Option<PageBytes>)> =
            Vec::with_capacity(deletes.len() + puts.len());
        let mut after = self.stored_bytes;
        for id in deletes {
            let old = self.pages.remove(&id);
            after = after.saturating_sub(old.as_ref().map_or(0, |p| p.len()));
            #[cfg(feature = "test-util")]
            undo.push((id, old));
        }
        for (id, bytes) in puts {
            after = after.saturating_add(bytes.len());
            let old = self.pages.insert(id, PageBytes::new(bytes));
            after = after.saturating_sub(old.as_ref().map_or(0, |p| p.len()));
            #[cfg(feature = "test-util")]
            undo.push((id, old));
        }
        if let Some(manifest) = &manifest {
            let old_len = self.manifest.as_ref().map_or(0, |m| m.bytes.len());
            after = after
                .saturating_sub(old_len)
                .saturating_add(manifest.bytes.len());
        }
        #[cfg(feature = "test-util")]
        if let Some(quota) = self.quota {
            if after > quota && after > self.stored_bytes {
                for (id, old) in undo.into_iter().rev() {
                    match old {
                        Some(bytes) => self.pages.insert(id, bytes),
                        None => self.pages.remove(&id),
                    };
                }
                return Err(Error::new(
                    ErrorKind::QuotaExceeded,
                    format!(
                        "commit would bring the store from {} to {after} bytes, over its quota of {quota}",
                        self.stored_bytes
                    ),
                ));
            }
        }
        if manifest.is_some() {
            self.manifest = manifest;
        }
        self.stored_bytes = after;
        #[cfg(feature = "test-util")]
        {
            self.commits = self.commits.saturating_add(1);
        }
        Ok(())
    }
}

/// Every possible id of `kind`, as a `BTreeMap` range (ids order by kind first).
fn ids_of(kind: PageKind) -> RangeInclusive<PageId> {
    PageId {
        kind,
        file: 0,
        index: 0,
    }..=PageId {
        kind,
        file: u64::MAX,
        index: u32::MAX,
    }
}

/// Returns `Poll::Pending` `remaining` times, waking its own waker each time, then completes.
#[cfg(feature = "test-util")]
struct Latency {
    remaining: u32,
}

#[cfg(feature = "test-util")]
impl Future for Latency {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.remaining == 0 {
            return Poll::Ready(());
        }
        self.remaining -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl PageStore for MemoryStore {
    fn read_manifest(&self) -> StoreFuture<'_, Option<ManifestRecord>> {
        self.operation(|disk| Ok(disk.manifest.clone()))
    }

    fn get_page(&self, id: PageId) -> StoreFuture<'_, Option<Vec<u8>>> {
        self.operation(move |disk| {
            let page = disk.pages.get(&id).map(|p| p.as_ref().clone());
            #[cfg(feature = "test-util")]
            if page.is_some() {
                disk.page_reads = disk.page_reads.saturating_add(1);
            }
            Ok(page)
        })
    }

    /// Every page. With the `test-util` feature, not while a latency is set (a store that stands
    /// in for a slow one serves every read through [`get_page`](PageStore::get_page), with its
    /// latency) nor after `set_copies_only(true)`, and counted in `page_reads` like a `get_page`
    /// that finds its page.
    fn shared_page(&self, id: PageId) -> Option<PageBytes> {
        self.with_disk(|disk| {
            #[cfg(feature = "test-util")]
            if disk.latency > 0 || disk.copies_only {
                return None;
            }
            let page = disk.pages.get(&id).cloned();
            #[cfg(feature = "test-util")]
            if page.is_some() {
                disk.page_reads = disk.page_reads.saturating_add(1);
            }
            page
        })
    }

    fn list_pages(&self, kind: PageKind) -> StoreFuture<'_, Vec<PageId>> {
        self.operation(move |disk| Ok(disk.pages.range(ids_of(kind)).map(|(id, _)| *id).collect()))
    }

    fn commit(&self, commit: Commit) -> StoreFuture<'_, ()> {
        self.operation(move |disk| disk.apply(commit))
    }

    /// With a latency set, a yield takes as many polls as any operation, so that other work
    /// interleaves with a long flush or compaction as it would on IndexedDB.
    fn yield_now(&self) -> YieldFuture<'_> {
        #[cfg(feature = "test-util")]
        {
            let polls = self.with_disk(|disk| {
                disk.yields = disk.yields.saturating_add(1);
                disk.latency
            });
            Box::pin(Latency { remaining: polls })
        }
        #[cfg(not(feature = "test-util"))]
        Box::pin(core::future::ready(()))
    }
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("MemoryStore");
        let Ok(disk) = self.disk.try_borrow() else {
            return out.field("disk", &"<in use>").finish();
        };
        out.field("manifest_version", &disk.manifest_version())
            .field("pages", &disk.pages.len())
            .field("stored_bytes", &disk.stored_bytes);
        #[cfg(feature = "test-util")]
        out.field("quota", &disk.quota)
            .field("latency", &disk.latency);
        out.finish()
    }
}
