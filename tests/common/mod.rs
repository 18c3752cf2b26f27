//! Shared test support: a database on the in-memory store with a fake clock, and a way to run
//! futures to completion.
#![allow(dead_code)]

use ttlkv::store::{FaultPlan, FaultyStore, MemoryStore};
use ttlkv::{Db, DbOptions, FakeClock};

/// The time every test starts at (2026-01-01T00:00:00Z).
pub const T0: i64 = 1_767_225_600_000;

pub fn run<F: core::future::Future>(f: F) -> F::Output {
    futures::executor::block_on(f)
}

/// A fresh database, its store (to reopen on) and its clock (to jump).
pub fn fresh(options: DbOptions) -> (Db, MemoryStore, FakeClock) {
    let store = MemoryStore::new();
    let clock = FakeClock::new(T0);
    let db = run(Db::open(store.clone(), clock.clone(), options)).expect("open");
    (db, store, clock)
}

/// Assert that an open refuses the options `at(limit + 1)` as an `InvalidArgument` whose message
/// names `option`, and takes `at(limit)`.
pub fn refused_past_its_limit(option: &str, limit: usize, at: impl Fn(usize) -> DbOptions) {
    let open = |options| run(Db::open(MemoryStore::new(), FakeClock::new(T0), options));
    let Err(e) = open(at(limit + 1)) else {
        panic!("{option} of {} was taken", limit + 1);
    };
    assert_eq!(e.kind(), ttlkv::ErrorKind::InvalidArgument, "{e}");
    assert!(e.message().contains(option), "{e}");
    open(at(limit)).expect("the limit itself is taken");
}

pub fn reopen(store: &MemoryStore, clock: &FakeClock, options: DbOptions) -> Db {
    run(Db::open(store.clone(), clock.clone(), options)).expect("reopen")
}

/// A fresh database on an in-memory store seen through a [`FaultyStore`], no fault planned yet;
/// the faulty store (to plan faults on, see [`fail_commit`]; `inner()` is the store to reopen on)
/// and the clock.
pub fn open_faulty(options: DbOptions) -> (Db, FaultyStore<MemoryStore>, FakeClock) {
    let store = FaultyStore::new(MemoryStore::new(), FaultPlan::default());
    let clock = FakeClock::new(T0);
    let db = run(Db::open(store.clone(), clock.clone(), options)).expect("open");
    (db, store, clock)
}

/// Plan the `nth` store commit from now on (1: the next) to fail.
pub fn fail_commit(faulty: &FaultyStore<MemoryStore>, nth: u64) {
    faulty.set_plan(FaultPlan {
        fail_commit: Some(nth),
        ..FaultPlan::default()
    });
}

/// Rows stored in SSTs (every version, tombstone and expiry-index row), across all levels.
pub fn stored_rows(db: &Db) -> u64 {
    db.stats()
        .levels
        .iter()
        .flat_map(|l| &l.ssts)
        .map(|s| s.rows)
        .sum()
}

/// The default options with relaxed durability: writes resolve at once and are committed in groups.
pub fn relaxed() -> DbOptions {
    DbOptions {
        durability: ttlkv::Durability::Relaxed,
        ..DbOptions::default()
    }
}

/// Options that make flushes and compactions happen with little data.
pub fn small() -> DbOptions {
    DbOptions {
        page_size: 128,
        memtable_flush_bytes: 512,
        memtable_stall_bytes: 64 * 1024,
        l0_compaction_trigger: 2,
        sst_target_bytes: 256,
        level1_target_bytes: 256,
        level_size_multiplier: 2,
        page_cache_bytes: 1024,
        // Flushes and compactions resume after a turn given to the host every few rows.
        work_slice_bytes: 300,
        ..DbOptions::default()
    }
}

/// The `PageStore` methods named, each passing its call unchanged to the store in `self.inner`:
/// a test's store writes the methods it changes and lists the others here.
#[macro_export]
macro_rules! forward_to_inner {
    ($($method:ident),* $(,)?) => { $( $crate::forward_to_inner!(@ $method); )* };
    (@ read_manifest) => {
        fn read_manifest(
            &self,
        ) -> ttlkv::store::StoreFuture<'_, Option<ttlkv::store::ManifestRecord>> {
            self.inner.read_manifest()
        }
    };
    (@ get_page) => {
        fn get_page(&self, id: ttlkv::store::PageId) -> ttlkv::store::StoreFuture<'_, Option<Vec<u8>>> {
            self.inner.get_page(id)
        }
    };
    (@ list_pages) => {
        fn list_pages(
            &self,
            kind: ttlkv::store::PageKind,
        ) -> ttlkv::store::StoreFuture<'_, Vec<ttlkv::store::PageId>> {
            self.inner.list_pages(kind)
        }
    };
    (@ commit) => {
        fn commit(&self, commit: ttlkv::store::Commit) -> ttlkv::store::StoreFuture<'_, ()> {
            self.inner.commit(commit)
        }
    };
}

/// A store whose flagged commits fail after one yield (as a real IndexedDB transaction would).
#[derive(Clone)]
pub struct SlowFail {
    pub inner: MemoryStore,
    pub fail_next_commit: std::rc::Rc<std::cell::Cell<bool>>,
}

impl ttlkv::store::PageStore for SlowFail {
    forward_to_inner!(read_manifest, get_page, list_pages);
    fn commit(&self, commit: ttlkv::store::Commit) -> ttlkv::store::StoreFuture<'_, ()> {
        if self.fail_next_commit.replace(false) {
            Box::pin(async {
                yield_once().await;
                Err(ttlkv::Error::storage("injected"))
            })
        } else {
            self.inner.commit(commit)
        }
    }
}

/// Let other futures run once (pending, waking itself).
pub async fn yield_once() {
    let mut yielded = false;
    futures::future::poll_fn(|cx| {
        if yielded {
            core::task::Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            core::task::Poll::Pending
        }
    })
    .await
}
