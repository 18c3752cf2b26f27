//! `Db::clear` removes every key of a keyspace (the default one or a namespace) in one atomic
//! manifest commit: the same store work for ten keys as for ten thousand, no expire events for
//! the keys it removed (but one for each key that had expired before it), handles keep working
//! on the now empty keyspace, snapshots taken before still see the keys, other keyspaces are
//! untouched, and compaction reclaims the rows.

mod common;
use common::*;

use ttlkv::store::{FaultPlan, FaultyStore, MemoryStore};
use ttlkv::{Db, DbOptions, ErrorKind, FakeClock, PutOptions, ScanOptions};

fn key(i: usize) -> Vec<u8> {
    format!("key-{i:05}").into_bytes()
}

async fn fill(db: &Db, n: usize) {
    for i in 0..n {
        let opts = if i % 2 == 0 {
            PutOptions::expire_after(60_000)
        } else {
            PutOptions::default()
        };
        db.put_with_options(&key(i), b"value", opts).await.unwrap();
    }
}

async fn keys_of(db: &Db) -> usize {
    db.scan(&ScanOptions::default()).await.unwrap().len()
}

/// Store operations (commits and page reads) a clear of a keyspace of `n` keys costs.
fn clear_cost(n: usize) -> (u64, u64) {
    let (db, store, _) = fresh(small());
    run(async {
        fill(&db, n).await;
        db.flush().await.unwrap();
        store.reset_counters();
        db.clear().await.unwrap();
        let cost = (store.commits(), store.page_reads());
        assert_eq!(keys_of(&db).await, 0);
        cost
    })
}

#[test]
fn clearing_ten_thousand_keys_costs_what_clearing_ten_does() {
    let (commits_10, reads_10) = clear_cost(10);
    let (commits_10k, reads_10k) = clear_cost(10_000);
    assert_eq!(commits_10, 1, "a clear is one commit");
    assert_eq!((commits_10k, reads_10k), (commits_10, reads_10));
}

#[test]
fn a_cleared_keyspace_is_empty_and_its_handle_keeps_working() {
    let (db, store, clock) = fresh(small());
    run(async {
        fill(&db, 200).await;
        db.flush().await.unwrap();
        fill(&db, 20).await; // some in the memtable too
        db.clear().await.unwrap();
        assert_eq!(db.get(&key(1)).await.unwrap(), None);
        assert_eq!(db.ttl(&key(0)).await.unwrap(), -2);
        assert_eq!(keys_of(&db).await, 0);
        // The same handle writes into the empty keyspace, and a conditional put sees it empty.
        db.put(&key(1), b"after").await.unwrap();
        assert!(db
            .put_with_options(&key(2), b"new", ttlkv::PutCondition::IfAbsent.into())
            .await
            .unwrap());
        assert_eq!(keys_of(&db).await, 2);
        // And so does the next open.
        drop(db);
        let db = Db::open(store.clone(), clock.clone(), small())
            .await
            .unwrap();
        assert_eq!(
            db.get(&key(1)).await.unwrap().as_deref(),
            Some(&b"after"[..])
        );
        assert_eq!(keys_of(&db).await, 2);
    });
}

#[test]
fn keys_removed_by_a_clear_fire_no_expire_events_and_compaction_reclaims_them() {
    let (db, _, clock) = fresh(small());
    run(async {
        fill(&db, 300).await;
        db.flush().await.unwrap();
        db.clear().await.unwrap();
        clock.advance(120_000);
        let mut expired = 0;
        loop {
            let report = db.purge_expired(1_000).await.unwrap();
            expired += report.expired.len();
            if !report.more_due {
                break;
            }
        }
        assert_eq!(expired, 0, "a cleared key is not reported as expired");
        db.compact().await.unwrap();
        assert_eq!(
            stored_rows(&db),
            0,
            "compaction drops the cleared rows and their index entries"
        );
    });
}

#[test]
fn keys_that_expired_before_a_clear_get_their_one_expire_event() {
    let (db, _, clock) = fresh(small());
    run(async {
        fill(&db, 40).await; // 20 with a TTL of a minute
        db.flush().await.unwrap();
        db.put_with_options(b"late", b"v", PutOptions::expire_after(600_000))
            .await
            .unwrap();
        clock.advance(61_000);
        let report = db.clear().await.unwrap();
        assert_eq!(
            report.expired.len(),
            20,
            "the expired keys are reported by the clear"
        );
        clock.advance(600_000);
        let later = db.purge_expired(1_000).await.unwrap();
        assert!(
            later.expired.is_empty(),
            "and never again; the cleared ones never"
        );
        assert_eq!(keys_of(&db).await, 0);
    });
}

#[test]
fn a_clear_touches_only_its_own_keyspace() {
    let (db, _, _) = fresh(small());
    run(async {
        let sessions = db.namespace("sessions", None).await.unwrap();
        let carts = db.namespace("carts", None).await.unwrap();
        fill(&db, 30).await;
        fill(&sessions, 30).await;
        fill(&carts, 30).await;
        sessions.clear().await.unwrap();
        assert_eq!(keys_of(&sessions).await, 0);
        assert_eq!(keys_of(&db).await, 30);
        assert_eq!(keys_of(&carts).await, 30);
        db.clear().await.unwrap();
        assert_eq!(keys_of(&db).await, 0);
        assert_eq!(keys_of(&carts).await, 30);
        // A handle opened after the clear is the same keyspace as the one opened before.
        sessions.put(b"s", b"1").await.unwrap();
        let again = db.namespace("sessions", None).await.unwrap();
        assert_eq!(again.get(b"s").await.unwrap().as_deref(), Some(&b"1"[..]));
        again.clear().await.unwrap();
        assert_eq!(sessions.get(b"s").await.unwrap(), None);
    });
}

#[test]
fn a_namespace_keeps_its_ttl_rules_across_a_clear() {
    let (db, _, _) = fresh(DbOptions::default());
    run(async {
        let options = ttlkv::NamespaceOptions {
            default_ttl_ms: Some(5_000),
            max_ttl_ms: Some(10_000),
        };
        let ns = db.namespace("short", Some(options)).await.unwrap();
        ns.put(b"k", b"v").await.unwrap();
        ns.clear().await.unwrap();
        ns.put(b"k", b"v").await.unwrap();
        assert_eq!(ns.ttl(b"k").await.unwrap(), 5_000);
        ns.put_with_options(b"long", b"v", PutOptions::expire_after(60_000))
            .await
            .unwrap();
        assert_eq!(ns.ttl(b"long").await.unwrap(), 10_000);
    });
}

#[test]
fn a_snapshot_taken_before_a_clear_still_sees_the_keys() {
    let (db, _, _) = fresh(small());
    run(async {
        fill(&db, 50).await;
        let snapshot = db.snapshot().unwrap();
        db.clear().await.unwrap();
        db.compact().await.unwrap();
        assert_eq!(
            snapshot.scan(&ScanOptions::default()).await.unwrap().len(),
            50
        );
        assert_eq!(
            snapshot.get(&key(1)).await.unwrap().as_deref(),
            Some(&b"value"[..])
        );
        snapshot.release();
        assert_eq!(keys_of(&db).await, 0);
    });
}

#[test]
fn clearing_a_dropped_namespace_is_closed() {
    let (db, _, _) = fresh(DbOptions::default());
    run(async {
        let ns = db.namespace("gone", None).await.unwrap();
        ns.put(b"k", b"v").await.unwrap();
        ns.clear().await.unwrap();
        assert!(db.drop_namespace("gone").await.unwrap());
        assert_eq!(ns.clear().await.unwrap_err().kind(), ErrorKind::Closed);
        assert_eq!(
            ns.put(b"k", b"v").await.unwrap_err().kind(),
            ErrorKind::Closed
        );
        // A namespace made again under that name is a new, empty keyspace.
        let fresh_ns = db.namespace("gone", None).await.unwrap();
        assert_eq!(fresh_ns.get(b"k").await.unwrap(), None);
    });
}

#[test]
fn a_clear_that_fails_to_commit_changes_nothing() {
    let disk = MemoryStore::new();
    let clock = FakeClock::new(T0);
    let faulty = FaultyStore::new(disk.clone(), FaultPlan::default());
    run(async {
        let db = Db::open(faulty.clone(), clock.clone(), DbOptions::default())
            .await
            .unwrap();
        fill(&db, 40).await;
        faulty.set_plan(FaultPlan {
            // Counted from this plan on: the clear's commit.
            fail_commit: Some(1),
            ..FaultPlan::default()
        });
        assert!(db.clear().await.is_err());
        faulty.set_plan(FaultPlan::default());
        assert_eq!(keys_of(&db).await, 40, "in memory: nothing was cleared");
        drop(db);
        let db = Db::open(disk.clone(), clock.clone(), DbOptions::default())
            .await
            .unwrap();
        assert_eq!(keys_of(&db).await, 40, "on disk: nothing was cleared");
    });
}
