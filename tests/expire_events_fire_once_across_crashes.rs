//! Crash test for expire events: keys with TTLs (many sharing one expiry time, so purge slices
//! end inside a millisecond) expire while flushes, compactions and limited purges run on a
//! fault-injecting store that crashes at commit N, before or after the commit lands, for every N
//! the workload reaches. After each crash the database is reopened on what the store holds and
//! purged to the end. Across the run before the crash and the one after it, no expired key is
//! ever reported twice; with a crash before a commit lands, every key that expired is reported
//! exactly once (a crash after a commit lands may lose that purge's unreported events, never
//! repeat them).

mod common;
use common::*;

use std::collections::BTreeMap;

use ttlkv::store::{FaultPlan, FaultyStore, MemoryStore};
use ttlkv::{Db, FakeClock, PutOptions};

/// The purge slice limit: smaller than the groups of keys that share an expiry time.
const SLICE: usize = 5;

#[derive(Clone, Copy, Debug)]
enum Step {
    /// Put key `k` expiring `ttl` ms from now.
    Put(u8, u64),
    Advance(i64),
    Purge,
    Flush,
    Compact,
    Maintenance,
}

fn key(k: u8) -> Vec<u8> {
    format!("key-{k:02}").into_bytes()
}

fn workload() -> Vec<Step> {
    let mut steps = Vec::new();
    // Three groups that each share one expiry time, bigger than a slice; some keys put twice.
    for k in 0..12 {
        steps.push(Step::Put(k, 100));
    }
    steps.push(Step::Flush);
    for k in 12..20 {
        steps.push(Step::Put(k, 90));
    }
    steps.push(Step::Put(3, 300));
    steps.push(Step::Advance(10));
    for k in 20..30 {
        steps.push(Step::Put(k, 150));
    }
    steps.push(Step::Flush);
    steps.push(Step::Advance(95));
    steps.extend([Step::Purge, Step::Purge, Step::Flush, Step::Purge]);
    steps.push(Step::Advance(60));
    steps.extend([Step::Compact, Step::Purge, Step::Maintenance, Step::Purge]);
    steps.push(Step::Advance(500));
    steps.extend([Step::Maintenance, Step::Purge, Step::Purge, Step::Compact]);
    steps
}

/// `(key, expire_at)` of each event, in the order reported.
type Events = Vec<(Vec<u8>, i64)>;

async fn apply(db: &Db, clock: &FakeClock, step: Step, events: &mut Events) -> ttlkv::Result<()> {
    match step {
        Step::Put(k, ttl) => db
            .put_with_options(&key(k), b"v", PutOptions::expire_after(ttl))
            .await
            .map(|_| ()),
        Step::Advance(ms) => {
            clock.advance(ms);
            Ok(())
        }
        Step::Purge => {
            let report = db.purge_expired(SLICE).await?;
            events.extend(report.expired.into_iter().map(|e| (e.key, e.expire_at)));
            Ok(())
        }
        Step::Flush => db.flush().await,
        Step::Compact => db.compact().await,
        Step::Maintenance => {
            let step = db.maintenance_step().await?;
            events.extend(step.purge.expired.into_iter().map(|e| (e.key, e.expire_at)));
            Ok(())
        }
    }
}

/// What the run before a crash saw.
struct BeforeCrash {
    events: Events,
    /// Keys whose put was acknowledged, with the expiry of the last acknowledged put.
    acknowledged: BTreeMap<Vec<u8>, i64>,
    /// The put in flight at the crash, if a put crashed.
    in_flight: Option<(Vec<u8>, i64)>,
}

async fn run_until_crash(
    disk: &MemoryStore,
    clock: &FakeClock,
    plan: FaultPlan,
) -> Option<BeforeCrash> {
    let faulty = FaultyStore::new(disk.clone(), plan);
    let mut seen = BeforeCrash {
        events: Vec::new(),
        acknowledged: BTreeMap::new(),
        in_flight: None,
    };
    let Ok(db) = Db::open(faulty.clone(), clock.clone(), small()).await else {
        assert!(faulty.is_crashed(), "open failed without a crash");
        return Some(seen);
    };
    for step in workload() {
        let put = match step {
            Step::Put(k, ttl) => Some((key(k), db.now().unwrap() + ttl as i64)),
            _ => None,
        };
        match apply(&db, clock, step, &mut seen.events).await {
            Ok(()) => {
                if let Some((k, at)) = put {
                    seen.acknowledged.insert(k, at);
                }
            }
            Err(e) => {
                assert!(faulty.is_crashed(), "{step:?} failed without a crash: {e}");
                seen.in_flight = put;
                return Some(seen);
            }
        }
    }
    None
}

async fn purge_after_reopen(disk: &MemoryStore, clock: &FakeClock, events: &mut Events) {
    let db = Db::open(disk.clone(), clock.clone(), small())
        .await
        .expect("reopen");
    clock.advance(1_000);
    // 30 keys in slices of 5: far fewer rounds than this, unless a slice repeats itself.
    for round in 0.. {
        assert!(round < 100, "the purge keeps finding entries due");
        let report = db.purge_expired(SLICE).await.expect("purge after reopen");
        events.extend(report.expired.into_iter().map(|e| (e.key, e.expire_at)));
        if !report.more_due {
            break;
        }
    }
    db.close().await.expect("close");
}

fn crash_everywhere(make_plan: fn(u64) -> FaultPlan, lands: bool) -> u64 {
    let mut point = 1;
    loop {
        let disk = MemoryStore::new().with_latency(1);
        let clock = FakeClock::new(T0);
        let Some(before) = run(run_until_crash(&disk, &clock, make_plan(point))) else {
            return point - 1;
        };
        let label = format!(
            "crash {} commit {point}",
            if lands { "after" } else { "before" }
        );
        let mut events = before.events.clone();
        run(purge_after_reopen(&disk, &clock, &mut events));
        let mut reported: BTreeMap<Vec<u8>, Vec<i64>> = BTreeMap::new();
        for (k, at) in &events {
            reported.entry(k.clone()).or_default().push(*at);
        }
        for (k, ats) in &reported {
            assert_eq!(
                ats.len(),
                1,
                "{label}: {} reported more than once: {ats:?}",
                String::from_utf8_lossy(k)
            );
        }
        for (k, at) in &before.acknowledged {
            let got = reported.get(k).map(Vec::as_slice);
            let in_flight = before.in_flight.as_ref().is_some_and(|(f, _)| f == k);
            if in_flight {
                // A rewrite of this key was in flight: the old or the new expiry, once.
                continue;
            }
            if lands {
                assert!(
                    got.is_none() || got == Some(&[*at][..]),
                    "{label}: {} reported as {got:?}, its expiry was {at}",
                    String::from_utf8_lossy(k)
                );
            } else {
                assert_eq!(
                    got,
                    Some(&[*at][..]),
                    "{label}: {} expired at {at} but was reported as {got:?}",
                    String::from_utf8_lossy(k)
                );
            }
        }
        point += 1;
    }
}

#[test]
fn no_expire_event_fires_twice_or_is_lost_when_a_crash_hits_before_a_commit() {
    let points = crash_everywhere(
        |n| FaultPlan {
            crash_before_commit: Some(n),
            ..FaultPlan::default()
        },
        false,
    );
    println!("expire events: crashed before each of {points} commit points, none repeated or lost");
    assert!(
        points > 40,
        "the workload should reach many commit points, reached {points}"
    );
}

#[test]
fn no_expire_event_fires_twice_when_a_crash_hits_after_a_commit() {
    let points = crash_everywhere(
        |n| FaultPlan {
            crash_after_commit: Some(n),
            ..FaultPlan::default()
        },
        true,
    );
    println!("expire events: crashed after each of {points} commit points, none repeated");
    assert!(
        points > 40,
        "the workload should reach many commit points, reached {points}"
    );
}
