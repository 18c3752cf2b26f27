//! The conformance suite has teeth: stores that break one promise of the `PageStore` contract
//! (each a small wrapper around a `MemoryStore`) fail the behaviour that checks that promise.

use std::future::poll_fn;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::task::Poll;

use futures::executor::block_on;
use futures::FutureExt;
use ttlkv::store::{
    conformance, Commit, ManifestRecord, MemoryStore, PageId, PageKind, PageStore, StoreFuture,
};
use ttlkv::{Error, ErrorKind};

/// Whether `behaviour` panics (a conformance failure).
fn fails(behaviour: impl std::future::Future<Output = ()>) -> bool {
    catch_unwind(AssertUnwindSafe(|| block_on(behaviour))).is_err()
}

/// The version of `store`'s manifest, read without waiting (the store has no latency).
fn current_version(store: &MemoryStore) -> u64 {
    match store.read_manifest().now_or_never() {
        Some(Ok(manifest)) => manifest.map_or(0, |m| m.version),
        other => panic!("a latency-free memory store must answer at once, got {other:?}"),
    }
}

/// Rewrites `commit` to name `store`'s current manifest version (and its manifest, if any, to be
/// newer), so the store's own precondition check always passes.
fn retarget(store: &MemoryStore, commit: &mut Commit) {
    commit.expected_manifest_version = current_version(store);
    if let Some(m) = &mut commit.manifest {
        m.version = m.version.max(commit.expected_manifest_version + 1);
    }
}

/// Returns `Poll::Pending` once (waking itself), so other futures get polled in between.
async fn yield_once() {
    let mut yielded = false;
    poll_fn(|cx| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
    .await;
}

/// Forwards reads; `commit` is supplied by each broken store.
macro_rules! forward_reads {
    () => {
        fn read_manifest(&self) -> StoreFuture<'_, Option<ManifestRecord>> {
            self.0.read_manifest()
        }
        fn get_page(&self, id: PageId) -> StoreFuture<'_, Option<Vec<u8>>> {
            self.0.get_page(id)
        }
    };
}

/// Never fences: every commit is applied as if it named the current manifest version.
struct IgnoresPrecondition(MemoryStore);

impl PageStore for IgnoresPrecondition {
    forward_reads!();
    fn list_pages(&self, kind: PageKind) -> StoreFuture<'_, Vec<PageId>> {
        self.0.list_pages(kind)
    }
    fn commit(&self, mut commit: Commit) -> StoreFuture<'_, ()> {
        retarget(&self.0, &mut commit);
        self.0.commit(commit)
    }
}

/// Lists pages newest first.
struct ListsDescending(MemoryStore);

impl PageStore for ListsDescending {
    forward_reads!();
    fn list_pages(&self, kind: PageKind) -> StoreFuture<'_, Vec<PageId>> {
        Box::pin(self.0.list_pages(kind).map(|ids| {
            ids.map(|mut ids| {
                ids.reverse();
                ids
            })
        }))
    }
    fn commit(&self, commit: Commit) -> StoreFuture<'_, ()> {
        self.0.commit(commit)
    }
}

/// Applies puts before deletes, so a page both put and deleted in one commit disappears.
struct PutsBeforeDeletes(MemoryStore);

impl PageStore for PutsBeforeDeletes {
    forward_reads!();
    fn list_pages(&self, kind: PageKind) -> StoreFuture<'_, Vec<PageId>> {
        self.0.list_pages(kind)
    }
    fn commit(&self, mut commit: Commit) -> StoreFuture<'_, ()> {
        let deletes = commit.deletes.clone();
        commit.puts.retain(|(id, _)| !deletes.contains(id));
        self.0.commit(commit)
    }
}

/// Checks the precondition, then lets other callers run, then writes whatever is current:
/// check-then-act outside one atomic step.
struct ChecksOutsideTheCommit(MemoryStore);

impl PageStore for ChecksOutsideTheCommit {
    forward_reads!();
    fn list_pages(&self, kind: PageKind) -> StoreFuture<'_, Vec<PageId>> {
        self.0.list_pages(kind)
    }
    fn commit(&self, mut commit: Commit) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            if current_version(&self.0) != commit.expected_manifest_version {
                return Err(Error::new(ErrorKind::Fenced, "stale"));
            }
            yield_once().await;
            retarget(&self.0, &mut commit);
            self.0.commit(commit).await
        })
    }
}

/// Writes a commit of large pages more slowly than a small one, with no queue between its calls:
/// a small commit called after a large one lands first.
struct LargeCommitsLandLater(MemoryStore);

impl PageStore for LargeCommitsLandLater {
    forward_reads!();
    fn list_pages(&self, kind: PageKind) -> StoreFuture<'_, Vec<PageId>> {
        self.0.list_pages(kind)
    }
    fn commit(&self, commit: Commit) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let bytes: usize = commit.puts.iter().map(|(_, page)| page.len()).sum();
            for _ in 0..bytes / (64 * 1024) {
                yield_once().await;
            }
            self.0.commit(commit).await
        })
    }
}

#[test]
fn a_store_that_lets_a_later_commit_land_first_is_caught() {
    let store = LargeCommitsLandLater(MemoryStore::new());
    assert!(fails(
        conformance::commits_in_flight_together_land_in_the_order_called(&store)
    ));
}

#[test]
fn a_store_that_ignores_the_precondition_is_caught() {
    let store = IgnoresPrecondition(MemoryStore::new());
    assert!(fails(
        conformance::stale_precondition_fails_fenced_and_writes_nothing(&store)
    ));
}

#[test]
fn a_store_that_lists_out_of_order_is_caught() {
    let store = ListsDescending(MemoryStore::new());
    assert!(fails(
        conformance::list_pages_returns_one_kind_in_ascending_order(&store)
    ));
}

#[test]
fn a_store_that_applies_puts_before_deletes_is_caught() {
    let store = PutsBeforeDeletes(MemoryStore::new());
    assert!(fails(
        conformance::put_and_delete_of_the_same_page_in_one_commit(&store)
    ));
}

#[test]
fn a_store_that_checks_the_precondition_outside_the_commit_is_caught() {
    let store = ChecksOutsideTheCommit(MemoryStore::new());
    assert!(fails(
        conformance::concurrent_commits_on_one_version_let_exactly_one_through(&store)
    ));
}

#[test]
fn the_broken_stores_pass_the_behaviours_they_do_not_break() {
    assert!(!fails(
        conformance::stale_precondition_fails_fenced_and_writes_nothing(&ListsDescending(
            MemoryStore::new()
        ))
    ));
    assert!(!fails(
        conformance::list_pages_returns_one_kind_in_ascending_order(&IgnoresPrecondition(
            MemoryStore::new()
        ))
    ));
    assert!(!fails(
        conformance::stale_precondition_fails_fenced_and_writes_nothing(&ChecksOutsideTheCommit(
            MemoryStore::new()
        ))
    ));
    assert!(!fails(
        conformance::a_commit_of_megabytes_is_fenced_whole_or_lands_whole(&LargeCommitsLandLater(
            MemoryStore::new()
        ))
    ));
}
