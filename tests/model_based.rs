//! Model-based test: random sequences of puts (every TTL kind and condition), deletes, expire /
//! expire_at (NX/XX/GT/LT), persist, batches, clock jumps (forwards, and the source clock going
//! backwards), flush, compact, maintenance and reopen, run against the engine and against a
//! `BTreeMap` + expiry model. Every read (get, ttl, has, scans forwards and backwards) must agree.

mod common;
use common::*;

use std::collections::BTreeMap;

use proptest::prelude::*;
use ttlkv::store::MemoryStore;
use ttlkv::{
    Db, DbOptions, Durability, ExpireCondition, FakeClock, PutCondition, PutOptions, ScanOptions,
    Ttl, WriteBatch,
};

#[derive(Clone, Debug)]
enum TtlChoice {
    Default,
    NoExpiry,
    After(u64),
    /// Relative to now; may be in the past.
    At(i64),
    Keep,
}

#[derive(Clone, Debug)]
enum Op {
    Put(u8, u8, TtlChoice, u8),
    Delete(u8),
    Expire(u8, u64, u8),
    ExpireAt(u8, i64, u8),
    Persist(u8),
    Batch(Vec<(bool, u8, u8, TtlChoice, u8)>),
    Advance(i64),
    ClockBack(i64),
    Get(u8),
    Scan(Option<u8>, Option<u8>, Option<u8>, bool, Option<usize>),
    Flush,
    Compact,
    Maintenance,
    Reopen,
}

fn key(k: u8) -> Vec<u8> {
    // Two-level key space so prefix scans select something: "a0".."c7".
    let group = b"abc"[(k as usize / 8) % 3];
    vec![group, b'0' + (k % 8)]
}

fn ttl_choice() -> impl Strategy<Value = TtlChoice> {
    prop_oneof![
        2 => Just(TtlChoice::Default),
        2 => Just(TtlChoice::NoExpiry),
        4 => (1u64..3_000).prop_map(TtlChoice::After),
        1 => (-500i64..3_000).prop_map(TtlChoice::At),
        1 => Just(TtlChoice::Keep),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0u8..24;
    prop_oneof![
        10 => (k.clone(), any::<u8>(), ttl_choice(), 0u8..6).prop_map(|(k, v, t, c)| Op::Put(k, v, t, c)),
        3 => k.clone().prop_map(Op::Delete),
        2 => (k.clone(), 1u64..3_000, 0u8..12).prop_map(|(k, ms, c)| Op::Expire(k, ms, c)),
        1 => (k.clone(), -500i64..3_000, 0u8..12).prop_map(|(k, at, c)| Op::ExpireAt(k, at, c)),
        1 => k.clone().prop_map(Op::Persist),
        2 => prop::collection::vec((any::<bool>(), k.clone(), any::<u8>(), ttl_choice(), 0u8..8), 1..6).prop_map(Op::Batch),
        4 => prop_oneof![0i64..200, 0i64..3_000, Just(100_000)].prop_map(Op::Advance),
        1 => (1i64..2_000).prop_map(Op::ClockBack),
        6 => k.clone().prop_map(Op::Get),
        2 => (prop::option::of(0u8..3), prop::option::of(0u8..24), prop::option::of(0u8..24), any::<bool>(), prop::option::of(1usize..6))
            .prop_map(|(p, s, e, r, l)| Op::Scan(p, s, e, r, l)),
        2 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => Just(Op::Maintenance),
        1 => Just(Op::Reopen),
    ]
}

/// `c % 6`: 0-3 always, 4 if absent, 5 if present (biased towards unconditional puts).
fn put_condition(c: u8) -> PutCondition {
    match c % 6 {
        4 => PutCondition::IfAbsent,
        5 => PutCondition::IfPresent,
        _ => PutCondition::Always,
    }
}

/// `c % 12` picks a valid Redis condition combination (most of them "none").
fn expire_condition(c: u8) -> ExpireCondition {
    let none = ExpireCondition::default();
    match c % 12 {
        0 => ExpireCondition { nx: true, ..none },
        1 => ExpireCondition { xx: true, ..none },
        2 => ExpireCondition { gt: true, ..none },
        3 => ExpireCondition { lt: true, ..none },
        4 => ExpireCondition {
            xx: true,
            gt: true,
            ..none
        },
        5 => ExpireCondition {
            xx: true,
            lt: true,
            ..none
        },
        _ => none,
    }
}

#[derive(Default, Clone)]
struct Model {
    map: BTreeMap<Vec<u8>, (Vec<u8>, Option<i64>)>,
    default_ttl: Option<u64>,
}

impl Model {
    fn live(&self, k: &[u8], now: i64) -> Option<&(Vec<u8>, Option<i64>)> {
        self.map.get(k).filter(|(_, e)| e.is_none_or(|at| now < at))
    }

    fn expiry(&self, t: &TtlChoice, now: i64, current: Option<Option<i64>>) -> Option<i64> {
        match t {
            TtlChoice::Default => self.default_ttl.map(|ms| now + ms as i64),
            TtlChoice::NoExpiry => None,
            TtlChoice::After(ms) => Some(now + *ms as i64),
            TtlChoice::At(rel) => Some(now + rel),
            TtlChoice::Keep => current.flatten(),
        }
    }

    /// Returns false if the condition failed.
    fn put(&mut self, k: Vec<u8>, v: Vec<u8>, t: &TtlChoice, c: PutCondition, now: i64) -> bool {
        let live = self.live(&k, now).cloned();
        match c {
            PutCondition::IfAbsent if live.is_some() => return false,
            PutCondition::IfPresent if live.is_none() => return false,
            _ => {}
        }
        let e = self.expiry(t, now, live.map(|(_, e)| e));
        if e.is_some_and(|at| at <= now) {
            self.map.remove(&k);
        } else {
            self.map.insert(k, (v, e));
        }
        true
    }

    fn delete(&mut self, k: &[u8], now: i64) -> bool {
        let was = self.live(k, now).is_some();
        self.map.remove(k);
        was
    }

    fn expire_at(&mut self, k: &[u8], at: i64, c: ExpireCondition, now: i64) -> bool {
        let Some((v, cur)) = self.live(k, now).cloned() else {
            return false;
        };
        let ok = (!c.nx || cur.is_none())
            && (!c.xx || cur.is_some())
            && (!c.gt || cur.is_some_and(|x| at > x))
            && (!c.lt || cur.is_none_or(|x| at < x));
        if !ok {
            return false;
        }
        if at <= now {
            self.map.remove(k);
        } else {
            self.map.insert(k.to_vec(), (v, Some(at)));
        }
        true
    }

    fn persist(&mut self, k: &[u8], now: i64) -> bool {
        match self.live(k, now).cloned() {
            Some((v, Some(_))) => {
                self.map.insert(k.to_vec(), (v, None));
                true
            }
            _ => false,
        }
    }
}

fn to_ttl(t: &TtlChoice, now: i64) -> Ttl {
    match t {
        TtlChoice::Default => Ttl::Default,
        TtlChoice::NoExpiry => Ttl::NoExpiry,
        TtlChoice::After(ms) => Ttl::ExpireAfter(*ms),
        TtlChoice::At(rel) => Ttl::ExpireAt(now + rel),
        TtlChoice::Keep => Ttl::Keep,
    }
}

struct Harness {
    db: Db,
    store: MemoryStore,
    clock: FakeClock,
    options: DbOptions,
    model: Model,
    now: i64,
}

impl Harness {
    async fn new(default_ttl: Option<u64>, relaxed: bool) -> Self {
        let options = DbOptions {
            default_ttl_ms: default_ttl,
            durability: if relaxed {
                Durability::Relaxed
            } else {
                Durability::Durable
            },
            ..small()
        };
        let store = MemoryStore::new();
        let clock = FakeClock::new(T0);
        let db = Db::open(store.clone(), clock.clone(), options.clone())
            .await
            .unwrap();
        let now = db.now();
        Harness {
            db,
            store,
            clock,
            options,
            model: Model {
                default_ttl,
                ..Model::default()
            },
            now,
        }
    }

    fn tick(&mut self) -> i64 {
        let now = self.db.now();
        assert!(now >= self.now, "the engine clock went backwards");
        self.now = now;
        now
    }

    async fn check_key(&self, k: &[u8]) {
        let now = self.now;
        let expected = self.model.live(k, now);
        let got = self.db.get_entry(k).await.unwrap();
        assert_eq!(
            got.as_ref().map(|e| (&e.value, e.expire_at)),
            expected.map(|(v, e)| (v, *e)),
            "get_entry({:?}) at {now}",
            String::from_utf8_lossy(k)
        );
        let ttl = self.db.ttl(k).await.unwrap();
        let want = match expected {
            None => -2,
            Some((_, None)) => -1,
            Some((_, Some(at))) => at - now,
        };
        assert_eq!(ttl, want, "ttl({:?})", String::from_utf8_lossy(k));
    }

    async fn check_scan(&self, options: ScanOptions) {
        let now = self.now;
        let mut want: Vec<(Vec<u8>, Vec<u8>, Option<i64>)> = self
            .model
            .map
            .iter()
            .filter(|(k, (_, e))| {
                e.is_none_or(|at| now < at)
                    && options.prefix.as_ref().is_none_or(|p| k.starts_with(p))
                    && options.start.as_ref().is_none_or(|s| *k >= s)
                    && options.end.as_ref().is_none_or(|e| *k < e)
            })
            .map(|(k, (v, e))| (k.clone(), v.clone(), *e))
            .collect();
        if options.reverse {
            want.reverse();
        }
        if let Some(l) = options.limit {
            want.truncate(l);
        }
        let got: Vec<_> = self
            .db
            .scan(&options)
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.key, e.value, e.expire_at))
            .collect();
        assert_eq!(got, want, "scan {options:?} at {now}");
    }

    async fn apply(&mut self, op: &Op) {
        match op {
            Op::Put(k, v, t, c) => {
                let now = self.tick();
                let (k, v, c) = (key(*k), vec![*v; 1 + (*v as usize % 40)], put_condition(*c));
                let opts = PutOptions {
                    ttl: to_ttl(t, now),
                    condition: c,
                };
                let got = self.db.put_with_options(&k, &v, opts).await.unwrap();
                let want = self.model.put(k, v, t, c, now);
                assert_eq!(got, want, "put result");
            }
            Op::Delete(k) => {
                let now = self.tick();
                let got = self.db.delete(&key(*k)).await.unwrap();
                assert_eq!(got, self.model.delete(&key(*k), now), "delete result");
            }
            Op::Expire(k, ms, c) => {
                let now = self.tick();
                let c = expire_condition(*c);
                let got = self.db.expire(&key(*k), *ms, c).await.unwrap();
                assert_eq!(
                    got,
                    self.model.expire_at(&key(*k), now + *ms as i64, c, now),
                    "expire result"
                );
            }
            Op::ExpireAt(k, rel, c) => {
                let now = self.tick();
                let c = expire_condition(*c);
                let got = self.db.expire_at(&key(*k), now + rel, c).await.unwrap();
                assert_eq!(
                    got,
                    self.model.expire_at(&key(*k), now + rel, c, now),
                    "expire_at result"
                );
            }
            Op::Persist(k) => {
                let now = self.tick();
                let got = self.db.persist(&key(*k)).await.unwrap();
                assert_eq!(got, self.model.persist(&key(*k), now), "persist result");
            }
            Op::Batch(ops) => {
                let now = self.tick();
                let mut batch = WriteBatch::new();
                let mut model = self.model.clone();
                let mut ok = true;
                for (is_put, k, v, t, c) in ops {
                    let k = key(*k);
                    if *is_put {
                        let c = put_condition(*c);
                        let opts = PutOptions {
                            ttl: to_ttl(t, now),
                            condition: c,
                        };
                        batch.put_with_options(&k, &[*v], opts);
                        ok &= model.put(k, vec![*v], t, c, now);
                    } else {
                        batch.delete(&k);
                        model.delete(&k, now);
                    }
                }
                let got = self.db.write(batch).await.unwrap();
                assert_eq!(got, ok, "batch result");
                if ok {
                    self.model = model;
                }
            }
            Op::Advance(ms) => self.clock.advance(*ms),
            Op::ClockBack(ms) => self.clock.advance(-ms),
            Op::Get(k) => {
                self.tick();
                self.check_key(&key(*k)).await;
            }
            Op::Scan(p, s, e, reverse, limit) => {
                self.tick();
                let options = ScanOptions {
                    prefix: p.map(|p| vec![b"abc"[p as usize]]),
                    start: s.map(key),
                    end: e.map(key),
                    limit: *limit,
                    reverse: *reverse,
                };
                self.check_scan(options).await;
            }
            Op::Flush => self.db.flush().await.unwrap(),
            Op::Compact => self.db.compact().await.unwrap(),
            Op::Maintenance => {
                self.db.maintenance_step().await.unwrap();
            }
            Op::Reopen => {
                self.db.close().await.unwrap();
                self.db = Db::open(self.store.clone(), self.clock.clone(), self.options.clone())
                    .await
                    .unwrap();
            }
        }
    }

    async fn check_everything(&mut self) {
        self.tick();
        for k in 0..24 {
            self.check_key(&key(k)).await;
        }
        self.check_scan(ScanOptions::default()).await;
        self.check_scan(ScanOptions {
            reverse: true,
            ..ScanOptions::default()
        })
        .await;
    }
}

fn run_case(default_ttl: Option<u64>, relaxed: bool, ops: &[Op]) {
    run(async {
        let mut h = Harness::new(default_ttl, relaxed).await;
        for op in ops {
            h.apply(op).await;
        }
        h.check_everything().await;
        h.db.close().await.unwrap();
        let mut h2 = Harness {
            db: Db::open(h.store.clone(), h.clock.clone(), h.options.clone())
                .await
                .unwrap(),
            ..h
        };
        h2.check_everything().await;
    });
}

/// Seeds that ever failed are replayed first (proptest's regression file) and kept as named
/// tests in `model_regressions.rs`.
const REGRESSIONS: &str = "tests/model_based.proptest-regressions";

#[test]
fn engine_agrees_with_the_model() {
    use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let cases = std::env::var("TTLKV_MODEL_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000);
    let mut runner = TestRunner::new(Config {
        cases,
        max_shrink_iters: 20_000,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(REGRESSIONS))),
        ..Config::default()
    });
    let ran = AtomicUsize::new(0);
    let ops_run = AtomicUsize::new(0);
    let strategy = (
        prop::option::of(1u64..2_000),
        any::<bool>(),
        prop::collection::vec(op(), 1..120),
    );
    let result = runner.run(&strategy, |(default_ttl, relaxed, ops)| {
        run_case(default_ttl, relaxed, &ops);
        ran.fetch_add(1, Ordering::Relaxed);
        ops_run.fetch_add(ops.len(), Ordering::Relaxed);
        Ok(())
    });
    println!(
        "model-based: {} cases, {} operations, all agreed with the model",
        ran.load(Ordering::Relaxed),
        ops_run.load(Ordering::Relaxed)
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}
