//! A point read through an SST's point index (where each of its keys lies, built in memory once
//! lookups show the SST is read often, on a store that shares its pages) answers exactly as the
//! search of the key filter, the page boundaries and the page does: every version a snapshot
//! sees, where a key's versions run over a page boundary, for tombstones and expired rows, and
//! for keys the SST does not hold (before, between and after its keys). A store that hands out
//! copies only builds none, and reads the same.
//!
//! The row cache is off, so every read reaches the SSTs.

mod common;

use common::{run, T0};
use ttlkv::store::MemoryStore;
use ttlkv::{Db, DbOptions, FakeClock, PutOptions, Snapshot};

fn options() -> DbOptions {
    DbOptions {
        // A few rows a page: a key's three versions often run over a page boundary.
        page_size: 256,
        row_cache_bytes: 0,
        ..DbOptions::default()
    }
}

const KEYS: u32 = 400;

fn key(i: u32) -> Vec<u8> {
    format!("key-{:05}", i * 2).into_bytes()
}

/// A key the SST does not hold, between `key(i)` and `key(i + 1)`.
fn absent(i: u32) -> Vec<u8> {
    format!("key-{:05}", i * 2 + 1).into_bytes()
}

/// What version `round` (0, 1, 2) of key `i` is: a value, a tombstone (`None`), or a value that
/// expires at `T0 + 1_000` (`Some` with `true`).
fn version(i: u32, round: u32) -> Option<(Vec<u8>, bool)> {
    match (i + round) % 5 {
        0 => None,
        1 => Some((format!("{i}-{round}-expiring").into_bytes(), true)),
        _ => Some((format!("{i}-{round}").into_bytes(), false)),
    }
}

/// Three rounds of writes of every key, a snapshot after each of the first two, then a flush
/// and a compaction that keeps every version a snapshot sees: one level of SSTs whose keys have
/// up to three versions each.
fn written(store: &MemoryStore, clock: &FakeClock) -> (Db, Vec<Snapshot>) {
    let db = run(Db::open(store.clone(), clock.clone(), options())).unwrap();
    let mut snapshots = Vec::new();
    run(async {
        for round in 0..3 {
            for i in 0..KEYS {
                match version(i, round) {
                    None => {
                        db.delete(&key(i)).await.unwrap();
                    }
                    Some((value, expiring)) => {
                        let ttl = if expiring {
                            PutOptions::expire_after(1_000)
                        } else {
                            PutOptions::default()
                        };
                        db.put_with_options(&key(i), &value, ttl).await.unwrap();
                    }
                }
            }
            if round < 2 {
                snapshots.push(db.snapshot().unwrap());
            }
        }
        db.flush().await.unwrap();
        db.compact().await.unwrap();
    });
    (db, snapshots)
}

/// What a read of key `i` at `round`'s read point answers at time `now`.
fn expected(i: u32, round: u32, now: i64) -> Option<Vec<u8>> {
    version(i, round)
        .filter(|(_, expiring)| !expiring || now < T0 + 1_000)
        .map(|(value, _)| value)
}

/// Read every key and every absent key at each read point (the two snapshots, then the newest
/// at time `now`) `passes` times, checking each answer.
fn read_all(db: &Db, snapshots: &[Snapshot], now: i64, passes: u32) {
    run(async {
        for _ in 0..passes {
            for i in 0..KEYS {
                for (round, snapshot) in snapshots.iter().enumerate() {
                    // A snapshot reads as of its time (T0), expiry included.
                    let got = snapshot.get(&key(i)).await.unwrap();
                    assert_eq!(
                        got,
                        expected(i, round as u32, T0),
                        "key {i}, snapshot {round}"
                    );
                }
                assert_eq!(
                    db.get(&key(i)).await.unwrap(),
                    expected(i, 2, now),
                    "key {i}"
                );
                assert_eq!(db.get(&absent(i)).await.unwrap(), None, "absent {i}");
            }
            for outside in [&b"a"[..], b"key-", b"key-99999", b"z"] {
                assert_eq!(db.get(outside).await.unwrap(), None);
            }
        }
    });
}

#[test]
fn every_read_through_the_point_index_answers_as_the_search_does() {
    let store = MemoryStore::new();
    let clock = FakeClock::new(T0);
    let (db, snapshots) = written(&store, &clock);
    let stats = db.stats();
    assert!(stats.levels.iter().skip(1).any(|l| !l.ssts.is_empty()));
    assert_eq!(stats.point_index_bytes, 0, "no SST was read yet");
    // The first pass reads each SST often enough to build its index part-way through; the
    // second reads through the indexes only.
    read_all(&db, &snapshots, T0, 2);
    if cfg!(feature = "point-index") {
        let stats = db.stats();
        let rows: u64 = stats
            .levels
            .iter()
            .flat_map(|l| &l.ssts)
            .map(|s| s.rows)
            .sum();
        assert!(stats.point_index_bytes > 0, "the SSTs read were indexed");
        // At most 2.5 slots of 8 bytes a row (each distinct key has one).
        assert!(stats.point_index_bytes as u64 <= rows * 20, "{stats:?}");
    } else {
        assert_eq!(db.stats().point_index_bytes, 0);
    }
    // Past the expiry, the indexed rows are expired as the searched ones are.
    clock.set(T0 + 1_000);
    read_all(&db, &snapshots, T0 + 1_000, 1);
}

#[test]
fn a_store_that_hands_out_copies_only_builds_no_point_index_and_reads_the_same() {
    let store = MemoryStore::new();
    store.set_copies_only(true);
    let clock = FakeClock::new(T0);
    let (db, snapshots) = written(&store, &clock);
    read_all(&db, &snapshots, T0, 2);
    assert_eq!(db.stats().point_index_bytes, 0);
}

#[test]
fn an_index_built_before_a_reopen_is_not_needed_after_it() {
    let store = MemoryStore::new();
    let clock = FakeClock::new(T0);
    let (db, snapshots) = written(&store, &clock);
    read_all(&db, &snapshots, T0, 1);
    drop(snapshots);
    run(db.close()).unwrap();
    let db = run(Db::open(store, clock, options())).unwrap();
    assert_eq!(db.stats().point_index_bytes, 0, "an index is never stored");
    run(async {
        for i in 0..KEYS {
            assert_eq!(
                db.get(&key(i)).await.unwrap(),
                expected(i, 2, T0),
                "key {i}"
            );
        }
    });
}

#[test]
fn an_sst_gets_its_point_index_once_lookups_reach_a_sixteenth_of_its_rows() {
    // One SST of 4,096 rows (no TTLs: no expiry-index rows), each key read once: no row cache,
    // so every get reaches the SST, counted once whether it is answered at once or waits.
    let db = run(Db::open(
        MemoryStore::new(),
        FakeClock::new(T0),
        DbOptions {
            row_cache_bytes: 0,
            ..DbOptions::default()
        },
    ))
    .unwrap();
    let rows = 4_096;
    run(async {
        for i in 0..rows {
            db.put(&key(i), b"value").await.unwrap();
        }
        db.flush().await.unwrap();
    });
    let ssts: Vec<_> = db
        .stats()
        .levels
        .iter()
        .flat_map(|l| l.ssts.clone())
        .collect();
    assert_eq!(ssts.len(), 1);
    assert_eq!(ssts[0].rows, u64::from(rows));
    let due = rows / 16;
    run(async {
        for i in 0..due - 1 {
            assert_eq!(
                db.get(&key(i)).await.unwrap().as_deref(),
                Some(&b"value"[..])
            );
        }
    });
    assert_eq!(db.stats().point_index_bytes, 0, "not before {due} lookups");
    assert_eq!(
        run(db.get(&key(due))).unwrap().as_deref(),
        Some(&b"value"[..])
    );
    if cfg!(feature = "point-index") {
        assert!(db.stats().point_index_bytes > 0, "built at lookup {due}");
    } else {
        assert_eq!(db.stats().point_index_bytes, 0);
    }
}
