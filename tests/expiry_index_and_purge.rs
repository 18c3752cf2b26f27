//! The expiry index and the purge: O(expired) removal oldest first, stale entries dropped and
//! never acted on, exactly one event per expired key, the replace hook, and compaction never
//! removing an expired row before its event.

mod common;
use common::*;

use std::cell::Cell;
use std::rc::Rc;

use ttlkv::{DbOptions, ErrorKind, ExpireCondition, PutOptions, Replacement, Ttl};

fn ttl(ms: u64) -> PutOptions {
    PutOptions::expire_after(ms)
}

#[test]
fn purge_removes_due_keys_oldest_first_and_stops_at_the_first_not_due() {
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        db.put_with_options(b"c", b"3", ttl(300)).await.unwrap();
        db.put_with_options(b"a", b"1", ttl(100)).await.unwrap();
        db.put_with_options(b"b", b"2", ttl(200)).await.unwrap();
        db.put_with_options(b"later", b"x", ttl(10_000))
            .await
            .unwrap();
        db.put(b"forever", b"y").await.unwrap();
        clock.advance(300);
        let report = db.purge_expired(100).await.unwrap();
        let keys: Vec<_> = report.expired.iter().map(|e| e.key.clone()).collect();
        assert_eq!(
            keys,
            [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()],
            "oldest expiry first"
        );
        assert_eq!(report.removed, 3);
        assert!(!report.more_due);
        let a = &report.expired[0];
        assert_eq!(
            (a.value.as_slice(), a.expire_at, a.namespace.as_str()),
            (&b"1"[..], T0 + 100, "")
        );
        assert!(db.has(b"later").await.unwrap() && db.has(b"forever").await.unwrap());
        assert_eq!(
            db.purge_expired(100).await.unwrap().removed,
            0,
            "nothing left due"
        );
    });
}

#[test]
fn a_purge_limit_bounds_each_slice_and_says_more_is_due() {
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        for i in 0..25u32 {
            db.put_with_options(&i.to_be_bytes(), b"v", ttl(10 + u64::from(i)))
                .await
                .unwrap();
        }
        clock.advance(1_000);
        let mut total = 0;
        let mut slices = 0;
        loop {
            let r = db.purge_expired(10).await.unwrap();
            assert!(r.removed <= 10);
            total += r.removed;
            slices += 1;
            if !r.more_due {
                break;
            }
        }
        assert_eq!((total, slices), (25, 3));
    });
}

#[test]
fn a_purge_limit_of_zero_is_an_invalid_argument_and_removes_nothing() {
    // It was taken as 1: a purge asked to remove nothing removed a key.
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        db.put_with_options(b"k", b"v", ttl(10)).await.unwrap();
        clock.advance(1_000);
        let e = db.purge_expired(0).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert_eq!(
            db.purge_expired(1).await.unwrap().removed,
            1,
            "the refused purge removed nothing"
        );
    });
}

/// `count` keys that expire at `at`, each its own millisecond when `spread`.
async fn due_keys(db: &ttlkv::Db, count: u32, at: i64, spread: bool) {
    for i in 0..count {
        let expire_at = if spread { at + i64::from(i) } else { at };
        let options = PutOptions {
            ttl: Ttl::ExpireAt(expire_at),
            ..PutOptions::default()
        };
        db.put_with_options(&i.to_be_bytes(), b"v", options)
            .await
            .unwrap();
    }
}

#[test]
fn a_purge_whose_limit_meets_the_due_keys_exactly_writes_nothing_and_says_none_are_left() {
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        // Ten keys due in one millisecond and a limit of ten: the slice cannot move
        // `purged_until` into that millisecond, yet it removes no entry with a tombstone, since
        // it read one row past its limit and found nothing more due.
        due_keys(&db, 10, T0 + 100, false).await;
        db.put_with_options(b"later", b"x", ttl(10_000))
            .await
            .unwrap();
        clock.set(T0 + 100);
        let seq = db.stats().last_seq;
        let report = db.purge_expired(10).await.unwrap();
        assert_eq!((report.removed, report.more_due), (10, false));
        assert_eq!(db.stats().last_seq, seq, "nothing written");
        assert_eq!(db.purge_expired(10).await.unwrap().removed, 0);
        assert!(db.has(b"later").await.unwrap());
    });
}

#[test]
fn a_full_slice_that_ends_where_a_millisecond_ends_handles_every_entry_it_read() {
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        // Fifteen keys due one millisecond apart, slices of ten: the first slice stops before
        // the eleventh key's millisecond, so it handles all ten it read and writes nothing.
        due_keys(&db, 15, T0 + 100, true).await;
        clock.set(T0 + 200);
        let seq = db.stats().last_seq;
        let first = db.purge_expired(10).await.unwrap();
        assert_eq!((first.removed, first.more_due), (10, true));
        let second = db.purge_expired(10).await.unwrap();
        assert_eq!((second.removed, second.more_due), (5, false));
        assert_eq!(db.stats().last_seq, seq, "nothing written");
        let at = |r: &ttlkv::PurgeReport| r.expired.iter().map(|e| e.expire_at).collect::<Vec<_>>();
        let all: Vec<i64> = at(&first).into_iter().chain(at(&second)).collect();
        assert_eq!(all, (0..15).map(|i| T0 + 100 + i).collect::<Vec<_>>());
    });
}

#[test]
fn stale_entries_from_overwrite_delete_and_persist_are_dropped_never_acted_on() {
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        for k in [&b"over"[..], b"del", b"pers", b"moved"] {
            db.put_with_options(k, b"old", ttl(100)).await.unwrap();
        }
        db.put(b"over", b"new, no ttl").await.unwrap();
        db.delete(b"del").await.unwrap();
        db.persist(b"pers").await.unwrap();
        db.expire(b"moved", 5_000, ExpireCondition::default())
            .await
            .unwrap();
        db.flush().await.unwrap();
        clock.advance(100);
        let r = db.purge_expired(100).await.unwrap();
        assert_eq!((r.removed, r.stale), (0, 4), "{r:?}");
        assert!(r.expired.is_empty());
        assert_eq!(
            db.get(b"over").await.unwrap().as_deref(),
            Some(&b"new, no ttl"[..])
        );
        assert!(db.has(b"pers").await.unwrap() && db.has(b"moved").await.unwrap());
        clock.advance(5_000);
        let r = db.purge_expired(100).await.unwrap();
        assert_eq!(r.expired.len(), 1);
        assert_eq!(r.expired[0].key, b"moved");
    });
}

#[test]
fn each_expired_key_produces_exactly_one_event_across_flush_compaction_and_reopen() {
    let (db, store, clock) = fresh(small());
    run(async {
        for i in 0..200u32 {
            db.put_with_options(
                format!("k{i:03}").as_bytes(),
                b"v",
                ttl(50 + u64::from(i % 7)),
            )
            .await
            .unwrap();
        }
        db.flush().await.unwrap();
        clock.advance(60);
        // Compaction first: it must leave the expired rows for the purge.
        db.compact().await.unwrap();
        let first = db.purge_expired(120).await.unwrap();
        db.compact().await.unwrap();
        db.close().await.unwrap();
        let db = ttlkv::Db::open(store.clone(), clock.clone(), small())
            .await
            .unwrap();
        let second = db.purge_expired(1_000).await.unwrap();
        let third = db.purge_expired(1_000).await.unwrap();
        let mut keys: Vec<_> = first
            .expired
            .iter()
            .chain(&second.expired)
            .chain(&third.expired)
            .map(|e| e.key.clone())
            .collect();
        assert_eq!(keys.len(), 200, "one event per key");
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), 200, "no key twice");
        db.compact().await.unwrap();
        let rows = stored_rows(&db);
        assert_eq!(
            rows, 0,
            "after purge and compaction nothing of them is stored"
        );
    });
}

#[test]
fn a_store_that_never_uses_ttl_writes_no_index_and_the_purge_reads_nothing() {
    let (db, store, _) = fresh(DbOptions {
        page_size: 1024,
        ..DbOptions::default()
    });
    run(async {
        for i in 0..2_000u32 {
            db.put(&i.to_be_bytes(), &[0u8; 50]).await.unwrap();
        }
        db.compact().await.unwrap();
        let rows = stored_rows(&db);
        assert_eq!(rows, 2_000, "no expiry-index rows");
        let ttl_rows: u64 = db
            .stats()
            .levels
            .iter()
            .flat_map(|l| &l.ssts)
            .filter(|s| s.expiry_percentiles.is_some())
            .count() as u64;
        assert_eq!(ttl_rows, 0);
        store.reset_counters();
        let r = db.purge_expired(1_000).await.unwrap();
        assert_eq!(r, Default::default());
        assert_eq!(
            store.page_reads(),
            0,
            "the index range lies past every SST: no page read"
        );
    });
}

#[test]
fn the_expire_hook_rewrites_a_key_instead_of_removing_it() {
    let (db, _, clock) = fresh(DbOptions::default());
    let calls = Rc::new(Cell::new(0));
    let seen = calls.clone();
    db.set_expire_hook(Some(Rc::new(move |e: &ttlkv::ExpiredEntry| {
        seen.set(seen.get() + 1);
        (e.key == b"renew").then(|| Replacement {
            value: b"renewed".to_vec(),
            ttl: Ttl::ExpireAfter(1_000),
        })
    })));
    run(async {
        db.put_with_options(b"renew", b"v1", ttl(100))
            .await
            .unwrap();
        db.put_with_options(b"gone", b"v1", ttl(100)).await.unwrap();
        clock.advance(100);
        let r = db.purge_expired(100).await.unwrap();
        assert_eq!((r.removed, r.rewritten, calls.get()), (1, 1, 2));
        assert_eq!(r.expired.len(), 1, "a rewritten key fires no expire event");
        assert_eq!(
            db.get(b"renew").await.unwrap().as_deref(),
            Some(&b"renewed"[..])
        );
        assert_eq!(db.ttl(b"renew").await.unwrap(), 1_000);
        clock.advance(1_000);
        let r = db.purge_expired(100).await.unwrap();
        assert_eq!(r.rewritten, 1, "it is rewritten each time it expires");
    });
}

#[test]
fn a_replacement_that_is_already_due_is_reported_once_and_the_key_goes() {
    let (db, _, clock) = fresh(DbOptions::default());
    db.set_expire_hook(Some(Rc::new(|_: &ttlkv::ExpiredEntry| {
        Some(Replacement {
            value: b"zombie".to_vec(),
            ttl: Ttl::ExpireAt(0),
        })
    })));
    run(async {
        db.put_with_options(b"k", b"v", ttl(10)).await.unwrap();
        clock.advance(10);
        let r = db.purge_expired(100).await.unwrap();
        assert_eq!(r.hook_errors.len(), 1);
        assert_eq!(r.hook_errors[0].kind(), ErrorKind::InvalidArgument);
        assert_eq!(r.removed, 1);
        assert!(!db.has(b"k").await.unwrap());
        let again = db.purge_expired(100).await.unwrap();
        assert!(
            again.hook_errors.is_empty() && again.removed == 0,
            "no loop, reported once"
        );
    });
}

#[test]
fn expiry_index_entries_survive_reopen_and_are_purged_after_it() {
    let (db, store, clock) = fresh(DbOptions::default());
    run(async {
        db.put_with_options(b"wal-only", b"v", ttl(100))
            .await
            .unwrap();
        db.put_with_options(b"in-sst", b"v", ttl(100))
            .await
            .unwrap();
        db.flush().await.unwrap();
        db.put_with_options(b"wal-only-2", b"v", ttl(100))
            .await
            .unwrap();
        db.close().await.unwrap();
    });
    clock.advance(100);
    let db = reopen(&store, &clock, DbOptions::default());
    run(async {
        let r = db.purge_expired(100).await.unwrap();
        assert_eq!(r.removed, 3);
        for k in [&b"wal-only"[..], b"in-sst", b"wal-only-2"] {
            assert!(!db.has(k).await.unwrap());
        }
    });
}

#[test]
fn get_ex_reads_and_slides_or_persists_the_expiry_in_one_step() {
    use ttlkv::GetExOptions;
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        db.put_with_options(b"s", b"session", ttl(100))
            .await
            .unwrap();
        clock.advance(90);
        let v = db
            .get_ex(b"s", GetExOptions::ExpireAfter(100))
            .await
            .unwrap();
        assert_eq!(v.as_deref(), Some(&b"session"[..]));
        assert_eq!(db.ttl(b"s").await.unwrap(), 100, "slid");
        clock.advance(90);
        assert_eq!(
            db.get_ex(b"s", GetExOptions::Persist)
                .await
                .unwrap()
                .as_deref(),
            Some(&b"session"[..])
        );
        assert_eq!(db.ttl(b"s").await.unwrap(), -1);
        let v = db.get_ex(b"s", GetExOptions::ExpireAt(T0)).await.unwrap();
        assert_eq!(
            v.as_deref(),
            Some(&b"session"[..]),
            "returns the value it removes"
        );
        assert!(!db.has(b"s").await.unwrap());
        assert_eq!(
            db.get_ex(b"s", GetExOptions::ExpireAfter(5)).await.unwrap(),
            None
        );
        let e = db
            .get_ex(b"s", GetExOptions::ExpireAfter(0))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    });
}
