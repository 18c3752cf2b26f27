//! Compaction driven by expiry: an SST whose rows all expired (and were purged) disappears
//! without being rewritten; the expiry-percentile trigger compacts an SST a size-only planner
//! would leave alone, but not one that will soon leave whole; old SSTs are compacted
//! periodically; the maintenance step's next wake-up follows the earliest expiry; short TTLs
//! flush small SSTs early, and short-lived L0 SSTs do not count toward the L0 trigger.

mod common;
use common::*;

use ttlkv::{Clock, Db, DbOptions, PutOptions};

fn sst_ids(db: &Db) -> Vec<u64> {
    let mut ids: Vec<u64> = db
        .stats()
        .levels
        .iter()
        .flat_map(|l| l.ssts.iter().map(|s| s.id))
        .collect();
    ids.sort();
    ids
}

/// Options where only the triggers under test can plan a compaction.
fn quiet() -> DbOptions {
    DbOptions {
        periodic_compaction_ms: None,
        ..DbOptions::default()
    }
}

#[test]
fn an_sst_whose_rows_all_expired_is_dropped_whole_without_being_rewritten() {
    let (db, store, clock) = fresh(quiet());
    run(async {
        for i in 0..1_000u32 {
            db.put_with_options(&i.to_be_bytes(), &[7u8; 64], PutOptions::expire_after(100))
                .await
                .unwrap();
        }
        db.flush().await.unwrap();
        let expired_sst = sst_ids(&db)[0];
        db.put(b"permanent", b"v").await.unwrap();
        db.flush().await.unwrap();
        clock.advance(100);
        let purge = db.purge_expired(10_000).await.unwrap();
        assert_eq!(purge.removed, 1_000);
        db.flush().await.unwrap();
        let before = sst_ids(&db);
        let bytes_before = store.stored_bytes();
        let step = db.maintenance_step().await.unwrap();
        assert_eq!(step.compactions, 1);
        let after = sst_ids(&db);
        let expected: Vec<u64> = before
            .iter()
            .copied()
            .filter(|id| *id != expired_sst)
            .collect();
        assert_eq!(
            after, expected,
            "the expired SST is gone and no SST was written in its place"
        );
        println!(
            "whole-SST drop: {} -> {} bytes stored, no rows rewritten",
            bytes_before,
            store.stored_bytes()
        );
        assert!(store.stored_bytes() < bytes_before / 2);
        assert!(db.has(b"permanent").await.unwrap());
        for i in (0..1_000u32).step_by(97) {
            assert!(!db.has(&i.to_be_bytes()).await.unwrap());
        }
    });
}

#[test]
fn an_sst_is_not_dropped_before_its_expired_rows_were_purged() {
    let (db, _, clock) = fresh(quiet());
    run(async {
        for i in 0..100u32 {
            db.put_with_options(&i.to_be_bytes(), b"v", PutOptions::expire_after(100))
                .await
                .unwrap();
        }
        db.flush().await.unwrap();
        clock.advance(100);
        let before = sst_ids(&db);
        // A full compaction without a purge: the rows have fired no events yet, so they stay.
        db.compact().await.unwrap();
        assert_eq!(
            stored_rows(&db),
            200,
            "unpurged expired rows (and their index) are kept"
        );
        assert_ne!(sst_ids(&db), before);
    });
}

/// One L1 SST, 60 % of whose rows expire at `T0 + 100`, the rest permanent; purged.
async fn mostly_expired_sst(db: &Db, clock: &ttlkv::FakeClock) {
    for i in 0..1_000u32 {
        let opts = if i % 5 < 3 {
            PutOptions::expire_after(100)
        } else {
            PutOptions::default()
        };
        db.put_with_options(&i.to_be_bytes(), &[1u8; 32], opts)
            .await
            .unwrap();
    }
    db.compact().await.unwrap();
    clock.advance(100);
    assert_eq!(db.purge_expired(10_000).await.unwrap().removed, 600);
    db.flush().await.unwrap();
}

#[test]
fn the_expiry_percentile_trigger_compacts_an_sst_a_size_only_planner_leaves_alone() {
    let size_only = DbOptions {
        expiry_compaction_share: 1.0,
        ..quiet()
    };
    let (db, _, clock) = fresh(size_only);
    run(async {
        mostly_expired_sst(&db, &clock).await;
        let step = db.maintenance_step().await.unwrap();
        assert_eq!(
            step.compactions, 0,
            "a size-only planner sees nothing to do"
        );
    });
    let (db, _, clock) = fresh(quiet());
    run(async {
        mostly_expired_sst(&db, &clock).await;
        let l1 = db.stats().levels[1].ssts[0].clone();
        assert!(l1.expiry_percentiles.is_some());
        let step = db.maintenance_step().await.unwrap();
        assert_eq!(
            step.compactions, 1,
            "75 % of its rows are expired: compacted"
        );
        let after: u64 = db
            .stats()
            .levels
            .iter()
            .skip(1)
            .flat_map(|l| &l.ssts)
            .map(|s| s.rows)
            .sum();
        println!(
            "percentile trigger: L1 had {} rows, has {after} after",
            l1.rows
        );
        assert_eq!(
            after, 400,
            "the expired rows and their index entries are gone"
        );
        assert_eq!(db.scan(&Default::default()).await.unwrap().len(), 400);
    });
}

#[test]
fn ssts_older_than_the_periodic_interval_are_compacted() {
    let periodic = DbOptions {
        periodic_compaction_ms: Some(60_000),
        ..DbOptions::default()
    };
    let (db, _, clock) = fresh(periodic);
    run(async {
        for i in 0..100u32 {
            db.put(&i.to_be_bytes(), b"v").await.unwrap();
        }
        db.compact().await.unwrap();
        for i in 0..50u32 {
            db.delete(&i.to_be_bytes()).await.unwrap();
        }
        db.flush().await.unwrap();
        assert_eq!(
            db.maintenance_step().await.unwrap().compactions,
            0,
            "young: left alone"
        );
        clock.advance(60_000);
        let mut compactions = 0;
        for _ in 0..4 {
            compactions += db.maintenance_step().await.unwrap().compactions;
        }
        assert!(compactions >= 1);
        assert_eq!(
            stored_rows(&db),
            50,
            "the tombstones and what they shadowed are gone"
        );
    });
}

#[test]
fn the_next_wakeup_follows_the_earliest_expiry_and_a_write_can_bring_it_earlier() {
    let (db, _, clock) = fresh(quiet());
    run(async {
        // Right after open the engine does not know its next expiry: it asks to run now.
        assert_eq!(db.next_wakeup_ms(), Some(T0));
        db.maintenance_step().await.unwrap();
        assert_eq!(db.next_wakeup_ms(), None, "an empty database sleeps");
        db.put_with_options(b"late", b"v", PutOptions::expire_after(30_000))
            .await
            .unwrap();
        db.flush().await.unwrap();
        assert_eq!(db.next_wakeup_ms(), Some(T0 + 30_000));
        db.put_with_options(b"early", b"v", PutOptions::expire_after(500))
            .await
            .unwrap();
        assert_eq!(
            db.next_wakeup_ms(),
            Some(T0 + 500),
            "an earlier expiry wakes it earlier"
        );
        clock.advance(500);
        let step = db.maintenance_step().await.unwrap();
        assert_eq!(step.purge.expired.len(), 1);
        assert_eq!(step.purge.expired[0].key, b"early");
        assert_eq!(
            step.next_wakeup_ms,
            Some(T0 + 30_000).min(Some(T0 + 500 + 60_000))
        );
    });
}

#[test]
fn each_maintenance_step_purges_a_bounded_slice() {
    let opts = DbOptions {
        purge_slice_keys: 100,
        ..quiet()
    };
    let (db, _, clock) = fresh(opts);
    run(async {
        for i in 0..350u32 {
            db.put_with_options(&i.to_be_bytes(), b"v", PutOptions::expire_after(10))
                .await
                .unwrap();
        }
        clock.advance(10);
        let mut slices = Vec::new();
        loop {
            let step = db.maintenance_step().await.unwrap();
            slices.push(step.purge.removed);
            if step.next_wakeup_ms.is_none_or(|t| t > db.now().unwrap()) {
                break;
            }
        }
        assert_eq!(slices.iter().sum::<usize>(), 350);
        assert!(slices.iter().all(|n| *n <= 100), "{slices:?}");
    });
}

#[test]
fn no_key_loses_its_expire_event_to_a_whole_sst_drop_while_the_purge_is_halfway() {
    // Every key expires at the same instant and the purge goes 10 keys a step: the SST must not
    // be dropped until the last of them has been reported.
    let opts = DbOptions {
        purge_slice_keys: 10,
        ..quiet()
    };
    let (db, _, clock) = fresh(opts);
    run(async {
        for i in 0..200u32 {
            db.put_with_options(&i.to_be_bytes(), b"v", PutOptions::expire_after(100))
                .await
                .unwrap();
        }
        db.flush().await.unwrap();
        clock.advance(100);
        let mut events = 0;
        for _ in 0..100 {
            let step = db.maintenance_step().await.unwrap();
            events += step.purge.expired.len();
            if step.is_idle() {
                break;
            }
        }
        assert_eq!(
            events, 200,
            "one event per expired key, none lost to a dropped SST"
        );
    });
}

#[test]
fn the_purge_writes_no_tombstones_so_expired_ssts_leave_by_whole_drops_alone() {
    let (db, store, clock) = fresh(quiet());
    run(async {
        for round in 0..3u32 {
            for i in 0..500u32 {
                let key = (round * 1_000 + i).to_be_bytes();
                db.put_with_options(&key, &[1u8; 64], PutOptions::expire_after(100))
                    .await
                    .unwrap();
            }
            db.flush().await.unwrap();
            clock.advance(40);
        }
        clock.advance(100);
        let wal_commits = db.stats().wal_commits;
        let purge = db.purge_expired(10_000).await.unwrap();
        assert_eq!(purge.removed, 1_500);
        let stats = db.stats();
        assert_eq!(stats.memtable_bytes, 0, "the purge wrote no rows");
        assert_eq!(stats.wal_commits, wal_commits, "nor any WAL page");
        let mut compactions = 0;
        for _ in 0..20 {
            let step = db.maintenance_step().await.unwrap();
            compactions += step.compactions;
            if step.is_idle() {
                break;
            }
        }
        assert!(sst_ids(&db).is_empty(), "every SST was dropped");
        assert_eq!(compactions, 3, "one whole drop per SST, nothing rewritten");
        assert_eq!(store.page_count(), 0, "only the manifest is left");
    });
}

#[test]
fn an_expired_sst_over_a_live_older_version_of_its_key_is_not_dropped_whole() {
    // Dropping the newer SST whole would bring the older, permanent value back.
    let (db, _, clock) = fresh(quiet());
    run(async {
        db.put(b"k", b"permanent").await.unwrap();
        db.flush().await.unwrap();
        db.put_with_options(b"k", b"short-lived", PutOptions::expire_after(100))
            .await
            .unwrap();
        db.flush().await.unwrap();
        clock.advance(100);
        assert_eq!(db.purge_expired(100).await.unwrap().removed, 1);
        for _ in 0..20 {
            if db.maintenance_step().await.unwrap().is_idle() {
                break;
            }
        }
        assert_eq!(db.get(b"k").await.unwrap(), None);
        db.compact().await.unwrap();
        assert_eq!(db.get(b"k").await.unwrap(), None);
    });
}

#[test]
fn a_whole_drop_in_l0_leaves_the_other_l0_ssts_newest_first() {
    // L0 is searched newest first. Dropping the middle SST must not reorder the others (by
    // first key, "a" < "b"), or a read of "b" would find the older value first.
    let (db, _, clock) = fresh(quiet());
    run(async {
        db.put(b"a", b"a").await.unwrap();
        db.put(b"b", b"old").await.unwrap();
        db.flush().await.unwrap();
        db.put_with_options(b"x", b"short-lived", PutOptions::expire_after(100))
            .await
            .unwrap();
        db.flush().await.unwrap();
        db.put(b"b", b"new").await.unwrap();
        db.flush().await.unwrap();
        clock.advance(100);
        assert_eq!(db.purge_expired(100).await.unwrap().removed, 1);
        let step = db.maintenance_step().await.unwrap();
        assert_eq!(step.compactions, 1, "the expired SST is dropped whole");
        assert_eq!(db.stats().levels[0].ssts.len(), 2);
        assert_eq!(db.get(b"b").await.unwrap().as_deref(), Some(&b"new"[..]));
    });
}

/// One L0 SST: 666 keys expire at `T0 + 100`, 334 at `T0 + 100 + rest_after`; at `T0 + 105` the
/// first 666 are purged (three of the five expiry percentiles have passed: 60 % expired).
async fn half_expired_l0_sst(db: &Db, clock: &ttlkv::FakeClock, rest_after: u64) {
    for i in 0..1_000u32 {
        let ttl = if i % 3 != 0 { 100 } else { 100 + rest_after };
        db.put_with_options(&i.to_be_bytes(), &[3u8; 32], PutOptions::expire_after(ttl))
            .await
            .unwrap();
    }
    db.flush().await.unwrap();
    clock.advance(105);
    assert_eq!(db.purge_expired(10_000).await.unwrap().removed, 666);
}

#[test]
fn an_sst_whose_rest_expires_sooner_than_its_first_half_took_waits_for_its_whole_drop() {
    let (db, store, clock) = fresh(quiet());
    run(async {
        half_expired_l0_sst(&db, &clock, 10).await;
        let written = store.stored_bytes();
        let step = db.maintenance_step().await.unwrap();
        assert_eq!(
            step.compactions, 0,
            "60 % expired, the rest in 5 ms: left alone"
        );
        assert_eq!(store.stored_bytes(), written);
        clock.advance(10);
        assert_eq!(db.purge_expired(10_000).await.unwrap().removed, 334);
        let step = db.maintenance_step().await.unwrap();
        assert_eq!(step.compactions, 1);
        assert!(sst_ids(&db).is_empty(), "dropped whole, nothing rewritten");
    });
}

#[test]
fn an_sst_whose_rest_lives_on_is_compacted_once_most_of_it_expired() {
    let (db, _, clock) = fresh(quiet());
    run(async {
        half_expired_l0_sst(&db, &clock, 10_000).await;
        let step = db.maintenance_step().await.unwrap();
        assert_eq!(
            step.compactions, 1,
            "the rest lives 10 s more: rewritten now"
        );
        let l1_rows: u64 = db.stats().levels[1].ssts.iter().map(|s| s.rows).sum();
        assert_eq!(l1_rows, 668, "334 live keys and their index entries");
    });
}

/// Puts `count` keys from `first` with 100-byte values expiring after `ttl_ms` (`None`: never).
async fn put_keys(db: &Db, first: u32, count: u32, ttl_ms: Option<u64>) {
    for i in first..first + count {
        let opts = ttl_ms.map_or_else(PutOptions::default, PutOptions::expire_after);
        db.put_with_options(&i.to_be_bytes(), &[5u8; 100], opts)
            .await
            .unwrap();
    }
}

#[test]
fn a_memtable_of_short_ttl_rows_is_flushed_an_eighth_of_the_way_to_its_first_expiry() {
    let options = DbOptions {
        memtable_flush_bytes: 64 * 1024,
        memtable_stall_bytes: 64 * 1024,
        ..quiet()
    };
    let (db, _, clock) = fresh(options.clone());
    run(async {
        let t0 = clock.now_ms();
        // About 12 KiB with the index entries: over 1/8 of memtable_flush_bytes.
        put_keys(&db, 0, 100, Some(8_000)).await;
        assert!(!db.maintenance_step().await.unwrap().flushed);
        assert_eq!(db.next_wakeup_ms(), Some(t0 + 1_000));
        clock.advance(999);
        assert!(!db.maintenance_step().await.unwrap().flushed);
        clock.advance(1);
        assert!(db.maintenance_step().await.unwrap().flushed);
    });
    let (db, _, clock) = fresh(options);
    run(async {
        let t0 = clock.now_ms();
        put_keys(&db, 0, 10, Some(8_000)).await;
        assert!(!db.maintenance_step().await.unwrap().flushed);
        assert_eq!(
            db.next_wakeup_ms(),
            Some(t0 + 8_000),
            "under 1/8 of memtable_flush_bytes: nothing is flushed before the purge is due"
        );
        clock.advance(1_000);
        assert!(!db.maintenance_step().await.unwrap().flushed);
    });
}

#[test]
fn l0_ssts_that_all_expire_within_a_minute_do_not_count_toward_the_l0_trigger() {
    let (db, _, _) = fresh(quiet());
    run(async {
        for sst in 0..6 {
            put_keys(&db, sst * 10, 10, Some(50_000)).await;
            db.flush().await.unwrap();
        }
        assert_eq!(db.maintenance_step().await.unwrap().compactions, 0);
        assert_eq!(
            db.stats().levels[0].ssts.len(),
            6,
            "six short-lived L0 SSTs stay"
        );
        for sst in 6..9 {
            put_keys(&db, sst * 10, 10, Some(61_000)).await;
            db.flush().await.unwrap();
        }
        assert_eq!(db.maintenance_step().await.unwrap().compactions, 0);
        put_keys(&db, 90, 10, None).await;
        db.flush().await.unwrap();
        assert_eq!(
            db.maintenance_step().await.unwrap().compactions,
            1,
            "four L0 SSTs that last: merged"
        );
        assert!(db.stats().levels[0].ssts.is_empty());
    });
    let (db, _, _) = fresh(quiet());
    run(async {
        for sst in 0..12 {
            put_keys(&db, sst * 10, 10, Some(50_000)).await;
            db.flush().await.unwrap();
        }
        assert_eq!(
            db.maintenance_step().await.unwrap().compactions,
            1,
            "three times the trigger in all: merged however short-lived"
        );
    });
}
