//! Regressions found by reviewing the TTL machinery: a purge rolled back inside another writer's
//! group commit, a whole-SST drop under a snapshot, a dropped namespace's entries stalling the
//! purge, errors after a purge committed, a failed next-expiry lookup, the namespace default TTL,
//! and a clock that went back across a crash below `purged_until`. Each test failed on the code
//! before its fix.
mod common;
use common::*;

use ttlkv::store::{FaultPlan, FaultyStore, MemoryStore};
use ttlkv::{Db, DbOptions, Durability, NamespaceOptions, PutOptions, ScanOptions};

fn quiet() -> DbOptions {
    DbOptions {
        periodic_compaction_ms: None,
        ..DbOptions::default()
    }
}

/// Used to fail: a whole-SST drop lets a live snapshot see an older, overwritten version.
#[test]
fn whole_sst_drop_does_not_resurface_an_old_version_in_a_snapshot() {
    let (db, _, clock) = fresh(quiet());
    run(async {
        db.put(b"k", b"v1-old").await.unwrap();
        db.flush().await.unwrap();
        db.compact().await.unwrap(); // v1 at the bottom (L1)
        db.put_with_options(b"k", b"v2", PutOptions::expire_after(100))
            .await
            .unwrap();
        db.flush().await.unwrap(); // L0 SST holding only TTL rows (k@v2 + its index row)
        clock.advance(100);
        let snap = db.snapshot().unwrap(); // sees v2, expired at its time: k absent
        assert_eq!(snap.get(b"k").await.unwrap(), None);
        let r = db.purge_expired(100).await.unwrap();
        assert_eq!(r.removed, 1);
        // On the current code this step drops the all-expired L0 SST whole.
        let step = db.maintenance_step().await.unwrap();
        println!("compactions in the step: {}", step.compactions);
        assert_eq!(db.get(b"k").await.unwrap(), None);
        assert_eq!(
            snap.get(b"k").await.unwrap(),
            None,
            "the snapshot must still see k as absent (v2 expired), not the overwritten v1"
        );
    });
}

fn ns_opts() -> DbOptions {
    DbOptions {
        purge_slice_keys: 10,
        ..quiet()
    }
}

/// Used to fail: expiry-index entries of a dropped namespace are never removed by the purge
/// (`still_indexed` keeps them), so once there are more than a slice's worth of them the purge
/// re-reads the same slice forever and every later-expiring key of every namespace is starved.
#[test]
fn dropped_namespace_entries_do_not_block_the_purge_forever() {
    let (db, _, clock) = fresh(ns_opts());
    run(async {
        let ns = db.namespace("tmp", None).await.unwrap();
        for i in 0..20u32 {
            ns.put_with_options(&i.to_be_bytes(), b"v", PutOptions::expire_after(50))
                .await
                .unwrap();
        }
        db.put_with_options(b"live", b"x", PutOptions::expire_after(100))
            .await
            .unwrap();
        assert!(db.drop_namespace("tmp").await.unwrap());
        clock.advance(100);
        let mut events = Vec::new();
        let mut stale = 0;
        for _ in 0..10 {
            let step = db.maintenance_step().await.unwrap();
            stale += step.purge.stale;
            events.extend(step.purge.expired.into_iter().map(|e| e.key));
        }
        assert_eq!(
            events,
            vec![b"live".to_vec()],
            "the default namespace's key must expire with its event (stale entries judged: {stale})"
        );
    });
}

fn relaxed() -> DbOptions {
    DbOptions {
        durability: Durability::Relaxed,
        ..quiet()
    }
}

/// Set up: k = v1 (no TTL) at the bottom, k = v2 (TTL) in its own L0 SST, expired; one relaxed
/// write `y` pending in the WAL; the store set to fail the 2nd commit from now.
fn relaxed_setup() -> (Db, FaultyStore<MemoryStore>, ttlkv::FakeClock) {
    let disk = MemoryStore::new().with_latency(1);
    let faulty = FaultyStore::new(disk, FaultPlan::default());
    let clock = ttlkv::FakeClock::new(T0);
    let db = run(Db::open(faulty.clone(), clock.clone(), relaxed())).unwrap();
    run(async {
        db.put(b"k", b"v1-old").await.unwrap();
        db.flush().await.unwrap();
        db.compact().await.unwrap();
        db.put_with_options(b"k", b"v2", PutOptions::expire_after(100))
            .await
            .unwrap();
        db.flush().await.unwrap();
        // Warm the page cache so the purge's reads do not wait on the store.
        assert_eq!(db.get(b"k").await.unwrap(), Some(b"v2".to_vec()));
        clock.advance(100);
        db.put(b"y", b"pending").await.unwrap();
    });
    faulty.set_plan(FaultPlan {
        fail_commit: Some(2),
        ..FaultPlan::default()
    });
    (db, faulty, clock)
}

/// Used to fail: in relaxed mode the purge's `drain_wal` returns Ok although the group commit that carried
/// its tombstones (led by a concurrent flush) failed and was rolled back: the event is reported,
/// `purged_until` moves, the key and its index entry come back, and the next purge reports the
/// same expiry a second time. (Since the commit gate lets a task that waits for it go before one
/// that asks again, the purge's own write leads that commit; the events must come once either way.)
#[test]
fn a_rolled_back_purge_does_not_report_its_events_twice() {
    let (db, _faulty, _clock) = relaxed_setup();
    run(async {
        let (f, p) = futures::join!(db.flush(), db.purge_expired(100));
        assert!(
            f.is_err() || p.is_err(),
            "the second commit, which carries the purge's tombstones, was made to fail"
        );
        let mut events = 0;
        if let Ok(p) = p {
            events += p.expired.len();
        }
        let again = db.purge_expired(100).await.unwrap();
        events += again.expired.len();
        assert_eq!(events, 1, "k expired once: exactly one event");
    });
}

/// Used to fail: same interleaving, then the maintenance step drops the all-expired SST whole (purged_until
/// says it was purged): the purge's tombstone was rolled back, so the overwritten v1 resurfaces.
#[test]
fn a_rolled_back_purge_does_not_let_a_whole_sst_drop_resurrect_an_old_version() {
    let (db, _faulty, _clock) = relaxed_setup();
    run(async {
        let (_f, _p) = futures::join!(db.flush(), db.purge_expired(100));
        for _ in 0..3 {
            db.maintenance_step().await.unwrap();
        }
        assert_eq!(
            db.get(b"k").await.unwrap(),
            None,
            "k was overwritten by v2, which expired: v1 must never come back"
        );
    });
}

/// Used to fail: in durable mode, once the purge's own write is durable, a failure of a *later* group commit
/// it leads in `drain_wal` (another writer's batch) makes `purge_expired` return Err: the removal
/// stands, the report (the only carrier of the event) is dropped, and no later purge reports it.
#[test]
fn an_error_after_the_purge_committed_does_not_lose_its_events() {
    let disk = MemoryStore::new().with_latency(1);
    let faulty = FaultyStore::new(disk, FaultPlan::default());
    let clock = ttlkv::FakeClock::new(T0);
    let db = run(Db::open(faulty.clone(), clock.clone(), quiet())).unwrap();
    run(async {
        db.put_with_options(b"k", b"v", PutOptions::expire_after(100))
            .await
            .unwrap();
        clock.advance(100);
        faulty.set_plan(FaultPlan {
            fail_commit: Some(2),
            ..FaultPlan::default()
        });
        let (p, w) = futures::join!(db.purge_expired(100), db.put(b"z", b"1"));
        assert!(w.is_err(), "z's commit was made to fail");
        let mut events = 0;
        match p {
            Ok(r) => events += r.expired.len(),
            Err(e) => println!("purge_expired failed after its removal was committed: {e}"),
        }
        assert_eq!(db.get(b"k").await.unwrap(), None);
        events += db.purge_expired(100).await.unwrap().expired.len();
        assert_eq!(events, 1, "k expired and was removed: exactly one event");
    });
}

/// Used to fail: the purge sets `next_expiry = None` (known) before it looks up the next entry; if that
/// lookup fails, the wake-up for every later expiry is lost: automatic maintenance never purges
/// again until some write notes a new expiry.
#[test]
fn a_failed_next_expiry_lookup_does_not_lose_the_wakeup() {
    let opts = DbOptions {
        page_size: 128,
        page_cache_bytes: 1,
        ..quiet()
    };
    // Count the store operations of one purge on an identical database first.
    let setup = |faulty: &FaultyStore<MemoryStore>, clock: &ttlkv::FakeClock| -> Db {
        let db = run(Db::open(faulty.clone(), clock.clone(), opts.clone())).unwrap();
        run(async {
            for i in 0..20u32 {
                db.put_with_options(&i.to_be_bytes(), &[1u8; 40], PutOptions::expire_after(100))
                    .await
                    .unwrap();
            }
            db.put_with_options(b"later", b"x", PutOptions::expire_after(10_000))
                .await
                .unwrap();
            db.flush().await.unwrap();
        });
        clock.advance(100);
        db
    };
    let probe = FaultyStore::new(MemoryStore::new(), FaultPlan::default());
    let pclock = ttlkv::FakeClock::new(T0);
    let pdb = setup(&probe, &pclock);
    probe.set_plan(FaultPlan::default());
    let r = run(pdb.purge_expired(1_000)).unwrap();
    assert_eq!(r.removed, 20);
    let ops = probe.ops();
    // Control: without a fault, automatic maintenance fires `later` at its time.
    run(async {
        let mut fired = false;
        for _ in 0..50 {
            let step = pdb.maintenance_step().await.unwrap();
            fired |= step.purge.expired.iter().any(|e| e.key == b"later");
            match step.next_wakeup_ms {
                Some(t) => pclock.set(t.max(pdb.now().unwrap())),
                None => break,
            }
        }
        assert!(fired, "control: `later` fires when nothing fails");
    });

    let faulty = FaultyStore::new(MemoryStore::new(), FaultPlan::default());
    let clock = ttlkv::FakeClock::new(T0);
    let db = setup(&faulty, &clock);
    // The purge's last store operation is the page read of its next-expiry lookup.
    faulty.set_plan(FaultPlan {
        fail_op: Some(ops),
        ..FaultPlan::default()
    });
    run(async {
        let first = db.purge_expired(1_000).await;
        println!(
            "purge with a failing next-expiry lookup: {:?}",
            first.as_ref().map(|r| r.removed)
        );
        let mut events: Vec<Vec<u8>> = Vec::new();
        if let Ok(r) = first {
            events.extend(r.expired.into_iter().map(|e| e.key));
        }
        // Automatic mode: sleep until the next wake-up, run a step, repeat.
        for _ in 0..50 {
            let step = db.maintenance_step().await.unwrap();
            events.extend(step.purge.expired.into_iter().map(|e| e.key));
            match step.next_wakeup_ms {
                Some(t) => clock.set(t.max(db.now().unwrap())),
                None => break,
            }
        }
        clock.set(T0 + 20_000);
        for _ in 0..5 {
            let step = db.maintenance_step().await.unwrap();
            events.extend(step.purge.expired.into_iter().map(|e| e.key));
        }
        assert!(
            events.contains(&b"later".to_vec()),
            "`later` (due at T0+10s) must fire in automatic mode; next wake-up = {:?}",
            db.next_wakeup_ms()
        );
    });
}

/// Used to fail: a namespace without its own default TTL does not inherit the database's default
/// (db.rs:96 promises "the namespace's, else the database's").
#[test]
fn a_namespace_without_a_default_uses_the_database_default() {
    let (db, _, _clock) = fresh(DbOptions {
        default_ttl_ms: Some(1_000),
        ..quiet()
    });
    run(async {
        let ns = db
            .namespace(
                "n",
                Some(NamespaceOptions {
                    default_ttl_ms: None,
                    max_ttl_ms: None,
                }),
            )
            .await
            .unwrap();
        ns.put(b"k", b"v").await.unwrap();
        db.put(b"k", b"v").await.unwrap();
        assert_eq!(db.ttl(b"k").await.unwrap(), 1_000);
        assert_eq!(ns.ttl(b"k").await.unwrap(), 1_000);
        let _ = ns.scan(&ScanOptions::default()).await.unwrap();
    });
}

/// Used to fail: after a purge moved `purged_until` past a clock that later restarted earlier
/// (the wall clock went back across a crash), a new key could expire below `purged_until`, where
/// the purge never looks: it expired without its event.
#[test]
fn a_key_written_after_the_clock_went_back_across_a_crash_still_gets_its_expire_event() {
    let (db, store, clock) = fresh(quiet());
    run(async {
        db.put_with_options(b"stale", b"v", PutOptions::expire_after(100))
            .await
            .unwrap();
        db.persist(b"stale").await.unwrap();
        clock.advance(1_000);
        // Only a stale entry: purged_until moves in memory, and a namespace commit stores it.
        assert_eq!(db.purge_expired(100).await.unwrap().stale, 1);
        db.namespace("other", None).await.unwrap();
    });
    drop(db); // a crash: no close, so no clock seed committed
    let earlier = ttlkv::FakeClock::new(T0);
    let db = reopen(&store, &earlier, quiet());
    run(async {
        db.put_with_options(b"fresh", b"v", PutOptions::expire_after(500))
            .await
            .unwrap();
        earlier.advance(2_000);
        let report = db.purge_expired(100).await.unwrap();
        let keys: Vec<_> = report.expired.iter().map(|e| e.key.clone()).collect();
        assert_eq!(keys, vec![b"fresh".to_vec()]);
    });
}
