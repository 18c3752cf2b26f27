//! Crash test: one workload (puts with and without TTL, deletes, batches, expire, persist, clock
//! jumps, flushes, compactions, maintenance) runs on a fault-injecting store that "crashes" at
//! commit N — before the commit lands, or after it lands but before it is acknowledged — for every
//! N the workload reaches. Each time the database is reopened on what the store holds, and:
//! every acknowledged durable write is there, nothing deleted or expired comes back, and the write
//! in flight at the crash is either wholly there or wholly absent (no partial batch). All of it
//! once more with compactions merging on a thread of their own (installed whenever a later step
//! finds them done, so the commit points fall where that thread's timing puts them).

mod common;
use common::*;

use std::collections::BTreeMap;

use ttlkv::store::{FaultPlan, FaultyStore, MemoryStore};
use ttlkv::{Db, DbOptions, ExpireCondition, FakeClock, PutOptions, WriteBatch};

#[derive(Clone, Debug)]
enum Step {
    Put(u8, u8, Option<u64>),
    Delete(u8),
    Batch(Vec<(u8, Option<u8>)>),
    Expire(u8, u64),
    Persist(u8),
    /// Remove every key at once (one manifest commit).
    Clear,
    Advance(i64),
    Flush,
    Compact,
    Maintenance,
    /// Remove due keys through the expiry index (invisible to reads either way).
    Purge,
    /// Concurrent puts of distinct keys racing a flush (group commit meets flush).
    Burst(Vec<(u8, u8)>),
}

type Model = BTreeMap<Vec<u8>, (Vec<u8>, Option<i64>)>;

fn key(k: u8) -> Vec<u8> {
    format!("key-{k:02}").into_bytes()
}

fn value(v: u8) -> Vec<u8> {
    vec![v; 8 + (v as usize % 24)]
}

/// A deterministic workload (a small LCG, so every crash run replays the same steps).
fn workload() -> Vec<Step> {
    let mut s: u64 = 0x5eed;
    let mut next = move |n: u64| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 33) % n
    };
    (0..260)
        .map(|_| match next(20) {
            0..=6 => {
                let ttl = if next(2) == 0 {
                    None
                } else {
                    Some(50 + next(2_000))
                };
                Step::Put(next(30) as u8, next(256) as u8, ttl)
            }
            7..=8 => Step::Delete(next(30) as u8),
            9..=10 => Step::Batch(
                (0..1 + next(4))
                    .map(|_| {
                        let v = if next(3) == 0 {
                            None
                        } else {
                            Some(next(256) as u8)
                        };
                        (next(30) as u8, v)
                    })
                    .collect(),
            ),
            11 => Step::Expire(next(30) as u8, 1 + next(1_000)),
            12 if next(3) == 0 => Step::Clear,
            12 => Step::Persist(next(30) as u8),
            13..=14 => Step::Advance(next(400) as i64),
            15..=16 => Step::Flush,
            17 => Step::Compact,
            18 => {
                let first = next(30) as u8;
                let n = 2 + next(6) as u8;
                Step::Burst(
                    (0..n)
                        .map(|i| ((first + i) % 30, next(256) as u8))
                        .collect(),
                )
            }
            19 if next(2) == 0 => Step::Purge,
            _ => Step::Maintenance,
        })
        .collect()
}

fn live(model: &Model, k: &[u8], now: i64) -> Option<(Vec<u8>, Option<i64>)> {
    model
        .get(k)
        .filter(|(_, e)| e.is_none_or(|at| now < at))
        .cloned()
}

/// The model after `step` at time `now`, and the keys it touches.
fn apply_to_model(model: &Model, step: &Step, now: i64) -> (Model, Vec<Vec<u8>>) {
    let mut m = model.clone();
    let touched = match step {
        Step::Put(k, v, ttl) => {
            m.insert(key(*k), (value(*v), ttl.map(|t| now + t as i64)));
            vec![key(*k)]
        }
        Step::Delete(k) => {
            m.remove(&key(*k));
            vec![key(*k)]
        }
        Step::Batch(ops) => {
            for (k, v) in ops {
                match v {
                    Some(v) => m.insert(key(*k), (value(*v), None)),
                    None => m.remove(&key(*k)),
                };
            }
            ops.iter().map(|(k, _)| key(*k)).collect()
        }
        Step::Burst(puts) => {
            for (k, v) in puts {
                m.insert(key(*k), (value(*v), None));
            }
            puts.iter().map(|(k, _)| key(*k)).collect()
        }
        Step::Expire(k, ms) => {
            if let Some((v, _)) = live(&m, &key(*k), now) {
                m.insert(key(*k), (v, Some(now + *ms as i64)));
            }
            vec![key(*k)]
        }
        Step::Persist(k) => {
            if let Some((v, _)) = live(&m, &key(*k), now) {
                m.insert(key(*k), (v, None));
            }
            vec![key(*k)]
        }
        Step::Clear => {
            let touched = m.keys().cloned().collect();
            m.clear();
            touched
        }
        _ => Vec::new(),
    };
    (m, touched)
}

async fn apply_to_db(db: &Db, clock: &FakeClock, step: &Step) -> ttlkv::Result<()> {
    match step {
        Step::Put(k, v, ttl) => {
            let opts = ttl.map_or(PutOptions::default(), PutOptions::expire_after);
            db.put_with_options(&key(*k), &value(*v), opts)
                .await
                .map(|_| ())
        }
        Step::Delete(k) => db.delete(&key(*k)).await.map(|_| ()),
        Step::Batch(ops) => {
            let mut b = WriteBatch::new();
            for (k, v) in ops {
                match v {
                    Some(v) => b.put(&key(*k), &value(*v)),
                    None => b.delete(&key(*k)),
                };
            }
            db.write(b).await.map(|_| ())
        }
        Step::Expire(k, ms) => db
            .expire(&key(*k), *ms, ExpireCondition::default())
            .await
            .map(|_| ()),
        Step::Persist(k) => db.persist(&key(*k)).await.map(|_| ()),
        Step::Clear => db.clear().await.map(|_| ()),
        Step::Advance(ms) => {
            clock.advance(*ms);
            Ok(())
        }
        Step::Flush => db.flush().await,
        Step::Compact => db.compact().await,
        Step::Maintenance => db.maintenance_step().await.map(|_| ()),
        Step::Purge => db.purge_expired(7).await.map(|_| ()),
        Step::Burst(_) => unreachable!("bursts run through apply_burst"),
    }
}

/// Run a burst: every put and a flush at once. Returns each put's outcome and the flush's.
async fn apply_burst(db: &Db, puts: &[(u8, u8)]) -> (Vec<ttlkv::Result<()>>, ttlkv::Result<()>) {
    let writes = futures::future::join_all(
        puts.iter()
            .map(|(k, v)| async move { db.put(&key(*k), &value(*v)).await }),
    );
    futures::join!(writes, db.flush())
}

/// What a crash run saw: the acknowledged model, and the write in flight at the crash.
struct Crashed {
    acknowledged: Model,
    /// The model if every write in flight landed, and the keys they touched. Writes in flight
    /// touch distinct keys unless there is only one (a batch), so each key is checked on its own
    /// except that a batch must land wholly.
    in_flight: Option<(Model, Vec<Vec<u8>>)>,
    /// Whether the writes in flight were one atomic write (all keys land together) or
    /// independent concurrent writes (each key lands or not on its own).
    atomic: bool,
}

/// Run the workload with `plan`; `None` if it finished without crashing.
async fn run_until_crash(
    disk: &MemoryStore,
    clock: &FakeClock,
    plan: FaultPlan,
    options: DbOptions,
) -> Option<Crashed> {
    let faulty = FaultyStore::new(disk.clone(), plan);
    let db = match Db::open(faulty.clone(), clock.clone(), options).await {
        Ok(db) => db,
        Err(_) => {
            assert!(faulty.is_crashed(), "open failed without a crash");
            return Some(Crashed {
                acknowledged: Model::new(),
                in_flight: None,
                atomic: true,
            });
        }
    };
    let mut model = Model::new();
    for step in workload() {
        let now = db.now().unwrap();
        let (after, touched) = apply_to_model(&model, &step, now);
        if let Step::Burst(puts) = &step {
            let (results, flushed) = apply_burst(&db, puts).await;
            let mut acked = model.clone();
            let mut maybe = Vec::new();
            for ((k, v), r) in puts.iter().zip(&results) {
                match r {
                    Ok(()) => {
                        acked.insert(key(*k), (value(*v), None));
                    }
                    Err(_) => maybe.push(key(*k)),
                }
            }
            if results.iter().any(|r| r.is_err()) || flushed.is_err() {
                assert!(faulty.is_crashed(), "a burst failed without a crash");
                return Some(Crashed {
                    acknowledged: acked,
                    in_flight: Some((after, maybe)),
                    atomic: false,
                });
            }
            model = after;
            continue;
        }
        match apply_to_db(&db, clock, &step).await {
            Ok(()) => model = after,
            Err(e) => {
                assert!(faulty.is_crashed(), "{step:?} failed without a crash: {e}");
                return Some(Crashed {
                    acknowledged: model,
                    in_flight: Some((after, touched)),
                    atomic: true,
                });
            }
        }
    }
    None
}

async fn verify(
    disk: &MemoryStore,
    clock: &FakeClock,
    crashed: &Crashed,
    label: &str,
    options: DbOptions,
) {
    let db = Db::open(disk.clone(), clock.clone(), options)
        .await
        .unwrap_or_else(|e| panic!("{label}: reopen failed: {e}"));
    let now = db.now().unwrap();
    let mut got = BTreeMap::new();
    for k in 0..30u8 {
        let e = db.get_entry(&key(k)).await.unwrap();
        got.insert(key(k), e.map(|e| (e.value, e.expire_at)));
    }
    let view = |m: &Model, k: &Vec<u8>| live(m, k, now);
    let (after, touched) = match &crashed.in_flight {
        Some((after, touched)) => (Some(after), touched.clone()),
        None => (None, Vec::new()),
    };
    // Keys the in-flight write did not touch: exactly as acknowledged.
    for (k, g) in &got {
        if !touched.contains(k) {
            assert_eq!(
                g,
                &view(&crashed.acknowledged, k),
                "{label}: key {}",
                String::from_utf8_lossy(k)
            );
        }
    }
    // The in-flight write: all of it or none of it.
    if let (Some(after), false) = (after, crashed.atomic) {
        for k in &touched {
            assert!(
                got[k] == view(&crashed.acknowledged, k) || got[k] == view(after, k),
                "{label}: concurrent write to {} neither absent nor whole",
                String::from_utf8_lossy(k)
            );
        }
    } else if let Some(after) = after {
        let all_before = touched
            .iter()
            .all(|k| got[k] == view(&crashed.acknowledged, k));
        let all_after = touched.iter().all(|k| got[k] == view(after, k));
        assert!(
            all_before || all_after,
            "{label}: the write in flight landed partially: {:?}",
            touched
                .iter()
                .map(|k| (String::from_utf8_lossy(k).into_owned(), got[k].clone()))
                .collect::<Vec<_>>()
        );
    }
    // The recovered database keeps working and agrees with itself after a full compaction.
    db.put(b"after-crash", b"ok").await.unwrap();
    db.compact().await.unwrap();
    for (k, g) in &got {
        let e = db
            .get_entry(k)
            .await
            .unwrap()
            .map(|e| (e.value, e.expire_at));
        assert_eq!(
            &e,
            g,
            "{label}: compaction changed key {}",
            String::from_utf8_lossy(k)
        );
    }
}

/// The workload's options: small, and (`background`) compactions on a thread of their own.
fn options(background: bool) -> DbOptions {
    DbOptions {
        background_compaction: background,
        ..small()
    }
}

fn crash_everywhere(make_plan: fn(u64) -> FaultPlan, kind: &str, background: bool) -> u64 {
    let clears = workload()
        .iter()
        .filter(|s| matches!(s, Step::Clear))
        .count();
    assert!(
        clears >= 2,
        "the workload clears the keyspace ({clears} times)"
    );
    let mut point = 1;
    loop {
        // Every store operation yields once, so concurrent writes and flushes interleave.
        let disk = MemoryStore::new().with_latency(1);
        let clock = FakeClock::new(T0);
        let crashed = run(run_until_crash(
            &disk,
            &clock,
            make_plan(point),
            options(background),
        ));
        let Some(crashed) = crashed else {
            return point - 1;
        };
        run(verify(
            &disk,
            &clock,
            &crashed,
            &format!("crash {kind} commit {point}"),
            options(background),
        ));
        point += 1;
    }
}

/// A crash before (`after: false`) or after each commit point the workload reaches, each one
/// recovered (see `crash_everywhere`), and many of them.
fn every_crash_recovers(after: bool, background: bool) {
    let (plan, kind): (fn(u64) -> FaultPlan, _) = if after {
        (
            |n| FaultPlan {
                crash_after_commit: Some(n),
                ..FaultPlan::default()
            },
            "after",
        )
    } else {
        (
            |n| FaultPlan {
                crash_before_commit: Some(n),
                ..FaultPlan::default()
            },
            "before",
        )
    };
    let points = crash_everywhere(plan, kind, background);
    let how = if background {
        ", compactions on their own thread"
    } else {
        ""
    };
    println!("crash test{how}: crashed {kind} each of {points} commit points, all recovered");
    assert!(
        points > 100,
        "the workload should reach many commit points, reached {points}"
    );
}

#[test]
fn every_acknowledged_write_survives_a_crash_before_any_commit() {
    every_crash_recovers(false, false);
}

#[test]
fn every_acknowledged_write_survives_a_crash_after_any_commit() {
    every_crash_recovers(true, false);
}

#[test]
#[cfg(feature = "threads")]
fn every_acknowledged_write_survives_a_crash_before_any_commit_with_compactions_on_their_own_thread(
) {
    every_crash_recovers(false, true);
}

#[test]
#[cfg(feature = "threads")]
fn every_acknowledged_write_survives_a_crash_after_any_commit_with_compactions_on_their_own_thread()
{
    every_crash_recovers(true, true);
}
