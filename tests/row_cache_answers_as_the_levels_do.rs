//! The row cache (the newest versions of keys read lately) answers exactly as the memtables and
//! levels would: after overwrites and deletes, for snapshots from before them, after a write it
//! held rolls back, when a write lands while the read that would fill it waits on the store,
//! at expiry, and after a keyspace is cleared. And it is what spares the reads: a key read
//! again touches no page.
//!
//! The store hands out copies only and the page cache is off (it keeps one page then), so the
//! pages a read needs reach the store and are counted.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::{fresh, refused_past_its_limit, run, T0};
use futures::future::join;
use ttlkv::store::{FaultPlan, FaultyStore, MemoryStore};
use ttlkv::{
    Clock, Db, DbOptions, Durability, ErrorKind, FakeClock, Lookup, PutOptions, MAX_ROW_CACHE_BYTES,
};

fn options(row_cache_bytes: usize) -> DbOptions {
    DbOptions {
        page_cache_bytes: 0,
        row_cache_bytes,
        ..DbOptions::default()
    }
}

/// A database whose key `k` holds `v1`, flushed to an SST, on a store that counts page reads.
fn flushed(row_cache_bytes: usize) -> (Db, MemoryStore, FakeClock) {
    let store = MemoryStore::new();
    store.set_copies_only(true);
    let clock = FakeClock::new(T0);
    let db = run(Db::open(
        store.clone(),
        clock.clone(),
        options(row_cache_bytes),
    ))
    .unwrap();
    run(async {
        db.put(b"k", b"v1").await.unwrap();
        for i in 0..100u32 {
            let key = format!("other-{i:03}");
            db.put(key.as_bytes(), &[b'x'; 1_000]).await.unwrap();
        }
        db.flush().await.unwrap();
    });
    (db, store, clock)
}

/// The key's value, read twice: a key is kept in the row cache at its first read where its set
/// has room, and at its second read lately in any case (see `RowCache`).
async fn read_twice(db: &Db, key: &[u8]) -> Option<Vec<u8>> {
    let first = db.get(key).await.unwrap();
    assert_eq!(db.get(key).await.unwrap(), first);
    first
}

fn page_reads_of_ten_gets(db: &Db, store: &MemoryStore) -> u64 {
    run(async {
        assert_eq!(read_twice(db, b"k").await.as_deref(), Some(&b"v1"[..]));
        assert!(read_twice(db, b"other-099").await.is_some());
        store.reset_counters();
        // Two keys on two pages, read in turn: the one page the page cache keeps when it is off
        // cannot serve them both.
        for _ in 0..10 {
            assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"v1"[..]));
            assert!(db.has(b"other-099").await.unwrap());
        }
    });
    store.page_reads()
}

#[test]
fn a_key_read_again_and_again_touches_no_page() {
    let (db, store, _) = flushed(1 << 20);
    let reads = page_reads_of_ten_gets(&db, &store);
    if cfg!(feature = "row-cache") {
        assert_eq!(reads, 0);
        let stats = db.stats();
        // Each key's first read missed and filled (its set had room); every read after it hit.
        assert_eq!((stats.row_cache_hits, stats.row_cache_misses), (22, 2));
        assert!(stats.row_cache_bytes > 0);
    } else {
        // The engine is built without it (as the browser's is): the reads reach the store.
        assert!(reads >= 20, "{reads}");
    }
    // Without the cache each read reaches the store.
    let (db, store, _) = flushed(0);
    let reads = page_reads_of_ten_gets(&db, &store);
    assert!(reads >= 20, "{reads}");
    assert_eq!(db.stats().row_cache_bytes, 0);
}

#[test]
fn a_read_after_an_overwrite_or_a_delete_of_a_key_read_before_answers_the_new_state() {
    let (db, _, clock) = flushed(1 << 20);
    run(async {
        assert_eq!(read_twice(&db, b"k").await.as_deref(), Some(&b"v1"[..]));
        db.put(b"k", b"v2").await.unwrap();
        assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"v2"[..]));
        db.put_with_options(b"k", b"v3", PutOptions::expire_after(1_000))
            .await
            .unwrap();
        assert_eq!(db.ttl(b"k").await.unwrap(), 1_000);
        assert!(db.persist(b"k").await.unwrap());
        assert_eq!(db.ttl(b"k").await.unwrap(), -1);
        assert!(db.delete(b"k").await.unwrap());
        assert_eq!(db.get(b"k").await.unwrap(), None);
        db.flush().await.unwrap();
        db.compact().await.unwrap();
        assert_eq!(db.get(b"k").await.unwrap(), None);
        clock.advance(10);
        db.put(b"k", b"v4").await.unwrap();
        assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"v4"[..]));
    });
}

#[test]
fn a_snapshot_from_before_an_overwrite_reads_the_old_value_after_the_new_one_was_read() {
    let (db, _, _) = flushed(1 << 20);
    run(async {
        let before = db.snapshot().unwrap();
        db.put(b"k", b"v2").await.unwrap();
        assert_eq!(read_twice(&db, b"k").await.as_deref(), Some(&b"v2"[..]));
        assert_eq!(before.get(b"k").await.unwrap().as_deref(), Some(&b"v1"[..]));
        before.release();
    });
}

#[test]
fn a_key_read_while_its_write_was_not_yet_durable_answers_the_old_value_once_that_write_rolls_back()
{
    let disk = MemoryStore::new();
    let clock = FakeClock::new(T0);
    let faulty = FaultyStore::new(disk.clone(), FaultPlan::default());
    let relaxed = DbOptions {
        durability: Durability::Relaxed,
        ..options(1 << 20)
    };
    run(async {
        let db = Db::open(faulty.clone(), clock.clone(), relaxed)
            .await
            .unwrap();
        db.put(b"k", b"old").await.unwrap();
        db.flush().await.unwrap();
        // A relaxed put is answered before its commit: reads see it until that commit fails.
        db.put(b"k", b"new").await.unwrap();
        assert_eq!(read_twice(&db, b"k").await.as_deref(), Some(&b"new"[..]));
        faulty.set_plan(FaultPlan {
            fail_commit: Some(1),
            ..FaultPlan::default()
        });
        assert_eq!(db.flush().await.unwrap_err().kind(), ErrorKind::Storage);
        assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"old"[..]));
    });
}

#[test]
fn a_write_that_lands_while_a_read_waits_on_the_store_is_what_the_next_read_sees() {
    let (db, store, _) = flushed(1 << 20);
    store.set_latency(3);
    run(async {
        // The key's second read finds no version in the memtables and waits for the SST's page;
        // the put lands meanwhile. The get may answer the old value (it read before the put),
        // but must not keep it for the reads after the put.
        assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"v1"[..]));
        // Another page takes the one the page cache keeps.
        assert!(db.has(b"other-099").await.unwrap());
        let (read, put) = join(db.get(b"k"), db.put(b"k", b"v2")).await;
        put.unwrap();
        assert_eq!(read.unwrap().as_deref(), Some(&b"v1"[..]));
        assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"v2"[..]));
    });
}

#[test]
fn a_key_read_again_and_again_expires_on_time() {
    let (db, _, clock) = fresh(options(1 << 20));
    run(async {
        db.put_with_options(b"k", b"v", PutOptions::expire_after(100))
            .await
            .unwrap();
        db.flush().await.unwrap();
        clock.advance(99);
        assert_eq!(read_twice(&db, b"k").await.as_deref(), Some(&b"v"[..]));
        assert_eq!(db.ttl(b"k").await.unwrap(), 1);
        clock.advance(1);
        assert_eq!(db.get(b"k").await.unwrap(), None);
        assert_eq!(db.ttl(b"k").await.unwrap(), -2);
        db.compact().await.unwrap();
        assert_eq!(db.get(b"k").await.unwrap(), None);
    });
}

#[test]
fn a_key_read_before_its_keyspace_was_cleared_is_gone() {
    let (db, _, _) = fresh(options(1 << 20));
    run(async {
        let ns = db.namespace("sessions", None).await.unwrap();
        ns.put(b"k", b"v").await.unwrap();
        db.put(b"k", b"default").await.unwrap();
        assert_eq!(read_twice(&ns, b"k").await.as_deref(), Some(&b"v"[..]));
        assert_eq!(
            read_twice(&db, b"k").await.as_deref(),
            Some(&b"default"[..])
        );
        ns.clear().await.unwrap();
        assert_eq!(ns.get(b"k").await.unwrap(), None);
        assert_eq!(
            db.get(b"k").await.unwrap().as_deref(),
            Some(&b"default"[..])
        );
        db.clear().await.unwrap();
        assert_eq!(db.get(b"k").await.unwrap(), None);
    });
}

#[test]
fn a_row_cache_larger_than_its_limit_is_refused_at_open() {
    refused_past_its_limit("row_cache_bytes", MAX_ROW_CACHE_BYTES, |bytes| DbOptions {
        row_cache_bytes: bytes,
        ..DbOptions::default()
    });
}

/// `get_with` as a test reads it: `Some` of the value it lends (copied) where it answers at
/// once, else `None` after running its search, which must answer as the plain search does
/// (`get_entry`'s: with the row cache or the point index, `get` is `get_with`).
async fn in_place(db: &Db, key: &[u8]) -> Option<Option<Vec<u8>>> {
    match db.get_with(key, |v| v.map(<[u8]>::to_vec)).unwrap() {
        Lookup::Now(value) => Some(value),
        Lookup::Later(search) => {
            let found = search.await.unwrap();
            assert_eq!(found, plain_get(db, key).await);
            None
        }
    }
}

/// The value `get_entry` finds: the row cache's (which the search just before may have filled)
/// or the search of the tables, never an answer at once. The snapshot's read in the walk passes
/// the cache by altogether.
async fn plain_get(db: &Db, key: &[u8]) -> Option<Vec<u8>> {
    db.get_entry(key).await.unwrap().map(|e| e.value)
}

#[test]
fn a_get_answered_at_once_from_the_row_cache_or_searched_is_the_get_it_stands_for() {
    let (from_cache, searched_at_once) = get_with_walk(1 << 20);
    if cfg!(feature = "row-cache") {
        // Most answers came from the cache: the walk reads its few keys again and again.
        assert!(from_cache > 3_000 * 12 / 2, "{from_cache}");
    } else {
        assert_eq!(from_cache, 0);
    }
    // Without the cache every answer is a search; on this store, whose pages are shared, one
    // that needs no wait answers at once where the engine has the point index's code.
    let (from_cache, searched_at_once_uncached) = get_with_walk(0);
    assert_eq!(from_cache, 0);
    if cfg!(feature = "point-index") {
        assert!(searched_at_once > 0);
        assert!(
            searched_at_once_uncached > 3_000 * 12 / 2,
            "{searched_at_once_uncached}"
        );
    } else {
        assert_eq!((searched_at_once, searched_at_once_uncached), (0, 0));
    }
}

/// A seeded walk over a few keys: puts with and without a TTL, deletes, flushes, compactions,
/// the clock moving on; after each step every key's answer from `get_with`, at once or by its
/// search, is the plain search's (`get_entry`'s) and `get`'s, and only an answer from the row
/// cache counts as a hit. How many answered at once from the row cache, and how many at once by
/// a search that needed no wait.
fn get_with_walk(row_cache_bytes: usize) -> (usize, usize) {
    let (db, _, clock) = fresh(options(row_cache_bytes));
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let keys: Vec<Vec<u8>> = (0..12).map(|i| format!("key-{i}").into_bytes()).collect();
    let (mut from_cache, mut searched_at_once) = (0, 0);
    run(async {
        for step in 0..3_000 {
            let key = &keys[next(12) as usize];
            match next(20) {
                0..=5 => db.put(key, format!("v{step}").as_bytes()).await.unwrap(),
                6..=8 => {
                    let ttl = 1 + next(50);
                    let put = db.put_with_options(key, b"short", PutOptions::expire_after(ttl));
                    assert!(put.await.unwrap());
                }
                9 => drop(db.delete(key).await.unwrap()),
                10 => db.flush().await.unwrap(),
                11 => db.compact().await.unwrap(),
                12..=13 => clock.advance(next(20) as i64),
                _ => drop(db.get(key).await.unwrap()),
            };
            for key in &keys {
                let before = db.stats();
                let lent = in_place(&db, key).await;
                let after = db.stats();
                // An answer from the cache counts a hit, and nothing else; one searched at once
                // the miss it began with. A search that waited counts that miss; the plain search
                // after it one more, a hit or a miss.
                let hits = after.row_cache_hits - before.row_cache_hits;
                let misses = after.row_cache_misses - before.row_cache_misses;
                if !cfg!(feature = "row-cache") {
                    assert_eq!((hits, misses), (0, 0), "step {step}");
                } else if lent.is_some() {
                    assert!(
                        (hits, misses) == (1, 0)
                            || cfg!(feature = "point-index") && (hits, misses) == (0, 1),
                        "step {step}: {hits}, {misses}"
                    );
                } else {
                    assert!(
                        misses >= 1 && hits + misses == 2,
                        "step {step}: {hits}, {misses}"
                    );
                }
                let read = plain_get(&db, key).await;
                assert_eq!(db.get(key).await.unwrap(), read, "step {step}");
                // And as the tables say: a snapshot's read passes the row cache by.
                let snapshot = db.snapshot().unwrap();
                assert_eq!(snapshot.get(key).await.unwrap(), read, "step {step}");
                snapshot.release();
                if let Some(value) = lent {
                    if hits == 1 {
                        from_cache += 1;
                    } else {
                        searched_at_once += 1;
                    }
                    assert_eq!(value, read, "step {step}");
                }
            }
        }
    });
    (from_cache, searched_at_once)
}

#[test]
fn a_search_made_before_a_clear_and_run_after_it_reads_the_cleared_keyspace() {
    let (db, _, _) = flushed(1 << 20);
    run(async {
        let ns = db.namespace("sessions", None).await.unwrap();
        for handle in [&db, &ns] {
            handle.put(b"cold", b"v").await.unwrap();
            handle.flush().await.unwrap();
            // Never read: the row cache does not hold it, and its SST has no point index (the
            // store hands out copies) while its key filter holds the key, so the answer is a
            // search that reads a page.
            let Lookup::Later(search) =
                handle.get_with(b"cold", |v| v.map(<[u8]>::to_vec)).unwrap()
            else {
                panic!("a key never read is searched");
            };
            handle.clear().await.unwrap();
            assert_eq!(search.await.unwrap(), None);
            assert_eq!(handle.get(b"cold").await.unwrap(), None);
        }
    });
}

/// The app's code a clock runs once, at its next reading.
type Hook = Rc<RefCell<Option<Box<dyn FnOnce()>>>>;

/// A clock that runs `hook` (once) at its next reading: the app's code, as a JS clock function
/// may run it, between a `get_with`'s call and its answer.
#[derive(Clone)]
struct HookedClock {
    time: FakeClock,
    hook: Hook,
}

impl Clock for HookedClock {
    fn now_ms(&self) -> i64 {
        let hook = self.hook.borrow_mut().take();
        if let Some(hook) = hook {
            hook();
        }
        self.time.now_ms()
    }
}

#[test]
fn a_namespace_dropped_or_cleared_by_the_clock_mid_get_gives_no_answer_from_it() {
    for row_cache_bytes in [0, 1 << 20] {
        for read_before in [false, true] {
            let clock = HookedClock {
                time: FakeClock::new(T0),
                hook: Rc::new(RefCell::new(None)),
            };
            let db = run(Db::open(
                MemoryStore::new(),
                clock.clone(),
                options(row_cache_bytes),
            ))
            .unwrap();
            let case = format!("row cache {row_cache_bytes} B, read before: {read_before}");
            let lookup = |handle: &Db| -> ttlkv::Result<Option<Vec<u8>>> {
                match handle.get_with(b"k", |v| v.map(<[u8]>::to_vec))? {
                    Lookup::Now(value) => Ok(value),
                    Lookup::Later(search) => {
                        // Not read at the call (an engine without the row cache reads the clock
                        // in the search): the app's code runs before the search does.
                        let hook = clock.hook.borrow_mut().take();
                        if let Some(hook) = hook {
                            hook();
                        }
                        run(search)
                    }
                }
            };
            // A namespace holding `k`, read twice first if `read_before` (so the row cache
            // holds it), and the clock's next reading set to run `hook` on it.
            let written = |name: &str, hook: fn(&Db, &Db)| {
                let handle = run(db.namespace(name, None)).unwrap();
                run(handle.put(b"k", name.as_bytes())).unwrap();
                for _ in 0..if read_before { 2 } else { 0 } {
                    assert_eq!(
                        run(handle.get(b"k")).unwrap().as_deref(),
                        Some(name.as_bytes())
                    );
                }
                let (root, target) = (db.clone(), handle.clone());
                *clock.hook.borrow_mut() = Some(Box::new(move || hook(&root, &target)));
                handle
            };
            // Dropped by the clock's code: the handle is closed, whatever held the key.
            let one = written("one", |root, _| {
                assert!(run(root.drop_namespace("one")).unwrap());
            });
            let e = lookup(&one).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Closed, "{case}: {e}");
            // Cleared by the clock's code: the key is gone.
            let two = written("two", |_, target| drop(run(target.clear()).unwrap()));
            assert_eq!(lookup(&two).unwrap(), None, "{case}");
            assert_eq!(run(two.get(b"k")).unwrap(), None, "{case}");
        }
    }
}
