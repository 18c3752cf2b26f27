//! Regressions found by reviewing the engine under concurrency: commits racing each other, plans
//! going stale, scans racing overwrites, writes deciding on versions that are later rolled back,
//! abandoned futures and close(). Each test first failed on the code before its fix; each doc
//! comment says what used to go wrong. Most need store latency (`with_latency`), as IndexedDB has.
mod common;
use common::*;

use ttlkv::store::MemoryStore;
use ttlkv::{Db, DbOptions, ErrorKind, FakeClock, PutOptions, ScanOptions, Ttl};

fn opts() -> DbOptions {
    DbOptions {
        l0_compaction_trigger: 2,
        ..DbOptions::default()
    }
}

/// Used to fail: a durable write whose WAL group commit starts while a flush commit is in flight names the
/// pre-flush manifest version, fails with FENCED, and fences the whole database.
#[test]
fn a_write_racing_a_flush_commit_is_not_fenced() {
    let disk = MemoryStore::new().with_latency(1);
    let clock = FakeClock::new(T0);
    run(async {
        let db = Db::open(disk.clone(), clock.clone(), opts()).await.unwrap();
        db.put(b"a", b"1").await.unwrap();
        let (f, p) = futures::join!(db.flush(), db.put(b"b", b"2"));
        f.unwrap();
        // Nobody else opened the store: this must not be FENCED.
        assert!(p.is_ok(), "put during flush failed: {p:?}");
        assert!(db.put(b"c", b"3").await.is_ok(), "db is fenced for good");
    });
}

/// Used to fail: same with a compaction install.
#[test]
fn writes_racing_a_compaction_commit_are_not_fenced() {
    let disk = MemoryStore::new().with_latency(1);
    let clock = FakeClock::new(T0);
    run(async {
        let db = Db::open(disk.clone(), clock.clone(), opts()).await.unwrap();
        for i in 0..3u8 {
            db.put(&[b'k', i], b"v").await.unwrap();
            db.flush().await.unwrap();
        }
        let writes = async {
            let mut out = Vec::new();
            for i in 0..20u8 {
                out.push(db.put(&[b'w', i], b"v").await);
            }
            out
        };
        let (c, w) = futures::join!(db.compact(), writes);
        c.unwrap();
        for r in w {
            assert!(r.is_ok(), "write during compaction failed: {r:?}");
        }
    });
}

/// `k` and `x` in two L0 SSTs (the compaction trigger), then a forced compaction and a maintenance
/// step's compaction racing each other.
async fn race_two_compactions(disk: &MemoryStore, clock: &FakeClock) -> Db {
    let db = Db::open(disk.clone(), clock.clone(), opts()).await.unwrap();
    db.put(b"k", b"old").await.unwrap();
    db.flush().await.unwrap();
    db.put(b"x", b"1").await.unwrap();
    db.flush().await.unwrap();
    let (c, m) = futures::join!(db.compact(), db.maintenance_step());
    c.unwrap();
    m.unwrap();
    db
}

/// Used to fail: maintenance_step plans a compaction before taking the manifest lock; if a compaction runs
/// meanwhile, the stale plan re-merges SSTs that are no longer in the tree and installs a second,
/// overlapping copy into L1. Scans then return duplicates and a deleted key resurfaces.
#[test]
fn a_compaction_waiting_for_another_never_installs_overlapping_ssts() {
    let disk = MemoryStore::new().with_latency(1);
    let clock = FakeClock::new(T0);
    run(async {
        let db = race_two_compactions(&disk, &clock).await;
        let levels: Vec<Vec<u64>> = db
            .stats()
            .levels
            .iter()
            .map(|l| l.ssts.iter().map(|s| s.id).collect())
            .collect();
        println!("levels after race: {levels:?}");
        let all = db.scan(&ScanOptions::default()).await.unwrap();
        let keys: Vec<_> = all.iter().map(|e| e.key.clone()).collect();
        assert_eq!(keys, vec![b"k".to_vec(), b"x".to_vec()], "scan: {keys:?}");
    });
}

#[test]
fn concurrent_compactions_never_resurrect_a_deleted_key() {
    let disk = MemoryStore::new().with_latency(1);
    let clock = FakeClock::new(T0);
    run(async {
        let db = race_two_compactions(&disk, &clock).await;
        assert!(db.delete(b"k").await.unwrap());
        assert_eq!(db.get(b"k").await.unwrap(), None);
        let all = db.scan(&ScanOptions::default()).await.unwrap();
        assert!(
            all.iter().all(|e| e.key != b"k"),
            "deleted key k resurfaced in scan: {all:?}"
        );
        // And the tree can no longer be compacted.
        db.compact().await.unwrap();
    });
}

/// Used to fail: a scan reads memtables lazily, after awaiting SST page loads, but its read_seq is not a
/// keep point for memtable pruning: two overwrites during the scan prune the version it should
/// see, and it falls through to an older SST version.
#[test]
fn a_scan_sees_its_own_read_point_while_overwrites_continue() {
    let disk = MemoryStore::new().with_latency(1);
    let clock = FakeClock::new(T0);
    run(async {
        let db = Db::open(disk.clone(), clock.clone(), opts()).await.unwrap();
        db.put(b"k", b"v0").await.unwrap();
        db.flush().await.unwrap();
        for i in 0..5u8 {
            db.put(&[b'a', i], b"x").await.unwrap();
            db.flush().await.unwrap();
        }
        db.put(b"k", b"v1").await.unwrap(); // in the memtable, durable
        let writer = async {
            db.put(b"k", b"v2").await.unwrap();
            db.put(b"k", b"v3").await.unwrap();
        };
        let so = ScanOptions::default();
        let (scan, ()) = futures::join!(db.scan(&so), writer);
        let scan = scan.unwrap();
        let v = scan.iter().find(|e| e.key == b"k").map(|e| e.value.clone());
        assert_ne!(
            v.as_deref(),
            Some(&b"v0"[..]),
            "scan returned overwritten v0"
        );
        assert!(v.is_some(), "scan missed live key k");
    });
}

#[allow(dead_code)]
/// Used to fail: after the race the tree can no longer be compacted, and the obsolete inputs
/// are never reclaimed.
#[test]
fn concurrent_compactions_leave_later_compactions_working_and_reclaim_pages() {
    let disk = MemoryStore::new().with_latency(1);
    let clock = FakeClock::new(T0);
    run(async {
        let db = race_two_compactions(&disk, &clock).await;
        for _ in 0..3 {
            db.maintenance_step().await.unwrap();
        }
        let metas = disk.page_count_of(ttlkv::store::PageKind::SstMeta);
        let live: usize = db.stats().levels.iter().map(|l| l.ssts.len()).sum();
        println!("sst meta pages stored: {metas}, SSTs in the tree: {live}");
        db.put(b"k", b"new").await.unwrap();
        let r = db.compact().await;
        assert!(r.is_ok(), "compaction after the race: {r:?}");
        assert_eq!(metas, live, "pages of obsolete SSTs leaked");
    });
}

/// Used to fail: a durable write future dropped while it leads a group commit leaves `in_flight` set
/// forever: every later durable write hangs.
#[test]
fn dropping_a_write_future_mid_commit_does_not_hang_later_writes() {
    use core::task::Poll;
    let disk = MemoryStore::new().with_latency(1);
    let clock = FakeClock::new(T0);
    run(async {
        let db = Db::open(disk.clone(), clock.clone(), opts()).await.unwrap();
        {
            let mut first = Box::pin(db.put(b"a", b"1"));
            assert!(futures::poll!(first.as_mut()).is_pending());
        } // dropped, e.g. by a timeout / select!
        let mut second = Box::pin(db.put(b"b", b"2"));
        let mut done = false;
        for _ in 0..10_000 {
            if let Poll::Ready(r) = futures::poll!(second.as_mut()) {
                r.unwrap();
                done = true;
                break;
            }
        }
        assert!(done, "second put never completes");
    });
}

/// Used to fail: a conditional put decides on a write that is not durable yet, returns at once, and the
/// write it saw is then rolled back.
#[test]
fn if_absent_never_answers_from_a_write_that_was_rolled_back() {
    let disk = MemoryStore::new().with_latency(1);
    let fail = std::rc::Rc::new(std::cell::Cell::new(false));
    let store = SlowFail {
        inner: disk.clone(),
        fail_next_commit: fail.clone(),
    };
    let clock = FakeClock::new(T0);
    run(async {
        let db = Db::open(store, clock.clone(), opts()).await.unwrap();
        fail.set(true);
        let nx = PutOptions {
            condition: ttlkv::PutCondition::IfAbsent,
            ..Default::default()
        };
        let (w1, w2) = futures::join!(db.put(b"k", b"v1"), db.put_with_options(b"k", b"v2", nx));
        assert!(w1.is_err());
        assert_eq!(
            w2,
            Ok(true),
            "IfAbsent refused because of a write that was rolled back"
        );
        assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"v2"[..]));
    });
}

/// Used to fail: the optimistic re-check misses a rollback: a write whose read awaited an SST page
/// commits a row derived from a version that was rolled back meanwhile.
#[test]
fn keep_ttl_never_inherits_from_a_write_that_was_rolled_back() {
    let disk = MemoryStore::new().with_latency(1);
    let fail = std::rc::Rc::new(std::cell::Cell::new(false));
    let store = SlowFail {
        inner: disk.clone(),
        fail_next_commit: fail.clone(),
    };
    let clock = FakeClock::new(T0);
    run(async {
        let db = Db::open(store, clock.clone(), opts()).await.unwrap();
        db.put(b"z", b"in an sst").await.unwrap();
        db.flush().await.unwrap();
        fail.set(true);
        let mut batch = ttlkv::WriteBatch::new();
        batch.put_with_options(
            b"k",
            b"y",
            PutOptions {
                ttl: Ttl::Keep,
                ..Default::default()
            },
        );
        batch.put_with_options(
            b"z",
            b"1",
            PutOptions {
                condition: ttlkv::PutCondition::IfPresent,
                ..Default::default()
            },
        );
        let (w1, w2) = futures::join!(
            db.put_with_options(b"k", b"x", PutOptions::expire_after(10_000)),
            db.write(batch)
        );
        assert!(w1.is_err());
        assert!(w2.unwrap());
        assert_eq!(
            db.ttl(b"k").await.unwrap(),
            -1,
            "k got the TTL of a write that failed"
        );
    });
}

/// Options that would make the planner never run out of work (every maintenance step pushing
/// the data one level deeper, forever) are refused at open.
#[test]
fn options_that_make_compaction_endless_are_refused() {
    for bad in [
        DbOptions {
            level1_target_bytes: 0,
            ..opts()
        },
        DbOptions {
            level_size_multiplier: 1,
            ..opts()
        },
        DbOptions {
            l0_compaction_trigger: 0,
            ..opts()
        },
    ] {
        let e = run(Db::open(MemoryStore::new(), FakeClock::new(T0), bad)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    }
}

/// Used to fail: a relaxed write accepted while close() is committing the clock seed is acknowledged but
/// never committed: it is lost without any crash.
#[test]
fn a_relaxed_write_racing_close_is_refused_or_kept() {
    let disk = MemoryStore::new().with_latency(1);
    let clock = FakeClock::new(T0);
    let relaxed = DbOptions {
        durability: ttlkv::Durability::Relaxed,
        ..opts()
    };
    run(async {
        let db = Db::open(disk.clone(), clock.clone(), relaxed.clone())
            .await
            .unwrap();
        clock.advance(5);
        let _ = db.now().unwrap(); // a read-only time the manifest does not hold yet
        let late = async {
            yield_once().await; // let close() start first
            db.put(b"k", b"v").await
        };
        let (p, c) = futures::join!(late, db.close());
        c.unwrap();
        let reopened = Db::open(disk.clone(), clock.clone(), relaxed)
            .await
            .unwrap();
        match p {
            Ok(()) => assert_eq!(
                reopened.get(b"k").await.unwrap().as_deref(),
                Some(&b"v"[..]),
                "acknowledged relaxed write lost"
            ),
            Err(e) => assert_eq!(
                e.kind(),
                ErrorKind::Closed,
                "refused, as a write after close"
            ),
        }
    });
}

/// Used to fail: the commit gate let whoever polled first after a release take it, and a durable
/// writer that puts again as soon as its put resolves always polls first, so a flush waiting for
/// the gate waited until the writer stopped (here, all 200 puts).
#[test]
fn a_durable_writer_that_never_pauses_does_not_starve_a_flush() {
    use std::cell::Cell;
    let disk = MemoryStore::new().with_latency(1);
    let clock = FakeClock::new(T0);
    run(async {
        let db = Db::open(disk.clone(), clock.clone(), opts()).await.unwrap();
        db.put(b"first", b"v").await.unwrap();
        let puts = Cell::new(0u32);
        let writer = async {
            for i in 0..200u32 {
                db.put(&i.to_be_bytes(), b"v").await.unwrap();
                puts.set(puts.get() + 1);
            }
        };
        let flush = async {
            db.flush().await.unwrap();
            puts.get()
        };
        let ((), puts_before_flush) = futures::join!(writer, flush);
        assert!(
            puts_before_flush <= 5,
            "the flush waited for {puts_before_flush} puts"
        );
        assert!(db.stats().levels.iter().any(|l| !l.ssts.is_empty()));
    });
}

/// The same with the writers and the flush as tasks of their own on an executor that runs tasks
/// in the order they were woken: the flush's turn comes after the commit in flight.
#[test]
fn durable_writer_tasks_that_never_pause_do_not_starve_a_flush_task() {
    use futures::executor::LocalPool;
    use futures::task::LocalSpawnExt;
    use std::cell::Cell;
    use std::rc::Rc;

    let disk = MemoryStore::new().with_latency(1);
    let clock = FakeClock::new(T0);
    let db = run(Db::open(disk.clone(), clock.clone(), opts())).unwrap();
    run(db.put(b"first", b"v")).unwrap();
    let puts = Rc::new(Cell::new(0u32));
    let puts_before_flush = Rc::new(Cell::new(None));
    let mut pool = LocalPool::new();
    for writer in 0..2u8 {
        let (db, puts) = (db.clone(), puts.clone());
        pool.spawner()
            .spawn_local(async move {
                for i in 0..200u32 {
                    let key = [&[writer][..], &i.to_be_bytes()].concat();
                    db.put(&key, b"v").await.unwrap();
                    puts.set(puts.get() + 1);
                }
            })
            .unwrap();
    }
    let (flushing, puts_seen, seen) = (db.clone(), puts.clone(), puts_before_flush.clone());
    pool.spawner()
        .spawn_local(async move {
            flushing.flush().await.unwrap();
            seen.set(Some(puts_seen.get()));
        })
        .unwrap();
    pool.run();
    let before = puts_before_flush.get().expect("the flush finished");
    assert!(before <= 10, "the flush waited for {before} of 400 puts");
    assert_eq!(puts.get(), 400);
}

/// Used to fail: a flush commits the WAL until nothing is pending before it freezes the memtable,
/// and a relaxed writer that appends between every two of those commits kept it committing
/// until the writer stopped (all 2,000 puts), its memtable growing past the stall limit all the
/// while. Past the stall limit a write now waits for the flush.
#[test]
fn a_relaxed_writer_that_never_pauses_does_not_keep_a_flush_draining() {
    use std::cell::Cell;
    let disk = MemoryStore::new().with_latency(1);
    let clock = FakeClock::new(T0);
    let options = DbOptions {
        memtable_flush_bytes: 2 * 1024,
        memtable_stall_bytes: 8 * 1024,
        ..relaxed()
    };
    run(async {
        let db = Db::open(disk.clone(), clock.clone(), options)
            .await
            .unwrap();
        db.put(b"first", b"v").await.unwrap();
        let puts = Cell::new(0u32);
        let writer = async {
            for i in 0..2000u32 {
                db.put(&i.to_be_bytes(), &[b'v'; 100]).await.unwrap();
                puts.set(puts.get() + 1);
                // A turn for the host between two writes, as an app's events give.
                yield_once().await;
            }
        };
        let flush = async {
            db.flush().await.unwrap();
            puts.get()
        };
        let ((), puts_before_flush) = futures::join!(writer, flush);
        assert!(
            puts_before_flush <= 200,
            "the flush drained the WAL for {puts_before_flush} puts"
        );
    });
}
