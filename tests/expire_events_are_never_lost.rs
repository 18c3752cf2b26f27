//! Every key that expires fires exactly one expire event, whatever happens beside the purge: a
//! write that fails and is rolled back, a relaxed crash after a namespace change, an overwrite of
//! a key that had already expired, or an expire hook whose replacement cannot stand. These are
//! the regression tests of the defects found by adversarial use; each failed before its fix.

mod common;
use common::*;

use std::rc::Rc;

use ttlkv::store::{FaultPlan, FaultyStore, MemoryStore};
use ttlkv::{
    Db, DbOptions, Durability, ErrorKind, ExpireCondition, FakeClock, PutOptions, Replacement, Ttl,
    MAX_VALUE_LEN,
};

/// Keys reported by purging until nothing more is due.
fn purge_all(db: &Db) -> Vec<Vec<u8>> {
    let mut keys = Vec::new();
    loop {
        let report = run(db.purge_expired(1_000)).expect("purge");
        keys.extend(report.expired.into_iter().map(|e| e.key));
        if !report.more_due {
            return keys;
        }
    }
}

/// Relaxed, on a fault-injecting store: key `k` with a 100 ms TTL, durable; 50 ms later its
/// extension to 1 s, acknowledged but still in the WAL; then 100 ms more (past the first expiry).
fn expired_unless_its_extension_lands() -> (Db, FaultyStore<MemoryStore>, FakeClock) {
    let (db, store, clock) = open_faulty(relaxed());
    run(db.put_with_options(b"k", b"v", PutOptions::expire_after(100))).unwrap();
    run(db.flush()).unwrap();
    clock.advance(50);
    assert!(run(db.expire(b"k", 1_000, ExpireCondition::default())).unwrap());
    clock.advance(100);
    (db, store, clock)
}

#[test]
fn a_purge_beside_a_write_that_is_rolled_back_still_reports_the_key_once_it_expired() {
    let (db, store, clock) = expired_unless_its_extension_lands();
    // The next commit fails: whether it is the purge's own or a later one, the extension is
    // rolled back and the key is expired as of its first expiry.
    store.set_plan(FaultPlan {
        fail_commit: Some(1),
        ..FaultPlan::default()
    });
    let beside = run(db.purge_expired(100));
    let _ = run(db.flush());
    assert_eq!(
        run(db.get(b"k")).unwrap(),
        None,
        "the extension was rolled back"
    );
    let mut reported: Vec<Vec<u8>> = beside
        .map(|r| r.expired)
        .unwrap_or_default()
        .into_iter()
        .map(|e| e.key)
        .collect();
    // A relaxed write was lost: the handle takes no more writes (a purge writes); reopened, the
    // database purges on.
    let e = run(db.purge_expired(100)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Storage, "{e}");
    let _ = run(db.close());
    let db = reopen(store.inner(), &clock, relaxed());
    reported.extend(purge_all(&db));
    assert_eq!(
        reported,
        [b"k".to_vec()],
        "the expired key is reported exactly once"
    );
}

#[test]
fn a_namespace_change_after_a_purge_never_makes_a_relaxed_crash_lose_an_expiry() {
    let (db, store, clock) = expired_unless_its_extension_lands();
    let report = run(db.purge_expired(100)).unwrap();
    assert!(report.expired.is_empty());
    run(db.namespace("sessions", None)).unwrap();
    // Crash: whatever was not committed is gone.
    store.set_plan(FaultPlan {
        crash_before_commit: Some(1),
        ..FaultPlan::default()
    });
    let _ = run(db.flush());
    assert!(store.is_crashed());
    let db = run(Db::open(store.inner().clone(), clock.clone(), relaxed())).unwrap();
    let live = run(db.get(b"k")).unwrap().is_some();
    let reported = purge_all(&db);
    assert!(
        live || reported == [b"k".to_vec()],
        "after the crash the key is either live (its extension was durable) or reported as expired \
         (live={live}, reported={reported:?})"
    );
}

#[test]
fn a_key_that_expired_and_is_then_overwritten_fires_one_expire_event() {
    let (db, _store, clock) = fresh(DbOptions::default());
    run(db.put_with_options(b"old", b"first", PutOptions::expire_after(100))).unwrap();
    run(db.put_with_options(b"flushed", b"first", PutOptions::expire_after(100))).unwrap();
    run(db.flush()).unwrap();
    run(db.put_with_options(b"mem", b"first", PutOptions::expire_after(100))).unwrap();
    clock.advance(200);
    // Each expired before it was written again.
    run(db.put(b"old", b"second")).unwrap();
    run(db.put(b"mem", b"second")).unwrap();
    run(db.put_with_options(b"flushed", b"second", PutOptions::expire_after(10_000))).unwrap();
    // A key overwritten while still live fires nothing.
    run(db.put_with_options(b"live", b"first", PutOptions::expire_after(1_000))).unwrap();
    run(db.put(b"live", b"second")).unwrap();
    run(db.flush()).unwrap();
    run(db.compact()).unwrap();
    clock.advance(2_000);
    let report = run(db.purge_expired(100)).unwrap();
    let mut events: Vec<(Vec<u8>, Vec<u8>)> = report
        .expired
        .into_iter()
        .map(|e| (e.key, e.value))
        .collect();
    events.sort();
    assert_eq!(
        events,
        [
            (b"flushed".to_vec(), b"first".to_vec()),
            (b"mem".to_vec(), b"first".to_vec()),
            (b"old".to_vec(), b"first".to_vec()),
        ]
    );
    assert_eq!(
        run(db.get(b"old")).unwrap().as_deref(),
        Some(&b"second"[..])
    );
    assert!(purge_all(&db).is_empty(), "each event fires once");
    // Once reported, compaction lets the old rows go.
    run(db.compact()).unwrap();
    clock.advance(20_000);
    assert_eq!(
        purge_all(&db),
        [b"flushed".to_vec()],
        "the overwrite's own expiry fires in its turn"
    );
}

fn hook_returning(r: Replacement) -> ttlkv::ExpireHook {
    Rc::new(move |_e: &ttlkv::ExpiredEntry| Some(r.clone()))
}

#[test]
fn a_hook_replacement_that_keeps_the_ttl_is_a_hook_error_and_the_key_expires() {
    let (db, _store, clock) = fresh(DbOptions::default());
    run(db.put_with_options(b"k", b"v", PutOptions::expire_after(100))).unwrap();
    db.set_expire_hook(Some(hook_returning(Replacement {
        value: b"again".to_vec(),
        ttl: Ttl::Keep,
    })));
    clock.advance(200);
    let report = run(db.purge_expired(100)).unwrap();
    assert_eq!(report.removed, 1);
    assert_eq!(report.rewritten, 0);
    assert_eq!(report.hook_errors.len(), 1);
    assert_eq!(report.hook_errors[0].kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        run(db.ttl(b"k")).unwrap(),
        -2,
        "the key never becomes permanent"
    );
}

#[test]
fn a_hook_replacement_over_the_value_limit_is_a_hook_error_and_the_key_expires() {
    let (db, _store, clock) = fresh(DbOptions::default());
    run(db.put_with_options(b"k", b"v", PutOptions::expire_after(100))).unwrap();
    db.set_expire_hook(Some(hook_returning(Replacement {
        value: vec![7; MAX_VALUE_LEN + 1],
        ttl: Ttl::ExpireAfter(1_000),
    })));
    clock.advance(200);
    let report = run(db.purge_expired(100)).unwrap();
    assert_eq!((report.removed, report.rewritten), (1, 0));
    assert_eq!(report.hook_errors.len(), 1);
    assert_eq!(report.hook_errors[0].kind(), ErrorKind::ValueTooLarge);
    assert_eq!(run(db.get(b"k")).unwrap(), None);
}

/// Key `k` expiring at T0 + 100, and an expire hook whose replacement (expiring at T0 + 201) is
/// due by the time the purge at T0 + 200 writes it (the hook takes 5 ms).
fn late_replacement(db: &Db, clock: &FakeClock) {
    run(db.put_with_options(b"k", b"v", PutOptions::expire_after(100))).unwrap();
    let hook_clock = clock.clone();
    db.set_expire_hook(Some(Rc::new(move |_e: &ttlkv::ExpiredEntry| {
        // Time passes while the hook runs: its answer is due by the time it is written.
        hook_clock.advance(5);
        Some(Replacement {
            value: b"late".to_vec(),
            ttl: Ttl::ExpireAt(T0 + 201),
        })
    })));
    clock.set(T0 + 200);
}

#[test]
fn a_hook_replacement_that_falls_due_before_it_is_written_is_reported_as_expired_not_rewritten() {
    let (db, _store, clock) = fresh(DbOptions::default());
    late_replacement(&db, &clock);
    let report = run(db.purge_expired(100)).unwrap();
    assert_eq!(run(db.get(b"k")).unwrap(), None);
    assert_eq!(report.rewritten, 0, "{report:?}");
    assert_eq!(report.removed, 1, "{report:?}");
    assert_eq!(report.expired.len(), 1);
    assert_eq!(report.hook_errors.len(), 1);
    assert!(reported_later(&db, &clock).is_empty(), "reported once");
}

#[test]
fn a_late_hook_replacement_still_reports_its_key_when_the_purge_fails_to_record_its_progress() {
    let (db, store, clock) = open_faulty(DbOptions::default());
    late_replacement(&db, &clock);
    // The purge's durable write lands (it removes the key); its commit of `purged_until` fails.
    fail_commit(&store, 2);
    run(db.purge_expired(100)).unwrap_err();
    assert_eq!(run(db.get(b"k")).unwrap(), None);
    assert_eq!(
        purge_all(&db),
        vec![b"k".to_vec()],
        "the event is reported once, later"
    );
    assert!(purge_all(&db).is_empty());
}

#[test]
fn a_late_hook_replacement_still_reports_its_key_after_a_crash_before_the_purge_records_it() {
    let (db, store, clock) = open_faulty(DbOptions::default());
    late_replacement(&db, &clock);
    store.set_plan(FaultPlan {
        crash_before_commit: Some(2),
        ..FaultPlan::default()
    });
    run(db.purge_expired(100)).unwrap_err();
    drop(db);
    let db = reopen(store.inner(), &clock, DbOptions::default());
    assert_eq!(run(db.get(b"k")).unwrap(), None);
    assert_eq!(purge_all(&db), vec![b"k".to_vec()]);
    assert!(purge_all(&db).is_empty());
}

/// A future that lets other futures run `n` times (pending, waking itself) before it is ready.
fn turns(n: u32) -> impl std::future::Future<Output = ()> {
    let mut left = n;
    std::future::poll_fn(move |cx| {
        if left == 0 {
            return std::task::Poll::Ready(());
        }
        left -= 1;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
}

#[test]
fn a_key_that_expires_while_a_clear_waits_for_a_commit_in_flight_gets_its_event() {
    // The clear starts while a durable put's commit is in flight, and the clock jumps past the
    // key's expiry some turns later: while the clear waits behind that commit (the event is owed:
    // the clear purges first), or while its own commit is in flight (the clear took its time
    // before: the key was live then, and is cleared with no event). Never two events.
    let mut reported_while_waiting = 0;
    for clear_after in 1..=2 {
        for jump_after in clear_after + 1..=5 {
            let (db, store, clock) = fresh(DbOptions::default());
            let reported = run(async {
                db.put_with_options(b"k", b"v", PutOptions::expire_after(50))
                    .await
                    .unwrap();
                // The next expiry is known, so the clear asks the clock whether it is due.
                db.purge_expired(100).await.unwrap();
                store.set_latency(4);
                let (put, cleared, ()) = futures::join!(
                    db.put(b"x", b"v"),
                    async {
                        turns(clear_after).await;
                        db.clear().await
                    },
                    async {
                        turns(jump_after).await;
                        clock.advance(100);
                    },
                );
                put.unwrap();
                store.set_latency(0);
                cleared.unwrap().expired.len()
            });
            let later = reported_later(&db, &clock).len();
            assert!(
                reported + later <= 1,
                "clear after {clear_after} turns, the jump after {jump_after}"
            );
            reported_while_waiting += reported;
        }
    }
    // Before, the clear read the clock before it waited: no event in any of these.
    assert!(
        reported_while_waiting > 0,
        "no jump landed while the clear waited"
    );
}

/// Small pages and a cache of one page: a read of another page goes to the store (and so
/// waits, on a store with latency).
fn uncached() -> DbOptions {
    DbOptions {
        page_size: 128,
        page_cache_bytes: 0,
        ..DbOptions::default()
    }
}

/// Keys reported by purging (after a long wait) until nothing more is due.
fn reported_later(db: &Db, clock: &FakeClock) -> Vec<Vec<u8>> {
    clock.advance(100_000);
    purge_all(db)
}

#[test]
fn a_key_that_expires_and_is_overwritten_while_a_purge_looks_up_the_next_expiry_fires_its_event() {
    // The purge removes what is due, then looks up the next expiry in the store (a page it has
    // not read: small pages, no cache to speak of); meanwhile the key expires and is written
    // again. Tried at every moment of the purge.
    let mut landed_in_the_lookup = false;
    for delay in 0..40 {
        let store = MemoryStore::new();
        let clock = FakeClock::new(T0);
        let db = run(Db::open(store.clone(), clock.clone(), uncached())).unwrap();
        for i in 0..20 {
            let filler = format!("f{i:02}");
            run(db.put_with_options(filler.as_bytes(), b"x", PutOptions::expire_after(10)))
                .unwrap();
        }
        run(db.put_with_options(b"k", b"first", PutOptions::expire_after(100))).unwrap();
        run(db.flush()).unwrap();
        clock.advance(50);
        store.set_latency(2);
        let (purge, put) = run(futures::future::join(db.purge_expired(100), async {
            turns(delay).await;
            clock.advance(100);
            db.put(b"k", b"second").await
        }));
        let purge = purge.unwrap();
        put.unwrap();
        store.set_latency(0);
        // The put came after the purge had read what was due, and before it was done.
        landed_in_the_lookup |= purge.removed == 20 && purge.expired.iter().all(|e| e.key != b"k");
        let mut reported: Vec<Vec<u8>> = purge.expired.into_iter().map(|e| e.key).collect();
        reported.extend(reported_later(&db, &clock));
        reported.retain(|k| k.as_slice() == b"k");
        assert_eq!(
            reported,
            [b"k".to_vec()],
            "delay {delay}: one event for the expired row"
        );
    }
    assert!(
        landed_in_the_lookup,
        "some delay put the write inside the purge"
    );
}

#[test]
fn a_key_overwritten_while_the_purge_reads_an_earlier_entry_fires_its_event_once() {
    // Relaxed: `k`'s expired row is still pending in the WAL when the purge starts. While the
    // purge reads the row of an entry due before it (`j`, from a page in the store), `k` is
    // written again; the purge then reads `k`'s row at its own read point, which the overwrite
    // must not have pruned from the memtable. Tried at every moment of the purge.
    let mut landed_in_the_purge = false;
    for delay in 0..40 {
        let store = MemoryStore::new();
        let clock = FakeClock::new(T0);
        let options = DbOptions {
            durability: Durability::Relaxed,
            ..uncached()
        };
        let db = run(Db::open(store.clone(), clock.clone(), options)).unwrap();
        for i in 0..20 {
            let filler = format!("a{i:02}");
            run(db.put_with_options(filler.as_bytes(), b"x", PutOptions::expire_after(10_000)))
                .unwrap();
        }
        run(db.put_with_options(b"j", b"j", PutOptions::expire_after(100))).unwrap();
        run(db.flush()).unwrap();
        run(db.put_with_options(b"k", b"first", PutOptions::expire_after(100))).unwrap();
        clock.advance(100);
        store.set_latency(2);
        let purge_done = std::cell::Cell::new(false);
        let (purge, put_inside) = run(futures::future::join(
            async {
                let report = db.purge_expired(100).await;
                purge_done.set(true);
                report
            },
            async {
                turns(delay).await;
                db.put(b"k", b"second").await.unwrap();
                !purge_done.get()
            },
        ));
        let purge = purge.unwrap();
        store.set_latency(0);
        landed_in_the_purge |= put_inside;
        let mut reported: Vec<(Vec<u8>, Vec<u8>)> = purge
            .expired
            .into_iter()
            .map(|e| (e.key, e.value))
            .collect();
        clock.advance(100_000);
        loop {
            let report = run(db.purge_expired(1_000)).unwrap();
            reported.extend(report.expired.into_iter().map(|e| (e.key, e.value)));
            if !report.more_due {
                break;
            }
        }
        reported.retain(|(k, _)| k.as_slice() == b"k");
        assert_eq!(
            reported,
            [(b"k".to_vec(), b"first".to_vec())],
            "delay {delay}: one event, with the value that expired"
        );
    }
    assert!(
        landed_in_the_purge,
        "some delay put the write inside the purge"
    );
}

#[test]
fn a_key_overwritten_while_the_purge_rewrites_it_for_the_hook_fires_its_event_or_is_rewritten() {
    // The hook answers with a replacement; a put of the key lands before, during or after the
    // purge's rewrite. Either the key was rewritten (and then overwritten: no event), or it
    // expired and was overwritten (one event): never neither.
    for delay in 0..80 {
        let store = MemoryStore::new();
        let clock = FakeClock::new(T0);
        let db = run(Db::open(store.clone(), clock.clone(), uncached())).unwrap();
        run(db.put_with_options(b"k", b"first", PutOptions::expire_after(100))).unwrap();
        run(db.put_with_options(b"other", b"x", PutOptions::expire_after(100))).unwrap();
        run(db.flush()).unwrap();
        db.set_expire_hook(Some(hook_returning(Replacement {
            value: b"again".to_vec(),
            ttl: Ttl::ExpireAfter(1_000_000),
        })));
        clock.advance(200);
        store.set_latency(2);
        let (purge, put) = run(futures::future::join(db.purge_expired(100), async {
            turns(delay).await;
            db.put(b"k", b"second").await
        }));
        let purge = purge.unwrap();
        put.unwrap();
        store.set_latency(0);
        db.set_expire_hook(None);
        let k_events = |list: &[Vec<u8>]| list.iter().filter(|k| k.as_slice() == b"k").count();
        let first: Vec<Vec<u8>> = purge.expired.into_iter().map(|e| e.key).collect();
        let events = k_events(&first) + k_events(&reported_later(&db, &clock));
        // "other" was rewritten by the hook in every case; "k" was rewritten or reported.
        let k_rewritten = purge.rewritten - 1;
        assert_eq!(
            events + k_rewritten,
            1,
            "delay {delay}: events {events}, k rewritten {k_rewritten}"
        );
        assert_eq!(run(db.get(b"k")).unwrap().as_deref(), Some(&b"second"[..]));
    }
}

#[test]
fn after_a_reopen_puts_read_their_keys_only_while_an_expiry_may_be_due() {
    // Overwrites need the old row only to record an expired row's event. Right after an open
    // the engine looks the expiry index up once; nothing is due, so the puts read nothing.
    let store = MemoryStore::new();
    let clock = FakeClock::new(T0);
    let db = run(Db::open(store.clone(), clock.clone(), uncached())).unwrap();
    for i in 0..200u32 {
        let key = format!("key-{i:03}");
        run(db.put_with_options(key.as_bytes(), b"v", PutOptions::expire_after(3_600_000)))
            .unwrap();
    }
    run(db.compact()).unwrap();
    run(db.close()).unwrap();
    let db = run(Db::open(store.clone(), clock.clone(), uncached())).unwrap();
    store.reset_counters();
    for i in (0..200u32).step_by(10) {
        run(db.put(format!("key-{i:03}").as_bytes(), b"w")).unwrap();
    }
    assert!(
        store.page_reads() <= 2,
        "{} page reads for 20 puts",
        store.page_reads()
    );
    // Once an expiry is due, they read (and record what they replace).
    clock.advance(3_600_000);
    store.reset_counters();
    run(db.put(b"key-001", b"w")).unwrap();
    assert!(store.page_reads() >= 1);
    assert_eq!(
        purge_all(&db).len(),
        180,
        "the 180 keys not rewritten (key-001 among them, overwritten after it expired) each fire one event"
    );
}
