//! What a failed commit leaves behind (nothing of the write, reads keep working), fencing of a
//! writer that lost its role, and group commit sharing one commit among concurrent writes.

mod common;
use common::*;

use ttlkv::store::{FaultPlan, FaultyStore, MemoryStore, PageKind, PageStore};
use ttlkv::{Db, DbOptions, ErrorKind, FakeClock, PutCondition, PutOptions, WriteBatch};

#[test]
fn a_failed_wal_commit_rolls_the_write_back_and_the_db_keeps_working() {
    let (db, faulty, clock) = open_faulty(DbOptions::default());
    run(async {
        db.put(b"k", b"old").await.unwrap();
        fail_commit(&faulty, 1);
        let e = db.put(b"k", b"new").await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Storage);
        assert_eq!(
            db.get(b"k").await.unwrap().as_deref(),
            Some(&b"old"[..]),
            "rolled back"
        );
        db.put(b"k", b"newer").await.unwrap();
        assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"newer"[..]));
        db.close().await.unwrap();
    });
    let db = reopen(faulty.inner(), &clock, DbOptions::default());
    assert_eq!(run(db.get(b"k")).unwrap().as_deref(), Some(&b"newer"[..]));
}

/// The next commit, from now on, lands but reports an error: the store could not confirm it.
fn fail_after_commit(faulty: &FaultyStore<MemoryStore>) {
    faulty.set_plan(FaultPlan {
        fail_after_commit: Some(1),
        ..FaultPlan::default()
    });
}

async fn wal_pages(store: &MemoryStore) -> usize {
    store.list_pages(PageKind::Wal).await.unwrap().len()
}

#[test]
fn a_wal_commit_that_failed_but_landed_is_never_replayed_beside_later_writes() {
    let (db, faulty, clock) = open_faulty(DbOptions::default());
    run(async {
        fail_after_commit(&faulty);
        let mut both = WriteBatch::new();
        both.put(b"a", b"1");
        both.put(b"b", b"1");
        let e = db.write(both).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Storage);
        assert_eq!(db.get(b"b").await.unwrap(), None, "rolled back");
        // Planned on the rolled-back state: `a` is absent, so it writes.
        let wrote = db
            .put_with_options(b"a", b"2", PutCondition::IfAbsent.into())
            .await
            .unwrap();
        assert!(wrote);
    });
    // A crash: no close, the store as the last commit left it.
    drop(db);
    let db = reopen(faulty.inner(), &clock, DbOptions::default());
    let (a, b) = run(async { (db.get(b"a").await.unwrap(), db.get(b"b").await.unwrap()) });
    // The batch and the conditional put in one state is what no order of them gives: the put
    // wrote only because the batch was not there.
    assert_eq!(
        (a.as_deref(), b.as_deref()),
        (Some(&b"2"[..]), None),
        "the later put alone, never beside the batch it was planned without"
    );
}

#[test]
fn the_next_commit_of_any_kind_deletes_a_wal_page_whose_commit_failed() {
    let (db, faulty, _clock) = open_faulty(DbOptions::default());
    run(async {
        fail_after_commit(&faulty);
        db.put(b"k", b"v").await.unwrap_err();
        assert_eq!(
            wal_pages(faulty.inner()).await,
            1,
            "the page the failed commit landed"
        );
        // A manifest change, with no WAL page of its own.
        db.namespace("sessions", None).await.unwrap();
        assert_eq!(wal_pages(faulty.inner()).await, 0);
        // Nothing left to delete: the next WAL commit writes its own page only.
        db.put(b"k", b"v").await.unwrap();
        assert_eq!(wal_pages(faulty.inner()).await, 1);
    });
}

#[test]
fn quota_exceeded_writes_nothing_and_reads_keep_working() {
    let disk = MemoryStore::new();
    let clock = FakeClock::new(T0);
    run(async {
        let db = Db::open(disk.clone(), clock.clone(), DbOptions::default())
            .await
            .unwrap();
        db.put(b"small", b"v").await.unwrap();
        disk.set_quota(Some(disk.stored_bytes() + 100));
        let e = db.put(b"big", &[7u8; 4096]).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::QuotaExceeded);
        assert_eq!(db.get(b"big").await.unwrap(), None);
        assert_eq!(db.get(b"small").await.unwrap().as_deref(), Some(&b"v"[..]));
        disk.set_quota(None);
        db.put(b"big", &[7u8; 4096]).await.unwrap();
        assert!(db.has(b"big").await.unwrap());
    });
}

#[test]
fn concurrent_writes_queued_behind_a_failed_commit_fail_too_and_leave_nothing() {
    let (db, faulty, _clock) = open_faulty(DbOptions::default());
    faulty.inner().set_latency(1);
    run(async {
        fail_commit(&faulty, 1);
        let puts = (0..20u8).map(|i| {
            let db = db.clone();
            async move { db.put(&[b'k', i], b"v").await }
        });
        let results = futures::future::join_all(puts).await;
        let failed = results.iter().filter(|r| r.is_err()).count();
        assert!(failed >= 1);
        for (i, r) in results.iter().enumerate() {
            let present = db.has(&[b'k', i as u8]).await.unwrap();
            assert_eq!(present, r.is_ok(), "key {i}: visible iff acknowledged");
        }
    });
}

#[test]
fn a_version_whose_commit_was_in_flight_survives_the_failure_of_the_next_commit() {
    // The first put's commit is in flight when the second overwrites the key; that commit lands,
    // the next (the second put's) fails: the rollback stops at the first put's version, which
    // the overwrite must not have pruned.
    let (db, faulty, clock) = open_faulty(DbOptions::default());
    faulty.inner().set_latency(1);
    run(async {
        fail_commit(&faulty, 2);
        let (first, second) = futures::join!(db.put(b"k", b"first"), db.put(b"k", b"second"));
        assert!(first.is_ok(), "{first:?}");
        assert_eq!(second.unwrap_err().kind(), ErrorKind::Storage);
        assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"first"[..]));
        db.put(b"k", b"third").await.unwrap();
        db.close().await.unwrap();
    });
    let db = reopen(faulty.inner(), &clock, DbOptions::default());
    assert_eq!(run(db.get(b"k")).unwrap().as_deref(), Some(&b"third"[..]));
}

#[test]
fn a_flush_beside_a_failing_commit_never_makes_the_failed_write_durable() {
    // The put's commit is in flight when the flush starts; the flush must wait for it before it
    // freezes the memtable, or the write that then fails and is rolled back would be frozen,
    // flushed and made durable all the same.
    let disk = MemoryStore::new();
    let store = SlowFail {
        inner: disk.clone(),
        fail_next_commit: Default::default(),
    };
    let clock = FakeClock::new(T0);
    run(async {
        let db = Db::open(store.clone(), clock.clone(), DbOptions::default())
            .await
            .unwrap();
        db.put(b"k", b"old").await.unwrap();
        store.fail_next_commit.set(true);
        let (put, flush) = futures::join!(db.put(b"k", b"new"), db.flush());
        assert_eq!(put.unwrap_err().kind(), ErrorKind::Storage);
        flush.unwrap();
        assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"old"[..]));
        db.close().await.unwrap();
    });
    let db = reopen(&disk, &clock, DbOptions::default());
    assert_eq!(run(db.get(b"k")).unwrap().as_deref(), Some(&b"old"[..]));
}

#[test]
fn a_key_overwritten_between_commits_holds_a_few_versions_not_one_per_write() {
    // Relaxed writes are committed by maintenance, here never: every overwrite of one key used to
    // stay in the memtable until a commit, each write searching them all.
    let disk = MemoryStore::new();
    let clock = FakeClock::new(T0);
    let options = DbOptions {
        durability: ttlkv::Durability::Relaxed,
        ..DbOptions::default()
    };
    run(async {
        let db = Db::open(disk.clone(), clock.clone(), options)
            .await
            .unwrap();
        db.put(b"k", b"v").await.unwrap();
        let one_version = db.stats().memtable_bytes;
        for i in 0..1_000u32 {
            db.put(b"k", &i.to_le_bytes()).await.unwrap();
        }
        assert!(
            db.stats().memtable_bytes <= 2 * one_version,
            "{} bytes held after 1,000 overwrites, {one_version} for one version",
            db.stats().memtable_bytes
        );
        assert_eq!(
            db.get(b"k").await.unwrap().as_deref(),
            Some(&999u32.to_le_bytes()[..])
        );
    });
}

#[test]
fn a_writer_that_lost_its_role_is_fenced_and_nothing_it_writes_lands() {
    let disk = MemoryStore::new();
    let clock = FakeClock::new(T0);
    run(async {
        let old = Db::open(disk.clone(), clock.clone(), DbOptions::default())
            .await
            .unwrap();
        old.put(b"k", b"from old").await.unwrap();
        let new = Db::open(disk.clone(), clock.clone(), DbOptions::default())
            .await
            .unwrap();
        let e = old.put(b"k", b"stale write").await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Fenced);
        assert_eq!(
            old.delete(b"k").await.unwrap_err().kind(),
            ErrorKind::Fenced
        );
        assert_eq!(old.flush().await.unwrap_err().kind(), ErrorKind::Fenced);
        assert_eq!(
            new.get(b"k").await.unwrap().as_deref(),
            Some(&b"from old"[..])
        );
        new.put(b"k", b"from new").await.unwrap();
        let reopened = Db::open(disk.clone(), clock.clone(), DbOptions::default())
            .await
            .unwrap();
        assert_eq!(
            reopened.get(b"k").await.unwrap().as_deref(),
            Some(&b"from new"[..])
        );
    });
}

#[test]
fn concurrent_durable_writes_share_group_commits() {
    let disk = MemoryStore::new().with_latency(2);
    let clock = FakeClock::new(T0);
    run(async {
        let db = Db::open(disk.clone(), clock.clone(), DbOptions::default())
            .await
            .unwrap();
        let before = db.stats().wal_commits;
        let puts = (0..1_000u32).map(|i| {
            let db = db.clone();
            async move {
                db.put_with_options(&i.to_be_bytes(), b"value", PutOptions::expire_after(60_000))
                    .await
            }
        });
        for r in futures::future::join_all(puts).await {
            r.unwrap();
        }
        let commits = db.stats().wal_commits - before;
        println!("group commit: 1000 concurrent durable puts took {commits} WAL commits");
        assert!(commits <= 4, "expected a few group commits, got {commits}");
        // Every one of them is durable: a reopen (no close, so no final drain) sees them all.
        let reopened = Db::open(disk.clone(), clock.clone(), DbOptions::default())
            .await
            .unwrap();
        assert_eq!(
            reopened.scan(&Default::default()).await.unwrap().len(),
            1_000
        );
    });
}
