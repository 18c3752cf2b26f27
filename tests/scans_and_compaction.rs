//! Scans over every source (memtable, L0, levels) with prefix, range, reverse and limit; the TTL
//! compaction filter removing expired rows and tombstones from storage; point reads touching one
//! data page.

mod common;
use common::*;

use ttlkv::store::PageKind;
use ttlkv::{DbOptions, PutOptions, ScanOptions};

fn k(i: u32) -> Vec<u8> {
    format!("user:{i:05}").into_bytes()
}

#[test]
fn scans_merge_memtable_and_every_level_in_order_and_reverse() {
    let (db, _, _) = fresh(small());
    run(async {
        for i in 0..300 {
            db.put(&k(i), format!("v{i}").as_bytes()).await.unwrap();
            if i % 50 == 49 {
                db.flush().await.unwrap();
            }
        }
        db.compact().await.unwrap();
        for i in (0..300).step_by(3) {
            db.put(&k(i), b"overwritten").await.unwrap();
        }
        for i in (1..300).step_by(7) {
            db.delete(&k(i)).await.unwrap();
        }
        db.flush().await.unwrap();
        db.put(&k(5), b"in the memtable").await.unwrap();
        let expected: Vec<Vec<u8>> = (0..300).filter(|i| i % 7 != 1 || *i == 5).map(k).collect();
        let all = db.scan(&ScanOptions::default()).await.unwrap();
        assert_eq!(
            all.iter().map(|e| e.key.clone()).collect::<Vec<_>>(),
            expected
        );
        let value_of = |i: u32| all.iter().find(|e| e.key == k(i)).map(|e| e.value.clone());
        assert_eq!(value_of(5).as_deref(), Some(&b"in the memtable"[..]));
        assert_eq!(value_of(3).as_deref(), Some(&b"overwritten"[..]));
        assert_eq!(value_of(4).as_deref(), Some(&b"v4"[..]));
        let rev = db
            .scan(&ScanOptions {
                reverse: true,
                ..Default::default()
            })
            .await
            .unwrap();
        let mut want = expected.clone();
        want.reverse();
        assert_eq!(rev.iter().map(|e| e.key.clone()).collect::<Vec<_>>(), want);
    });
}

#[test]
fn scan_bounds_prefix_and_limit_select_the_right_window() {
    let (db, _, _) = fresh(small());
    run(async {
        for i in 0..100 {
            db.put(&k(i), b"v").await.unwrap();
        }
        db.put(b"other", b"v").await.unwrap();
        db.flush().await.unwrap();
        let keys = |es: Vec<ttlkv::Entry>| es.into_iter().map(|e| e.key).collect::<Vec<_>>();
        let window = ScanOptions {
            start: Some(k(10)),
            end: Some(k(20)),
            ..Default::default()
        };
        assert_eq!(
            keys(db.scan(&window).await.unwrap()),
            (10..20).map(k).collect::<Vec<_>>()
        );
        let rev = ScanOptions {
            reverse: true,
            limit: Some(3),
            ..window.clone()
        };
        assert_eq!(
            keys(db.scan(&rev).await.unwrap()),
            vec![k(19), k(18), k(17)]
        );
        let prefix = ScanOptions {
            prefix: Some(b"user:0005".to_vec()),
            ..Default::default()
        };
        assert_eq!(
            keys(db.scan(&prefix).await.unwrap()),
            (50..60).map(k).collect::<Vec<_>>()
        );
        let none = ScanOptions {
            start: Some(k(50)),
            end: Some(k(40)),
            ..Default::default()
        };
        assert!(db.scan(&none).await.unwrap().is_empty());
        let zero = ScanOptions {
            limit: Some(0),
            ..Default::default()
        };
        assert!(db.scan(&zero).await.unwrap().is_empty());
    });
}

#[test]
fn scans_skip_expired_entries_at_the_time_of_the_scan() {
    let (db, _, clock) = fresh(small());
    run(async {
        for i in 0..40 {
            let opts = if i % 2 == 0 {
                PutOptions::expire_after(100)
            } else {
                PutOptions::default()
            };
            db.put_with_options(&k(i), b"v", opts).await.unwrap();
        }
        db.flush().await.unwrap();
        assert_eq!(db.scan(&Default::default()).await.unwrap().len(), 40);
        clock.advance(100);
        let live = db.scan(&Default::default()).await.unwrap();
        assert_eq!(live.len(), 20);
        assert!(live.iter().all(|e| e.expire_at.is_none()));
    });
}

#[test]
fn compaction_drops_purged_expired_rows_and_tombstones_at_the_bottom() {
    let (db, store, clock) = fresh(DbOptions {
        page_size: 4096,
        ..DbOptions::default()
    });
    run(async {
        for i in 0..2_000 {
            let opts = if i % 4 == 0 {
                PutOptions::default()
            } else {
                PutOptions::expire_after(1_000)
            };
            db.put_with_options(&k(i), &[b'x'; 100], opts)
                .await
                .unwrap();
        }
        for i in (0..2_000).step_by(8) {
            db.delete(&k(i)).await.unwrap();
        }
        db.flush().await.unwrap();
        let rows_before = stored_rows(&db);
        let bytes_before = store.stored_bytes();
        clock.advance(1_000);
        // Compaction leaves expired rows to the purge (so each fires its event) ...
        db.compact().await.unwrap();
        let rows_unpurged = stored_rows(&db);
        assert!(
            rows_unpurged > 1_500,
            "expired rows stay until purged: {rows_unpurged}"
        );
        // ... and drops them once the purge has handled them.
        let purged = db.purge_expired(10_000).await.unwrap();
        assert_eq!(purged.removed, 1_500);
        db.compact().await.unwrap();
        let stats = db.stats();
        let ssts: Vec<_> = stats.levels.iter().flat_map(|l| &l.ssts).collect();
        let rows_after: u64 = ssts.iter().map(|s| s.rows).sum();
        let tombstones: u64 = ssts.iter().map(|s| s.tombstones).sum();
        println!(
            "compaction: {rows_before} rows / {bytes_before} bytes before, {rows_after} rows / {} bytes after",
            store.stored_bytes()
        );
        assert_eq!(rows_after, 250, "only the permanent, undeleted keys remain");
        assert_eq!(tombstones, 0, "tombstones vanish at the bottom");
        assert!(store.stored_bytes() < bytes_before / 4);
        assert_eq!(
            store.page_count_of(PageKind::Wal),
            0,
            "the flush deleted the WAL"
        );
        assert_eq!(db.scan(&Default::default()).await.unwrap().len(), 250);
    });
}

#[test]
fn a_point_read_after_reopen_touches_one_data_page() {
    let (db, store, clock) = fresh(DbOptions {
        page_size: 4096,
        ..DbOptions::default()
    });
    run(async {
        for i in 0..5_000 {
            db.put(&k(i), &[b'v'; 100]).await.unwrap();
        }
        db.compact().await.unwrap();
        db.close().await.unwrap();
    });
    let db = reopen(
        &store,
        &clock,
        DbOptions {
            page_size: 4096,
            ..DbOptions::default()
        },
    );
    run(async {
        store.reset_counters();
        assert!(db.has(&k(2_345)).await.unwrap());
        assert_eq!(store.page_reads(), 1, "one data page, no scan of the SST");
        assert!(db.has(&k(2_346)).await.unwrap());
        assert!(
            store.page_reads() <= 2,
            "a neighbour is usually in the same (cached) page"
        );
        assert!(!db.has(b"user:99999").await.unwrap());
        assert!(
            store.page_reads() <= 2,
            "a key past the last SST reads no page"
        );
    });
}

#[test]
fn time_seen_only_by_reads_never_goes_backwards_across_a_reopen() {
    // Found by the model-based test: close() must store the clock seed.
    let (db, store, clock) = fresh(DbOptions::default());
    run(async {
        db.put(b"k", b"v").await.unwrap();
        clock.advance(5_000);
        let seen = db.now().unwrap();
        db.close().await.unwrap();
        clock.advance(-4_000);
        let db = ttlkv::Db::open(store.clone(), clock.clone(), DbOptions::default())
            .await
            .unwrap();
        assert!(db.now().unwrap() >= seen);
    });
}

#[test]
fn scans_and_a_compaction_over_more_than_64_l0_ssts_see_every_version_once() {
    // No automatic maintenance (the host's timer drives it), so each flush adds an L0 SST: the
    // merge then has more sources than its set of runs at the chosen key has bits.
    let options = DbOptions {
        l0_compaction_trigger: 1_000,
        ..DbOptions::default()
    };
    let (db, _, _) = fresh(options);
    run(async {
        let mut model = std::collections::BTreeMap::new();
        for round in 0..70u32 {
            // Every round rewrites a few keys each other round also holds, and adds one of its own.
            for i in [0, 1, 2, round % 5 + 3, 100 + round] {
                let value = format!("r{round}:k{i}").into_bytes();
                db.put(&k(i), &value).await.unwrap();
                model.insert(k(i), value);
            }
            if round % 3 == 0 {
                db.delete(&k(round % 5 + 3)).await.unwrap();
                model.remove(&k(round % 5 + 3));
            }
            db.flush().await.unwrap();
        }
        let l0 = db.stats().levels.first().map_or(0, |l| l.ssts.len());
        assert!(l0 > 64, "{l0} L0 SSTs");
        let expected: Vec<(Vec<u8>, Vec<u8>)> = model.clone().into_iter().collect();
        assert_eq!(scanned(&db, false).await, expected);
        let mut reversed = expected.clone();
        reversed.reverse();
        assert_eq!(scanned(&db, true).await, reversed);
        db.compact().await.unwrap();
        assert_eq!(scanned(&db, false).await, expected);
        for (key, value) in &expected {
            assert_eq!(db.get(key).await.unwrap().as_ref(), Some(value));
        }
    });
}

#[test]
fn a_compaction_of_ssts_with_and_without_expiring_rows_keeps_every_row_as_written() {
    // Rows are encoded with or without an expiry field depending on their SST, and a compaction
    // copies a row's bytes only into an SST of the same encoding. Here SSTs of both kinds are
    // merged, into an SST with the field and then into one without it. (A compact row without an
    // expiry reads the same either way; the writer's own test covers rows that do not.)
    let options = DbOptions {
        page_size: 512,
        ..DbOptions::default()
    };
    let value = |i: u32, round: u32| format!("v{i}.{round}").into_bytes();
    // At the end: every fourth key rewritten, the odd ones expired and purged.
    let at_the_end = |i: u32| match i % 4 {
        0 => Some(value(i, 1)),
        2 => Some(value(i, 0)),
        _ => None,
    };
    let (db, store, clock) = fresh(options.clone());
    run(async {
        for i in (0..400).step_by(2) {
            db.put(&k(i), &value(i, 0)).await.unwrap();
        }
        db.flush().await.unwrap();
        for i in (1..400).step_by(2) {
            let ttl = PutOptions::expire_after(60_000);
            db.put_with_options(&k(i), &value(i, 0), ttl).await.unwrap();
        }
        db.flush().await.unwrap();
        db.compact().await.unwrap();
        for i in 0..400 {
            assert_eq!(db.get(&k(i)).await.unwrap(), Some(value(i, 0)), "key {i}");
            let ttl = db.ttl(&k(i)).await.unwrap();
            assert_eq!(ttl, if i % 2 == 0 { -1 } else { 60_000 }, "ttl of key {i}");
        }
        // The expiring keys go: what is left has no expiry, in an SST encoded with the field.
        clock.advance(60_000);
        assert_eq!(db.purge_expired(1_000).await.unwrap().removed, 200);
        db.compact().await.unwrap();
        for i in (0..400).step_by(4) {
            db.put(&k(i), &value(i, 1)).await.unwrap();
        }
        db.flush().await.unwrap();
        db.compact().await.unwrap();
        for i in 0..400 {
            assert_eq!(db.get(&k(i)).await.unwrap(), at_the_end(i), "key {i}");
        }
        db.close().await.unwrap();
    });
    let db = reopen(&store, &clock, options);
    run(async {
        for i in 0..400 {
            assert_eq!(
                db.get(&k(i)).await.unwrap(),
                at_the_end(i),
                "key {i} after reopening"
            );
        }
    });
}

#[test]
fn a_key_deleted_while_a_snapshot_saw_it_stays_deleted_once_compaction_drops_both_versions() {
    // A key's tombstone and the older version a snapshot needed sit side by side in one SST; once
    // the snapshot is released, a compaction to the bottom must judge them together (drop both),
    // never each on its own (the older one would come back).
    let options = DbOptions {
        page_size: 256,
        ..DbOptions::default()
    };
    let (db, _, _) = fresh(options);
    run(async {
        for i in 0..300 {
            db.put(&k(i), &[b'a'; 40]).await.unwrap();
        }
        let snapshot = db.snapshot().unwrap();
        for i in (0..300).step_by(3) {
            db.delete(&k(i)).await.unwrap();
        }
        db.flush().await.unwrap();
        db.compact().await.unwrap();
        assert_eq!(snapshot.get(&k(0)).await.unwrap(), Some(vec![b'a'; 40]));
        snapshot.release();
        db.compact().await.unwrap();
        for i in 0..300 {
            let expected = (i % 3 != 0).then(|| vec![b'a'; 40]);
            assert_eq!(db.get(&k(i)).await.unwrap(), expected, "key {i}");
        }
        assert_eq!(
            stored_rows(&db),
            200,
            "the deleted keys left nothing behind"
        );
    });
}

async fn scanned(db: &ttlkv::Db, reverse: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.scan(&ScanOptions {
        reverse,
        ..Default::default()
    })
    .await
    .unwrap()
    .into_iter()
    .map(|e| (e.key, e.value))
    .collect()
}
