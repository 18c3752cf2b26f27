//! A call that finds the store full reclaims what expired data holds (purges every due key,
//! compacts) and tries once more: a write that fits then succeeds, one that still does not fit
//! fails with `QuotaExceeded` having written nothing, and every expired key's event is delivered
//! once, to the reclaim listener or with the next purge report (also when the database closes
//! while the reclaim runs). A reclaim step that fails does not change the caller's error.

mod common;
use common::*;

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::rc::Rc;

use ttlkv::store::{
    Commit, FaultPlan, FaultyStore, MemoryStore, PageKind, PageStore, StoreFuture, YieldFuture,
};
use ttlkv::{
    Db, DbOptions, ErrorKind, ExpireCondition, ExpiredEntry, FakeClock, GetExOptions, PurgeReport,
    PutOptions, Replacement, Ttl, WriteBatch,
};

/// Keys written with a TTL of [`TTL_MS`] by [`full_of_expired_keys`].
const KEYS: usize = 40;
const TTL_MS: u64 = 1_000;
/// Room left in the store once it is full.
const SLACK: usize = 300;
/// A value that does not fit in [`SLACK`].
const BIG: usize = 2_000;

fn key(i: usize) -> Vec<u8> {
    format!("session:{i:03}").into_bytes()
}

/// A database whose store holds [`KEYS`] keys that expired (not purged yet) and has
/// [`SLACK`] bytes of room left, on a fault-injecting store over a memory store with a quota.
fn full_of_expired_keys() -> (Db, FaultyStore<MemoryStore>, FakeClock) {
    let disk = MemoryStore::new();
    let store = FaultyStore::new(disk.clone(), FaultPlan::default());
    let clock = FakeClock::new(T0);
    let db = run(async {
        let db = Db::open(store.clone(), clock.clone(), DbOptions::default())
            .await
            .unwrap();
        put_expiring_keys(&db).await;
        db
    });
    disk.set_quota(Some(disk.stored_bytes() + SLACK));
    clock.advance(TTL_MS as i64 + 1);
    (db, store, clock)
}

/// Every report the listener was given.
fn listen(db: &Db) -> Rc<RefCell<Vec<PurgeReport>>> {
    let reports = Rc::new(RefCell::new(Vec::new()));
    let sink = reports.clone();
    db.set_reclaim_listener(Some(Rc::new(move |report: &PurgeReport| {
        sink.borrow_mut().push(report.clone());
    })));
    reports
}

fn keys_of(events: &[ExpiredEntry]) -> Vec<Vec<u8>> {
    let mut keys: Vec<_> = events.iter().map(|e| e.key.clone()).collect();
    keys.sort();
    keys
}

/// [`KEYS`] keys of 200 bytes with a TTL of [`TTL_MS`], flushed into an SST.
async fn put_expiring_keys(db: &Db) {
    for i in 0..KEYS {
        db.put_with_options(&key(i), &[b'v'; 200], PutOptions::expire_after(TTL_MS))
            .await
            .unwrap();
    }
    db.flush().await.unwrap();
}

/// Every expire event of `reports`, in order.
fn events_of(reports: &[PurgeReport]) -> Vec<ExpiredEntry> {
    reports.iter().flat_map(|r| r.expired.clone()).collect()
}

/// Neither a purge nor a maintenance step reports an event: each was delivered once already.
async fn nothing_more_is_reported(db: &Db) {
    let later = db.purge_expired(1_000).await.unwrap();
    assert!(later.expired.is_empty(), "{later:?}");
    let step = db.maintenance_step().await.unwrap();
    assert!(step.purge.expired.is_empty(), "{:?}", step.purge);
}

fn all_keys() -> Vec<Vec<u8>> {
    (0..KEYS).map(key).collect()
}

fn disk(store: &FaultyStore<MemoryStore>) -> &MemoryStore {
    store.inner()
}

#[test]
fn a_put_into_a_store_full_of_expired_keys_succeeds_after_a_reclaim() {
    let (db, store, _clock) = full_of_expired_keys();
    let reports = listen(&db);
    let quota = disk(&store).stored_bytes() + SLACK;
    run(async {
        db.put(b"big", &[7u8; BIG]).await.unwrap();
        assert_eq!(
            db.get(b"big").await.unwrap().as_deref(),
            Some(&[7u8; BIG][..])
        );
    });
    assert!(disk(&store).stored_bytes() <= quota);

    let reports = reports.borrow();
    assert_eq!(reports.len(), 1, "one reclaim, one report");
    assert_eq!(reports[0].removed, KEYS);
    assert_eq!(keys_of(&reports[0].expired), all_keys());
    assert!(reports[0].expired.iter().all(|e| e.value == [b'v'; 200]));
    // Delivered once: no purge reports them again.
    run(async {
        nothing_more_is_reported(&db).await;
    });
}

#[test]
fn without_a_listener_the_events_come_with_the_next_purge_report() {
    let (db, _store, _clock) = full_of_expired_keys();
    run(async {
        db.put(b"big", &[7u8; BIG]).await.unwrap();
        let report = db.purge_expired(1_000).await.unwrap();
        assert_eq!(keys_of(&report.expired), all_keys());
        assert_eq!(report.removed, KEYS);
        nothing_more_is_reported(&db).await;
    });
}

#[test]
fn puts_batches_recorded_calls_and_namespace_puts_reclaim_and_try_again() {
    type Call = fn(&Db) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + '_>>;
    let calls: [(&str, Call); 4] = [
        ("put_with_options", |db| {
            Box::pin(async move {
                let written = db
                    .put_with_options(b"big", &[1u8; BIG], PutOptions::default())
                    .await
                    .unwrap();
                assert!(written);
            })
        }),
        ("write", |db| {
            Box::pin(async move {
                let mut batch = WriteBatch::new();
                batch.put(b"big", &[2u8; BIG]).put(b"other", b"x");
                assert!(db.write(batch).await.unwrap());
            })
        }),
        ("a recorded call", |db| {
            Box::pin(async move {
                let recording = db.recording_call(b"call-1").unwrap();
                recording.put(b"big", &[3u8; BIG]).await.unwrap();
                assert!(db.recorded_call(b"call-1").await.unwrap().is_some());
            })
        }),
        ("a namespace's put", |db| {
            Box::pin(async move {
                let ns = db.namespace("cache", None).await.unwrap();
                ns.put(b"big", &[4u8; BIG]).await.unwrap();
            })
        }),
    ];
    for (name, call) in calls {
        let (db, _store, _clock) = full_of_expired_keys();
        let reports = listen(&db);
        run(call(&db));
        let reports = reports.borrow();
        let events = events_of(&reports);
        assert_eq!(keys_of(&events), all_keys(), "{name}");
    }
}

#[test]
fn flush_and_the_other_write_calls_reclaim_when_the_store_has_no_room_left() {
    type Call = fn(&Db) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + '_>>;
    let calls: [(&str, Call); 6] = [
        ("flush", |db| {
            Box::pin(async move { db.flush().await.unwrap() })
        }),
        ("delete", |db| {
            Box::pin(async move { assert!(db.delete(b"live").await.unwrap()) })
        }),
        ("expire", |db| {
            Box::pin(async move {
                let changed = db.expire(b"live", 5_000, ExpireCondition::default()).await;
                assert!(changed.unwrap());
            })
        }),
        ("expire_at", |db| {
            Box::pin(async move {
                let at = db.now().unwrap() + 5_000;
                let changed = db.expire_at(b"live", at, ExpireCondition::default()).await;
                assert!(changed.unwrap());
            })
        }),
        ("persist", |db| {
            Box::pin(async move { assert!(db.persist(b"live").await.unwrap()) })
        }),
        ("get_ex", |db| {
            Box::pin(async move {
                let value = db.get_ex(b"live", GetExOptions::Persist).await.unwrap();
                assert_eq!(value.as_deref(), Some(&b"v"[..]));
            })
        }),
    ];
    for (name, call) in calls {
        let (db, store, _clock) = full_of_expired_keys();
        run(db.put_with_options(b"live", b"v", PutOptions::expire_after(60_000))).unwrap();
        let full = disk(&store).stored_bytes();
        disk(&store).set_quota(Some(full));
        let reports = listen(&db);
        run(call(&db));
        let events = events_of(&reports.borrow());
        assert_eq!(keys_of(&events), all_keys(), "{name}");
        assert!(disk(&store).stored_bytes() < full, "{name}");
    }
}

#[test]
fn expired_ssts_are_dropped_whole_when_no_compaction_output_would_fit() {
    let disk = MemoryStore::new();
    let clock = FakeClock::new(T0);
    let reports = run(async {
        let db = Db::open(disk.clone(), clock.clone(), DbOptions::default())
            .await
            .unwrap();
        // Live keys in one SST, keys that expire in another.
        for i in 0..20 {
            db.put(format!("live:{i:03}").as_bytes(), &[b'l'; 200])
                .await
                .unwrap();
        }
        db.flush().await.unwrap();
        put_expiring_keys(&db).await;
        // No room for a rewrite of the live SST next to the old one.
        disk.set_quota(Some(disk.stored_bytes() + SLACK));
        clock.advance(TTL_MS as i64 + 1);
        let reports = listen(&db);
        db.put(b"big", &[7u8; BIG]).await.unwrap();
        for i in 0..20 {
            assert!(db.has(format!("live:{i:03}").as_bytes()).await.unwrap());
        }
        reports
    });
    let events = events_of(&reports.borrow());
    assert_eq!(keys_of(&events), all_keys());
}

#[test]
fn a_put_that_still_does_not_fit_fails_with_quota_exceeded_and_writes_nothing() {
    let disk = MemoryStore::new();
    let store = FaultyStore::new(disk.clone(), FaultPlan::default());
    let clock = FakeClock::new(T0);
    run(async {
        let db = Db::open(store.clone(), clock.clone(), DbOptions::default())
            .await
            .unwrap();
        db.put(b"live", b"v").await.unwrap();
        db.put_with_options(b"expiring", b"e", PutOptions::expire_after(TTL_MS))
            .await
            .unwrap();
        clock.advance(TTL_MS as i64 + 1);
        let reports = listen(&db);
        disk.set_quota(Some(disk.stored_bytes() + SLACK));

        let e = db.put(b"big", &[7u8; BIG]).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::QuotaExceeded);
        let mut batch = WriteBatch::new();
        batch.put(b"a", b"1").put(b"big", &[7u8; BIG]);
        let e = db.write(batch).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::QuotaExceeded);

        // Nothing of either call, and what was there before is there.
        assert_eq!(db.get(b"big").await.unwrap(), None);
        assert_eq!(db.get(b"a").await.unwrap(), None);
        assert_eq!(db.get(b"live").await.unwrap().as_deref(), Some(&b"v"[..]));
        // The first call's reclaim purged the expired key, once.
        let events = events_of(&reports.borrow());
        assert_eq!(keys_of(&events), [b"expiring".to_vec()]);

        // Nor after a reopen on the same disk.
        drop(db);
        let db = Db::open(disk.clone(), clock.clone(), DbOptions::default())
            .await
            .unwrap();
        assert_eq!(db.get(b"big").await.unwrap(), None);
        assert_eq!(db.get(b"a").await.unwrap(), None);
        assert_eq!(db.get(b"live").await.unwrap().as_deref(), Some(&b"v"[..]));
    });
}

/// Commits after the plan is set: 1 is the put's WAL commit (refused: the store is full), 2 the
/// reclaim's purge (its `purged_until`), 3 the planned compaction (here the whole drop of the
/// expired SST), 4 the full compaction, then the deletion of the replaced SSTs' pages and the
/// put's second WAL commit.
#[test]
fn a_purge_that_fails_during_the_reclaim_leaves_the_caller_its_quota_error() {
    let (db, store, _clock) = full_of_expired_keys();
    let reports = listen(&db);
    store.set_plan(FaultPlan {
        fail_commit: Some(2),
        ..FaultPlan::default()
    });
    run(async {
        let e = db.put(b"big", &[7u8; BIG]).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::QuotaExceeded, "{e}");
        assert_eq!(db.get(b"big").await.unwrap(), None);
    });
    assert!(reports.borrow().is_empty(), "the purge failed: no events");
    assert!(
        store.commits_attempted() >= 3,
        "the reclaim went on to compact"
    );

    // The expired keys are still owed their events, and get them once.
    disk(&store).set_quota(None);
    run(async {
        let report = db.purge_expired(1_000).await.unwrap();
        assert_eq!(keys_of(&report.expired), all_keys());
        assert!(db.purge_expired(1_000).await.unwrap().expired.is_empty());
    });
}

#[test]
fn a_compaction_that_fails_during_the_reclaim_leaves_the_caller_its_quota_error() {
    let (db, store, _clock) = full_of_expired_keys();
    let reports = listen(&db);
    let ssts_before = db
        .stats()
        .levels
        .iter()
        .map(|l| l.ssts.len())
        .sum::<usize>();
    store.set_plan(FaultPlan {
        fail_commit: Some(3),
        quota_on_commit: Some(4),
        ..FaultPlan::default()
    });
    run(async {
        let e = db.put(b"big", &[7u8; BIG]).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::QuotaExceeded, "{e}");
        assert_eq!(db.get(b"big").await.unwrap(), None);
    });
    let ssts_after = db
        .stats()
        .levels
        .iter()
        .map(|l| l.ssts.len())
        .sum::<usize>();
    assert_eq!(
        ssts_after, ssts_before,
        "the compactions were the commits that failed"
    );
    // The purge before it stands, and its events were delivered.
    let events = events_of(&reports.borrow());
    assert_eq!(keys_of(&events), all_keys());

    // The next call's reclaim compacts, and the put fits; no event fires twice.
    run(async {
        db.put(b"big", &[7u8; BIG]).await.unwrap();
        assert!(db.has(b"big").await.unwrap());
    });
    let events = events_of(&reports.borrow());
    assert_eq!(events.len(), KEYS);
}

/// A store that passes everything to a memory store and counts, of the commits, those refused
/// for want of room and those that write an SST (a flush's or a compaction's). Once `refusing` is
/// set to an error kind, it refuses every commit: the first as full, with the platform's error as
/// source, the later ones with that kind (as Firefox's IndexedDB refuses every write for a while
/// once storage ran out).
#[derive(Clone, Default)]
struct Counting {
    inner: MemoryStore,
    refused: Rc<Cell<u32>>,
    sst_writes: Rc<Cell<u32>>,
    refusing: Rc<Cell<Option<ErrorKind>>>,
}

impl PageStore for Counting {
    forward_to_inner!(read_manifest, get_page, list_pages);

    fn commit(&self, commit: Commit) -> StoreFuture<'_, ()> {
        if let Some(then) = self.refusing.get() {
            let refused = self.refused.get();
            self.refused.set(refused + 1);
            let error = if refused == 0 {
                ttlkv::Error::new(ErrorKind::QuotaExceeded, "commit: the disk is full")
                    .with_source(PlatformQuotaError)
            } else {
                ttlkv::Error::new(then, "commit: the database does not allow mutations")
            };
            return Box::pin(async move { Err(error) });
        }
        let writes_sst = commit
            .puts
            .iter()
            .any(|(id, _)| id.kind == PageKind::SstMeta);
        Box::pin(async move {
            let result = self.inner.commit(commit).await;
            match &result {
                Err(e) if e.kind() == ErrorKind::QuotaExceeded => {
                    self.refused.set(self.refused.get() + 1);
                }
                Ok(()) if writes_sst => self.sst_writes.set(self.sst_writes.get() + 1),
                _ => {}
            }
            result
        })
    }

    fn yield_now(&self) -> YieldFuture<'_> {
        self.inner.yield_now()
    }
}

/// The SSTs the store was asked to write, and the reports the listener got, when `writers`
/// concurrent puts find a store full of expired keys (and one live key, so that every compaction
/// writes an SST).
fn writers_on_a_full_store(writers: usize) -> (u32, Vec<PurgeReport>) {
    let store = Counting::default();
    let clock = FakeClock::new(T0);
    let db = run(async {
        let db = Db::open(store.clone(), clock.clone(), DbOptions::default())
            .await
            .unwrap();
        db.put(b"live", &[b'l'; 200]).await.unwrap();
        put_expiring_keys(&db).await;
        db
    });
    // Room for a compaction's output (the live key), not for any of the writes.
    let room = store.inner.stored_bytes() + 4 * SLACK;
    store.inner.set_quota(Some(room));
    store.inner.set_latency(2);
    clock.advance(TTL_MS as i64 + 1);
    store.sst_writes.set(0);
    let reports = listen(&db);
    run(async {
        let puts = (0..writers).map(|i| {
            let db = db.clone();
            async move { db.put(&[b'w', i as u8], &[1u8; BIG]).await }
        });
        for result in futures::future::join_all(puts).await {
            result.unwrap();
        }
    });
    assert!(store.refused.get() >= 1, "the store was full");
    let reports = reports.borrow().clone();
    (store.sst_writes.get(), reports)
}

#[test]
fn concurrent_writers_that_find_the_store_full_cost_one_reclaim() {
    let (one_writer, _) = writers_on_a_full_store(1);
    let (three_writers, reports) = writers_on_a_full_store(3);
    assert_eq!(
        three_writers, one_writer,
        "the writers shared one reclaim's compactions"
    );
    assert_eq!(reports.len(), 1);
    assert_eq!(keys_of(&reports[0].expired), all_keys());
}

#[test]
fn the_expire_hook_applies_to_the_purges_of_a_reclaim() {
    let (db, _store, _clock) = full_of_expired_keys();
    let reports = listen(&db);
    let kept = key(7);
    let hook_key = kept.clone();
    db.set_expire_hook(Some(Rc::new(move |e: &ExpiredEntry| {
        (e.key == hook_key).then(|| Replacement {
            value: b"renewed".to_vec(),
            ttl: Ttl::ExpireAfter(60_000),
        })
    })));
    run(async {
        db.put(b"big", &[7u8; BIG]).await.unwrap();
        assert_eq!(
            db.get(&kept).await.unwrap().as_deref(),
            Some(&b"renewed"[..])
        );
    });
    let reports = reports.borrow();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].rewritten, 1);
    let expected: BTreeSet<_> = all_keys().into_iter().filter(|k| *k != kept).collect();
    let got: BTreeSet<_> = keys_of(&reports[0].expired).into_iter().collect();
    assert_eq!(got, expected);
}

#[test]
fn reclaim_on_demand_returns_its_events_and_frees_the_store() {
    let (db, store, _clock) = full_of_expired_keys();
    let reports = listen(&db);
    let before = disk(&store).stored_bytes();
    run(async {
        let report = db.reclaim().await.unwrap();
        assert_eq!(report.removed, KEYS);
        assert_eq!(keys_of(&report.expired), all_keys());
        assert!(db.reclaim().await.unwrap().expired.is_empty(), "once");
    });
    assert!(
        reports.borrow().is_empty(),
        "asked for: returned, not given to the listener"
    );
    assert!(disk(&store).stored_bytes() < before / 2);
}

#[test]
fn a_clear_that_finds_the_store_full_keeps_the_events_of_its_purges() {
    let (db, store, _clock) = full_of_expired_keys();
    run(db.put(b"live", b"v")).unwrap();
    // Room for nothing more: the clear's purge fits (a manifest of the same size), its own
    // manifest commit does not, until the reclaim frees the expired rows.
    disk(&store).set_quota(Some(disk(&store).stored_bytes()));
    let reports = listen(&db);
    run(async {
        let report = db.clear().await.unwrap();
        let listened = events_of(&reports.borrow());
        let mut all = report.expired.clone();
        all.extend(listened);
        assert_eq!(
            keys_of(&all),
            all_keys(),
            "every event once, in one place or the other"
        );
        assert_eq!(db.get(b"live").await.unwrap(), None);
    });
}

/// The platform's own quota error, as a store would keep it as the source of its error.
#[derive(Debug)]
struct PlatformQuotaError;

impl std::fmt::Display for PlatformQuotaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QuotaExceededError")
    }
}

impl std::error::Error for PlatformQuotaError {}

fn put_on_a_store_that_refuses_once_full(then: ErrorKind) -> (ttlkv::Error, u32, MemoryStore) {
    let store = Counting::default();
    let error = run(async {
        let db = Db::open(store.clone(), FakeClock::new(T0), DbOptions::default())
            .await
            .unwrap();
        db.put(b"before", b"v").await.unwrap();
        store.refusing.set(Some(then));
        db.put(b"k", b"v").await.unwrap_err()
    });
    (error, store.refused.get(), store.inner.clone())
}

#[test]
fn a_storage_failure_on_the_try_after_a_reclaim_is_still_the_store_being_full_with_its_cause() {
    use std::error::Error as _;
    let (error, refused, disk) = put_on_a_store_that_refuses_once_full(ErrorKind::Storage);
    assert!(
        refused >= 2,
        "the put was tried again ({refused} commits refused)"
    );
    assert_eq!(error.kind(), ErrorKind::QuotaExceeded, "{error}");
    assert!(
        error.message().contains("does not allow mutations"),
        "the second failure is named: {error}"
    );
    let source = error
        .source()
        .expect("the platform's quota error is the source");
    assert!(source.downcast_ref::<PlatformQuotaError>().is_some());
    let reopened = run(async {
        let db = Db::open(disk, FakeClock::new(T0), DbOptions::default())
            .await
            .unwrap();
        (
            db.get(b"before").await.unwrap(),
            db.get(b"k").await.unwrap(),
        )
    });
    assert_eq!(
        reopened,
        (Some(b"v".to_vec()), None),
        "nothing of the put was written"
    );
}

#[test]
fn any_other_failure_on_the_try_after_a_reclaim_is_the_callers_as_it_is() {
    let (error, _, _) = put_on_a_store_that_refuses_once_full(ErrorKind::Fenced);
    assert_eq!(error.kind(), ErrorKind::Fenced, "{error}");
}

/// A put finds the store full and reclaims; the app closes the database after `polls` turns,
/// somewhere in that reclaim. Returns the events the listener got before the close returned,
/// those a purge reports after a reopen, and whether the close began after the reclaim's purge
/// was committed but before the reclaim ended (the put then fails `Closed`).
fn close_during_a_reclaim(polls: usize) -> (Vec<ExpiredEntry>, Vec<ExpiredEntry>, bool) {
    let (db, store, clock) = full_of_expired_keys();
    let reports = listen(&db);
    disk(&store).set_latency(2);
    let (put, closed) = run(futures::future::join(db.put(b"big", &[7u8; BIG]), async {
        for _ in 0..polls {
            yield_once().await;
        }
        db.close().await
    }));
    closed.unwrap();
    if let Err(e) = &put {
        assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
    }
    let listened = events_of(&reports.borrow());
    let mid_reclaim = put.is_err() && !listened.is_empty();
    drop(db);
    disk(&store).set_latency(0);
    disk(&store).set_quota(None);
    let db = Db::open(disk(&store).clone(), clock, DbOptions::default());
    let after = run(async {
        let db = db.await.unwrap();
        db.purge_expired(1_000).await.unwrap().expired
    });
    (listened, after, mid_reclaim)
}

#[test]
fn a_reclaim_under_way_when_its_database_closes_still_delivers_every_event_it_purged() {
    let mut mid_reclaim = 0;
    for polls in 0..120 {
        let (listened, after, mid) = close_during_a_reclaim(polls);
        let mut all = listened.clone();
        all.extend(after);
        assert_eq!(
            keys_of(&all),
            all_keys(),
            "closed after {polls} polls: every event once, to the listener or after a reopen"
        );
        mid_reclaim += usize::from(mid);
    }
    assert!(
        mid_reclaim > 0,
        "some close began in the middle of a reclaim"
    );
}
