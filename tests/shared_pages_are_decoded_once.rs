//! On a store that shares its pages (memory storage), a point read asks the store for a data page
//! once per SST: the page, decoded, stays with the SST's handle, and later reads of it (of any of
//! its keys) reach the store no more. A compaction makes new SSTs, whose pages are asked for
//! afresh; the answers are the same throughout. The page cache is off, so every read of a page
//! that is not kept reaches the store and is counted, and so is the row cache, which would answer
//! a key read before without its page.

mod common;

use common::{fresh, run};
use ttlkv::DbOptions;

fn key(i: u32) -> String {
    format!("key-{i:05}")
}

#[test]
fn a_shared_page_is_asked_of_the_store_once_per_sst() {
    let (db, store, _clock) = fresh(DbOptions {
        page_cache_bytes: 0,
        row_cache_bytes: 0,
        ..DbOptions::default()
    });
    run(async {
        for i in 0..2_000 {
            db.put(key(i).as_bytes(), format!("value-{i}").as_bytes())
                .await
                .unwrap();
        }
        db.flush().await.unwrap();
    });
    let reads = |keys: &[u32]| {
        store.reset_counters();
        run(async {
            for &i in keys {
                let value = db.get(key(i).as_bytes()).await.unwrap();
                assert_eq!(value.as_deref(), Some(format!("value-{i}").as_bytes()));
            }
        });
        store.page_reads()
    };
    assert_eq!(reads(&[10]), 1, "the first read of a page asks the store");
    assert_eq!(reads(&[10, 11, 12]), 0, "its page is kept with its SST");
    let distinct = reads(&(0..2_000).collect::<Vec<_>>());
    assert!(distinct > 1, "the keys span more than one page");
    assert_eq!(reads(&(0..2_000).collect::<Vec<_>>()), 0);

    run(db.compact()).unwrap();
    assert_eq!(reads(&[10]), 1, "a new SST asks the store afresh");
    assert_eq!(reads(&[10]), 0);
}

#[test]
fn a_store_that_hands_out_copies_is_asked_on_every_read() {
    let (db, store, _clock) = fresh(DbOptions {
        page_cache_bytes: 0,
        row_cache_bytes: 0,
        ..DbOptions::default()
    });
    store.set_copies_only(true);
    run(async {
        for i in 0..2_000 {
            db.put(key(i).as_bytes(), b"v").await.unwrap();
        }
        db.flush().await.unwrap();
    });
    store.reset_counters();
    run(async {
        // Two keys of different pages, in turn: the page cache (off, but it always keeps the
        // last page) never holds the next one.
        for i in [0, 1_999, 0, 1_999] {
            assert_eq!(
                db.get(key(i).as_bytes()).await.unwrap().as_deref(),
                Some(&b"v"[..])
            );
        }
    });
    assert_eq!(
        store.page_reads(),
        4,
        "no page is kept with its SST without sharing"
    );
}
