//! Long engine work runs in slices: a flush building its SST and a compaction merging give the
//! host a turn (`PageStore::yield_now`) after every `work_slice_bytes` of output, and whatever
//! runs during those turns (reads, writes, other commits) sees and keeps every write.
mod common;
use common::*;

use std::collections::BTreeMap;

use ttlkv::store::MemoryStore;
use ttlkv::{Db, DbOptions, FakeClock};

const SLICE: usize = 16 * 1024;
const KEYS: usize = 4096;
const VALUE: usize = 200;

fn options() -> DbOptions {
    DbOptions {
        work_slice_bytes: SLICE,
        memtable_flush_bytes: 64 * 1024 * 1024,
        memtable_stall_bytes: 64 * 1024 * 1024,
        l0_compaction_trigger: 100,
        ..DbOptions::default()
    }
}

fn key(i: usize) -> Vec<u8> {
    format!("key-{i:06}").into_bytes()
}

fn value(i: usize, round: u8) -> Vec<u8> {
    let mut v = vec![round; VALUE];
    v[..8].copy_from_slice(&(i as u64).to_le_bytes());
    v
}

async fn fill(db: &Db, round: u8) {
    for start in (0..KEYS).step_by(256) {
        let mut batch = ttlkv::WriteBatch::new();
        for i in start..start + 256 {
            batch.put(&key(i), &value(i, round));
        }
        db.write(batch).await.unwrap();
    }
}

/// About 4096 × 220 B = 900 KB of rows: at 16 KiB a slice, well over 40 turns.
#[test]
fn a_big_flush_gives_the_host_a_turn_every_slice() {
    let (db, store, _clock) = fresh(options());
    run(async {
        fill(&db, 1).await;
        store.reset_counters();
        db.flush().await.unwrap();
        let bytes: u64 = db.stats().levels[0].ssts.iter().map(|s| s.bytes).sum();
        let slices = bytes / SLICE as u64;
        assert!(
            store.yields() + 1 >= slices && store.yields() <= slices + 1,
            "{} turns for {bytes} bytes in slices of {SLICE}",
            store.yields()
        );
        for i in (0..KEYS).step_by(97) {
            assert_eq!(db.get(&key(i)).await.unwrap(), Some(value(i, 1)));
        }
    });
}

#[test]
fn a_compaction_gives_the_host_a_turn_every_slice() {
    let (db, store, _clock) = fresh(options());
    run(async {
        fill(&db, 1).await;
        db.flush().await.unwrap();
        fill(&db, 2).await;
        db.flush().await.unwrap();
        store.reset_counters();
        db.compact().await.unwrap();
        let bytes: u64 = db
            .stats()
            .levels
            .iter()
            .flat_map(|l| &l.ssts)
            .map(|s| s.bytes)
            .sum();
        assert!(
            store.yields() + 1 >= bytes / SLICE as u64,
            "{} turns for a compaction writing {bytes} bytes",
            store.yields()
        );
        for i in (0..KEYS).step_by(89) {
            assert_eq!(db.get(&key(i)).await.unwrap(), Some(value(i, 2)));
        }
    });
}

/// Every turn takes a poll on a store with latency, so the writes and reads joined with the
/// flush and the compaction run in their turns (and in their commits' waits).
#[test]
fn writes_and_reads_during_the_turns_see_and_keep_every_write() {
    let store = MemoryStore::new().with_latency(1);
    let clock = FakeClock::new(T0);
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    run(async {
        let db = Db::open(store.clone(), clock.clone(), options())
            .await
            .unwrap();
        fill(&db, 1).await;
        for i in 0..KEYS {
            model.insert(key(i), value(i, 1));
        }
        let writer = |round: u8, step: usize| {
            let db = db.clone();
            async move {
                let mut written = Vec::new();
                for i in (0..KEYS).step_by(step) {
                    db.put(&key(i), &value(i, round)).await.unwrap();
                    assert_eq!(db.get(&key(i)).await.unwrap(), Some(value(i, round)));
                    written.push(i);
                }
                written
            }
        };
        let ((), during_flush) = futures::join!(async { db.flush().await.unwrap() }, writer(3, 7));
        assert!(
            store.yields() > 10,
            "the flush took {} turns",
            store.yields()
        );
        for i in during_flush {
            model.insert(key(i), value(i, 3));
        }
        fill(&db, 2).await;
        for i in 0..KEYS {
            model.insert(key(i), value(i, 2));
        }
        db.flush().await.unwrap();
        store.reset_counters();
        let ((), during_compaction) =
            futures::join!(async { db.compact().await.unwrap() }, writer(4, 5));
        assert!(
            store.yields() > 10,
            "the compaction took {} turns",
            store.yields()
        );
        for i in during_compaction {
            model.insert(key(i), value(i, 4));
        }
        for (k, v) in &model {
            assert_eq!(db.get(k).await.unwrap().as_ref(), Some(v), "{k:?}");
        }
        db.close().await.unwrap();
        let db = Db::open(store.clone(), clock.clone(), options())
            .await
            .unwrap();
        for (k, v) in &model {
            assert_eq!(
                db.get(k).await.unwrap().as_ref(),
                Some(v),
                "{k:?} after reopening"
            );
        }
    });
}
