//! The IndexedDB page store in real headless Chromium: the core's conformance suite, a database
//! that survives closing and reopening (values, TTLs, deletes, purges, flushed and unflushed
//! data), fencing between two connections, commits dropped or left unpolled half-way (nothing of
//! them lands, or only pages no manifest names), and the mapping of IndexedDB failures to error
//! codes.
//! Run with `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
//! CHROMEDRIVER=/usr/bin/chromedriver cargo test -p ttlkv-web --target wasm32-unknown-unknown`.
#![cfg(target_arch = "wasm32")]

use std::cell::Cell;
use std::rc::Rc;
use std::task::{Context, Waker};

use js_sys::{Function, Reflect};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use ttlkv::store::{conformance, Commit, ManifestRecord, PageId, PageStore, StoreFuture};
use ttlkv::{Db, DbOptions, ErrorKind, FakeClock, PutOptions, Ttl};
use ttlkv_web::store::indexeddb::database_name;
use ttlkv_web::store::IndexedDbStore;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// The time every test starts at (2026-01-01T00:00:00Z).
const T0: i64 = 1_767_225_600_000;

thread_local! {
    static NEXT: Cell<u32> = const { Cell::new(0) };
}

/// A database name no other test of this run uses (`fresh_store` deletes what an earlier run in
/// the same browser profile may have left under it).
fn unique(prefix: &str) -> String {
    let n = NEXT.with(|c| {
        c.set(c.get() + 1);
        c.get()
    });
    format!("{prefix}-{n}")
}

async fn fresh_store(prefix: &str) -> (IndexedDbStore, String) {
    let name = unique(prefix);
    IndexedDbStore::destroy(&name).await.expect("destroy");
    (IndexedDbStore::open(&name).await.expect("open"), name)
}

fn small() -> DbOptions {
    DbOptions {
        page_size: 256,
        memtable_flush_bytes: 2048,
        sst_target_bytes: 1024,
        level1_target_bytes: 2048,
        ..DbOptions::default()
    }
}

/// Database `name` opened again on a new IndexedDB connection.
async fn reopen(name: &str, clock: &FakeClock) -> Db {
    let store = IndexedDbStore::open(name).await.expect("reopen the store");
    Db::open(store, clock.clone(), small())
        .await
        .expect("reopen the database")
}

#[wasm_bindgen_test]
async fn the_indexeddb_store_passes_the_page_store_conformance_suite() {
    let mut stores = Vec::new();
    for _ in conformance::BEHAVIOURS {
        stores.push(fresh_store("conformance").await.0);
    }
    stores.reverse();
    let ran = conformance::run_all(|| stores.pop().expect("one store per behaviour")).await;
    assert_eq!(ran, conformance::BEHAVIOURS.len());
}

#[wasm_bindgen_test]
async fn a_database_on_indexeddb_survives_close_and_reopen() {
    let (store, name) = fresh_store("persist").await;
    let clock = FakeClock::new(T0);
    let db = Db::open(store, clock.clone(), small()).await.expect("open");
    let ttl = |ms| PutOptions {
        ttl: Ttl::ExpireAfter(ms),
        ..PutOptions::default()
    };
    for i in 0..300u32 {
        let key = format!("user:{i:04}");
        let options = if i % 3 == 0 {
            ttl(60_000)
        } else {
            PutOptions::default()
        };
        db.put_with_options(key.as_bytes(), format!("value {i}").as_bytes(), options)
            .await
            .expect("put");
    }
    db.delete(b"user:0001").await.expect("delete");
    db.flush().await.expect("flush");
    // Written after the flush: these live only in the WAL when the database closes.
    db.put(b"late", b"in the WAL").await.expect("put");
    db.put_with_options(b"late-ttl", b"short", ttl(10_000))
        .await
        .expect("put");
    db.close().await.expect("close");
    drop(db); // its IndexedDB connection closes with it

    let db = reopen(&name, &clock).await;
    assert_eq!(
        db.get(b"user:0002").await.expect("get"),
        Some(b"value 2".to_vec())
    );
    assert_eq!(
        db.get(b"user:0001").await.expect("get"),
        None,
        "a delete survives"
    );
    assert_eq!(
        db.get(b"late").await.expect("get"),
        Some(b"in the WAL".to_vec())
    );
    assert_eq!(db.ttl(b"user:0003").await.expect("ttl"), 60_000);
    assert_eq!(db.ttl(b"late-ttl").await.expect("ttl"), 10_000);

    clock.advance(30_000);
    assert_eq!(
        db.get(b"late-ttl").await.expect("get"),
        None,
        "expired after reopen"
    );
    let report = db.purge_expired(1000).await.expect("purge");
    assert_eq!(report.removed, 1);
    assert_eq!(report.expired[0].key, b"late-ttl".to_vec());

    clock.advance(60_000);
    let report = db.purge_expired(1000).await.expect("purge");
    assert_eq!(report.removed, 100, "every third user key had a 60 s TTL");
    db.compact().await.expect("compact");
    db.close().await.expect("close");
    drop(db); // its IndexedDB connection closes with it

    let db = reopen(&name, &clock).await;
    assert_eq!(db.get(b"user:0003").await.expect("get"), None);
    assert_eq!(db.get(b"user:0297").await.expect("get"), None);
    assert_eq!(
        db.get(b"user:0298").await.expect("get"),
        Some(b"value 298".to_vec())
    );
    let report = db.purge_expired(1000).await.expect("purge");
    assert_eq!(report.removed, 0, "a purged key is not reported twice");
    let live = db.scan(&Default::default()).await.expect("scan").len();
    assert_eq!(live, 300 - 100 - 1 + 1, "user keys left, plus `late`");
    db.close().await.expect("close");
    drop(db); // its IndexedDB connection closes with it
    IndexedDbStore::destroy(&name).await.expect("destroy");
}

/// The manifest record of `version` in the commit tests.
fn record(version: u64) -> ManifestRecord {
    ManifestRecord {
        version,
        bytes: vec![version as u8; 8],
    }
}

/// The first commit of a fresh store, where the commit tests start: manifest version 1 and the
/// page `wal/1`.
async fn commit_version_one(store: &IndexedDbStore) {
    store
        .commit(Commit {
            expected_manifest_version: 0,
            manifest: Some(record(1)),
            puts: vec![(PageId::wal(1), vec![1; 16])],
            deletes: vec![],
        })
        .await
        .expect("first commit");
}

/// Whether `store` holds page `id`.
async fn stored(store: &IndexedDbStore, id: PageId) -> bool {
    store.get_page(id).await.expect("read").is_some()
}

/// Asserts that what `commit_version_one` stored stands: manifest version 1 and `wal/1`.
async fn version_one_stands(store: &IndexedDbStore) {
    assert_eq!(store.read_manifest().await.expect("read"), Some(record(1)));
    assert!(
        stored(store, PageId::wal(1)).await,
        "wal/1, which version 1 names, was deleted"
    );
}

/// A commit of a writer that saw no manifest, once version 1 is stored: version 2, a put of
/// `wal/2` and a delete of `wal/1`, all fenced.
fn stale_commit() -> Commit {
    Commit {
        expected_manifest_version: 0,
        manifest: Some(record(2)),
        puts: vec![(PageId::wal(2), vec![2; 16])],
        deletes: vec![PageId::wal(1)],
    }
}

#[wasm_bindgen_test]
async fn a_second_connection_with_a_stale_view_is_fenced_and_writes_nothing() {
    let (first, name) = fresh_store("fence").await;
    let second = IndexedDbStore::open(&name)
        .await
        .expect("second connection");
    commit_version_one(&first).await;
    let stale = second
        .commit(stale_commit())
        .await
        .expect_err("a commit on a stale version");
    assert_eq!(stale.kind(), ErrorKind::Fenced);
    version_one_stands(&second).await;
    assert_eq!(second.get_page(PageId::wal(2)).await.expect("read"), None);
    first.close();
    second.close();
    IndexedDbStore::destroy(&name).await.expect("destroy");
}

/// Poll `commit` once, as a caller's `select!` does before another branch wins: it issues what
/// it can without waiting, and is left pending.
fn poll_once(commit: &mut StoreFuture<'_, ()>) {
    let mut cx = Context::from_waker(Waker::noop());
    assert!(
        commit.as_mut().poll(&mut cx).is_pending(),
        "a commit is not done at its first poll"
    );
}

/// A count of the page's uncaught errors from now on (a listener for the global's `error` event,
/// left in place for the rest of the run).
fn uncaught_errors() -> Rc<Cell<u32>> {
    let count = Rc::new(Cell::new(0));
    let counted = count.clone();
    let listener = Closure::<dyn FnMut(JsValue)>::new(move |_| counted.set(counted.get() + 1));
    let global = js_sys::global();
    let add: Function = Reflect::get(&global, &"addEventListener".into())
        .expect("addEventListener")
        .unchecked_into();
    add.call2(&global, &"error".into(), listener.as_ref())
        .expect("listen for uncaught errors");
    listener.forget();
    count
}

#[wasm_bindgen_test]
async fn a_fenced_commit_left_unpolled_after_its_first_poll_writes_nothing() {
    let (first, name) = fresh_store("unpolled").await;
    let second = IndexedDbStore::open(&name)
        .await
        .expect("second connection");
    commit_version_one(&first).await;
    // Every request of the stale commit is issued by its first poll; nothing polls it again
    // until its transaction has ended (the reads below wait for it).
    let mut stale = second.commit(stale_commit());
    poll_once(&mut stale);
    version_one_stands(&first).await;
    assert_eq!(first.get_page(PageId::wal(2)).await.expect("read"), None);
    let e = stale.await.expect_err("the stale commit, polled again");
    assert_eq!(e.kind(), ErrorKind::Fenced);
    first.close();
    second.close();
    IndexedDbStore::destroy(&name).await.expect("destroy");
}

#[wasm_bindgen_test]
async fn a_commit_dropped_before_its_check_passed_writes_nothing() {
    let (store, name) = fresh_store("dropped").await;
    commit_version_one(&store).await;
    // Its first slice (a page of 1.5 MiB, over the store's slice of 1 MiB) is issued at the first
    // poll, which then waits for the slice's last request; the second slice, the delete and the
    // manifest are never issued.
    let mut commit = store.commit(Commit {
        expected_manifest_version: 1,
        manifest: Some(record(2)),
        puts: vec![
            (PageId::wal(2), vec![2; 1536 * 1024]),
            (PageId::wal(3), vec![3; 16]),
        ],
        deletes: vec![PageId::wal(1)],
    });
    let uncaught = uncaught_errors();
    poll_once(&mut commit);
    drop(commit);
    version_one_stands(&store).await;
    assert_eq!(store.get_page(PageId::wal(2)).await.expect("read"), None);
    assert_eq!(store.get_page(PageId::wal(3)).await.expect("read"), None);
    // A commit small enough to be issued whole at its first poll (its delete included), dropped
    // while its check is still unanswered: its transaction is aborted, nothing lands.
    let mut whole = store.commit(Commit {
        expected_manifest_version: 1,
        manifest: Some(record(2)),
        puts: vec![(PageId::wal(4), vec![4; 16])],
        deletes: vec![PageId::wal(1)],
    });
    poll_once(&mut whole);
    drop(whole);
    version_one_stands(&store).await;
    assert_eq!(store.get_page(PageId::wal(4)).await.expect("read"), None);
    // A drop that left Rust closures on a request (idb's futures) made the request's answer
    // throw in its handler, uncaught, which aborted the transaction by accident.
    assert_eq!(uncaught.get(), 0, "uncaught errors in the page");
    store.close();
    IndexedDbStore::destroy(&name).await.expect("destroy");
}

#[wasm_bindgen_test]
async fn a_sliced_commit_left_unpolled_half_way_keeps_every_page_the_stored_manifest_names() {
    let (store, name) = fresh_store("parked").await;
    commit_version_one(&store).await;
    // A compaction's shape: an SST's data pages (the first over the store's slice of 1 MiB) and
    // its metadata page, as the engine lists them, a delete of a page version 1 names, and
    // version 2. The first poll issues the first slice and waits for its last request; nothing
    // polls the commit again, so its transaction commits by itself once that slice is done.
    let mut parked = store.commit(Commit {
        expected_manifest_version: 1,
        manifest: Some(record(2)),
        puts: vec![
            (PageId::sst_data(5, 0), vec![5; 1536 * 1024]),
            (PageId::sst_data(5, 1), vec![6; 16]),
            (PageId::sst_meta(5), vec![7; 16]),
        ],
        deletes: vec![PageId::wal(1)],
    });
    let uncaught = uncaught_errors();
    poll_once(&mut parked);
    // These reads wait for the parked commit's transaction to end.
    version_one_stands(&store).await;
    // What landed is the first slice: the SST's metadata page (first, as recovery finds the
    // SST's pages through it) and its first data page, pages no manifest names.
    assert!(
        stored(&store, PageId::sst_meta(5)).await,
        "the metadata page, issued first, landed with the first slice"
    );
    assert!(
        stored(&store, PageId::sst_data(5, 0)).await,
        "the first slice's data page landed: the transaction committed by itself"
    );
    assert_eq!(
        store.get_page(PageId::sst_data(5, 1)).await.expect("read"),
        None,
        "a put after the first slice was never issued"
    );
    assert_eq!(uncaught.get(), 0, "uncaught errors in the page");
    let e = parked
        .await
        .expect_err("the commit, polled again after its transaction ended");
    assert_eq!(e.kind(), ErrorKind::Storage);
    store.close();
    IndexedDbStore::destroy(&name).await.expect("destroy");
}

#[wasm_bindgen_test]
async fn a_closed_connection_fails_with_a_storage_error_and_writes_nothing() {
    let (store, name) = fresh_store("closed").await;
    store.close();
    let e = store
        .commit(Commit {
            expected_manifest_version: 0,
            manifest: Some(ManifestRecord {
                version: 1,
                bytes: vec![1],
            }),
            puts: vec![],
            deletes: vec![],
        })
        .await
        .expect_err("a commit on a closed connection");
    assert_eq!(e.kind(), ErrorKind::Storage);
    assert!(e.message().contains("InvalidStateError"), "{}", e.message());
    let reopened = IndexedDbStore::open(&name).await.expect("reopen");
    assert_eq!(reopened.read_manifest().await.expect("read"), None);
    reopened.close();
    IndexedDbStore::destroy(&name).await.expect("destroy");
}

/// Copy every record of the IndexedDB database of ttlkv database `from` into a new one for `to`
/// made as schema 1 made it: the two object stores, no index.
async fn copy_as_schema_one(from: &str, to: &str) {
    use idb::{Factory, ObjectStoreParams, TransactionMode};
    let factory = Factory::new().expect("IndexedDB");
    let source = factory
        .open(&database_name(from), None)
        .expect("open the source")
        .await
        .expect("open the source");
    let mut opening = factory
        .open(&database_name(to), Some(1))
        .expect("make the copy");
    opening.on_upgrade_needed(|event| {
        let db = idb::DatabaseEvent::database(&event).expect("the upgrade's database");
        for store in ["pages", "meta"] {
            db.create_object_store(store, ObjectStoreParams::new())
                .expect("a store of schema 1");
        }
    });
    let copy = opening.await.expect("make the copy");
    assert_eq!(copy.version().expect("version"), 1);
    for name in ["pages", "meta"] {
        let read = source
            .transaction(&[name], TransactionMode::ReadOnly)
            .expect("read");
        let store = read.object_store(name).expect("store");
        let keys = store
            .get_all_keys(None, None)
            .expect("keys")
            .await
            .expect("keys");
        let values = store
            .get_all(None, None)
            .expect("values")
            .await
            .expect("values");
        assert_eq!(keys.len(), values.len());
        let write = copy
            .transaction(&[name], TransactionMode::ReadWrite)
            .expect("write");
        let target = write.object_store(name).expect("store");
        for (key, value) in keys.iter().zip(&values) {
            target.put(value, Some(key)).expect("put");
        }
        write
            .commit()
            .expect("commit")
            .await
            .expect("the copy's commit");
    }
    source.close();
    copy.close();
}

#[wasm_bindgen_test]
async fn a_database_of_schema_one_keeps_its_data_and_its_commits_stay_fenced_once_opened() {
    let clock = FakeClock::new(T0);
    let (store, written) = fresh_store("schema-one-source").await;
    let db = Db::open(store, clock.clone(), small()).await.expect("open");
    for i in 0..40u32 {
        db.put(format!("k{i:02}").as_bytes(), b"flushed")
            .await
            .expect("put");
    }
    db.flush().await.expect("flush");
    db.put(b"in the wal", b"unflushed").await.expect("put");
    db.close().await.expect("close");
    let name = unique("schema-one");
    IndexedDbStore::destroy(&name).await.expect("destroy");
    copy_as_schema_one(&written, &name).await;

    // Opened by this build: upgraded to schema 2, everything there, and a commit passes its check.
    let db = reopen(&name, &clock).await;
    assert_eq!(
        db.get(b"k07").await.expect("get"),
        Some(b"flushed".to_vec())
    );
    assert_eq!(
        db.get(b"in the wal").await.expect("get"),
        Some(b"unflushed".to_vec())
    );
    db.put(b"after", b"the upgrade")
        .await
        .expect("a commit after the upgrade");
    db.flush().await.expect("a flush after the upgrade");
    db.close().await.expect("close");

    // The check counts the version the manifest record holds: behind or ahead is fenced.
    let store = IndexedDbStore::open(&name).await.expect("open the store");
    let current = store
        .read_manifest()
        .await
        .expect("read")
        .expect("a manifest");
    for expected in [current.version - 1, current.version + 1, 0] {
        let stale = store
            .commit(Commit {
                expected_manifest_version: expected,
                manifest: Some(ManifestRecord {
                    version: current.version + 2,
                    bytes: vec![9; 8],
                }),
                puts: vec![(PageId::wal(999), vec![9; 16])],
                deletes: vec![],
            })
            .await
            .expect_err("a commit expecting another version");
        assert_eq!(stale.kind(), ErrorKind::Fenced, "expected {expected}");
    }
    assert_eq!(store.read_manifest().await.expect("read"), Some(current));
    assert_eq!(store.get_page(PageId::wal(999)).await.expect("read"), None);
    store.close();
    let db = reopen(&name, &clock).await;
    assert_eq!(
        db.get(b"after").await.expect("get"),
        Some(b"the upgrade".to_vec())
    );
    db.close().await.expect("close");
    IndexedDbStore::destroy(&name).await.expect("destroy");
    IndexedDbStore::destroy(&written).await.expect("destroy");
}
