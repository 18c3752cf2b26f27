//! What an open asks of its store, counted in round trips (calls of a store method; IndexedDB
//! reads any number of pages in one): the manifest read and the commit that takes the writer
//! role, then, at once, every SST's metadata page and the listings of WAL and metadata pages;
//! the WAL pages themselves only when something is left to replay.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::{run, small, T0};
use ttlkv::store::{
    Commit, ManifestRecord, MemoryStore, PageId, PageKind, PageStore, StoreFuture,
    MAX_MANIFEST_VERSION,
};
use ttlkv::{Db, ErrorKind, FakeClock};

/// A store that forwards every call to a memory store and records the method called.
#[derive(Clone, Default)]
struct Recording {
    inner: MemoryStore,
    calls: Rc<RefCell<Vec<&'static str>>>,
}

impl Recording {
    fn record(&self, method: &'static str) {
        self.calls.borrow_mut().push(method);
    }
}

impl PageStore for Recording {
    fn read_manifest(&self) -> StoreFuture<'_, Option<ManifestRecord>> {
        self.record("read_manifest");
        self.inner.read_manifest()
    }
    fn get_page(&self, id: PageId) -> StoreFuture<'_, Option<Vec<u8>>> {
        self.record("get_page");
        self.inner.get_page(id)
    }
    fn list_pages(&self, kind: PageKind) -> StoreFuture<'_, Vec<PageId>> {
        self.record("list_pages");
        self.inner.list_pages(kind)
    }
    fn commit(&self, commit: Commit) -> StoreFuture<'_, ()> {
        self.record("commit");
        self.inner.commit(commit)
    }
    fn get_pages(&self, ids: Vec<PageId>) -> StoreFuture<'_, Vec<Option<Vec<u8>>>> {
        self.record("get_pages");
        self.inner.get_pages(ids)
    }
}

/// What every open asks: read the manifest, commit the writer role, then at once read the
/// metadata pages and list the WAL and metadata pages.
const EVERY_OPEN: [&str; 5] = [
    "read_manifest",
    "commit",
    "get_pages",
    "list_pages",
    "list_pages",
];

/// The store calls of one open of `store`, in order (those made at once sorted).
fn calls_of_an_open(store: &MemoryStore, clock: &FakeClock) -> Vec<&'static str> {
    let recording = Recording {
        inner: store.clone(),
        ..Recording::default()
    };
    let _db = run(Db::open(recording.clone(), clock.clone(), small())).expect("open");
    let mut calls = recording.calls.borrow().clone();
    calls[2..5].sort_unstable();
    calls
}

#[test]
fn an_open_after_a_clean_close_reads_no_wal_page() {
    let store = MemoryStore::new();
    let clock = FakeClock::new(T0);
    let db = run(Db::open(store.clone(), clock.clone(), small())).expect("open");
    for i in 0..200u32 {
        run(db.put(format!("key{i:04}").as_bytes(), b"value")).expect("put");
    }
    run(db.flush()).expect("flush");
    assert!(db.stats().levels.iter().any(|l| !l.ssts.is_empty()));
    run(db.close()).expect("close");

    assert_eq!(calls_of_an_open(&store, &clock), EVERY_OPEN);
}

#[test]
fn an_open_with_unflushed_writes_reads_their_wal_pages_in_one_round_trip() {
    let store = MemoryStore::new();
    let clock = FakeClock::new(T0);
    let db = run(Db::open(store.clone(), clock.clone(), small())).expect("open");
    run(db.put(b"unflushed", b"value")).expect("put");
    // No close: the write is only in the WAL, as after a crash.
    drop(db);

    assert_eq!(
        calls_of_an_open(&store, &clock),
        [&EVERY_OPEN[..], &["get_pages"]].concat()
    );
    let db = run(Db::open(store.clone(), clock.clone(), small())).expect("reopen");
    assert_eq!(
        run(db.get(b"unflushed")).expect("get"),
        Some(b"value".to_vec())
    );
}

/// A database of one key on `store`, closed; its manifest as stored.
async fn closed_database(store: &MemoryStore, clock: &FakeClock) -> ManifestRecord {
    let db = Db::open(store.clone(), clock.clone(), small())
        .await
        .unwrap();
    db.put(b"k", b"v").await.unwrap();
    db.close().await.unwrap();
    store.read_manifest().await.unwrap().unwrap()
}

/// Commit `manifest` (or none) and `puts` straight to `store`, over its manifest `record`.
async fn commit_over(
    store: &MemoryStore,
    record: &ManifestRecord,
    manifest: Option<ManifestRecord>,
    puts: Vec<(PageId, Vec<u8>)>,
) {
    let commit = Commit {
        expected_manifest_version: record.version,
        manifest,
        puts,
        deletes: Vec::new(),
    };
    store.commit(commit).await.unwrap();
}

#[test]
fn an_open_refuses_a_listed_wal_page_numbered_past_any_next_one_as_corruption() {
    // A WAL page numbered u64::MAX leaves no number for the next segment: the open computed
    // `last + 1`, which panics in a debug build and wraps in a release one.
    let store = MemoryStore::new();
    let clock = FakeClock::new(T0);
    run(async {
        let record = closed_database(&store, &clock).await;
        let puts = vec![(PageId::wal(u64::MAX), vec![0; 16])];
        commit_over(&store, &record, None, puts).await;
        let Err(e) = Db::open(store.clone(), clock.clone(), small()).await else {
            panic!("the open succeeded");
        };
        assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
        assert!(e.message().contains("leaves none after it"), "{e}");
    });
}

#[test]
fn an_open_refuses_a_manifest_version_it_could_not_number_the_next_commit_after() {
    for (version, opens) in [
        (MAX_MANIFEST_VERSION - 1, true),
        (MAX_MANIFEST_VERSION, false),
    ] {
        let store = MemoryStore::new();
        let clock = FakeClock::new(T0);
        run(async {
            // The same manifest, at `version`.
            let record = closed_database(&store, &clock).await;
            let manifest = ManifestRecord {
                version,
                bytes: record.bytes.clone(),
            };
            commit_over(&store, &record, Some(manifest), Vec::new()).await;
            match Db::open(store.clone(), clock.clone(), small()).await {
                Ok(db) => {
                    assert!(opens, "version {version} opened");
                    assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"v"[..]));
                }
                Err(e) => {
                    assert!(!opens, "version {version}: {e}");
                    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
                    assert!(e.message().contains("manifest version"), "{e}");
                }
            }
        });
    }
}
