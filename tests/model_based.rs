//! Model-based test: random sequences of puts (every TTL kind and condition), deletes, expire /
//! expire_at (NX/XX/GT/LT), persist, get_ex, batches, in the default namespace and in a second
//! namespace with its own default and maximum TTL (which may be dropped and re-created),
//! snapshots read later, purges with a limit (and an expire hook that rewrites some keys instead),
//! clock jumps (forwards, and the source clock going backwards), flush, compact, maintenance and
//! reopen, run against the engine and against a `BTreeMap` + expiry model per namespace.
//!
//! Every read (get, ttl, scans forwards and backwards, through the live database or a snapshot)
//! must agree with the model, and so must every write's result. The model keeps each key's
//! *current row*, expired or not: an expired row stays until the purge reports it (or a write
//! replaces it), so every purge report — from `purge_expired` or from a maintenance step — must
//! list exactly the model's due rows in expiry-index order, and each expired key is reported
//! exactly once over the whole run, across flushes, compactions and reopens.

mod common;
use common::*;

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;

use proptest::prelude::*;
use ttlkv::store::MemoryStore;
use ttlkv::{
    Clock, Db, DbOptions, Durability, ErrorKind, ExpireCondition, ExpireHook, ExpiredEntry,
    FakeClock, GetExOptions, Lookup, NamespaceOptions, PurgeReport, PutCondition, PutOptions,
    Replacement, ScanOptions, Snapshot, Ttl, WriteBatch,
};

/// Namespace of an operation: 0 = the default one, 1 = `"ns1"`.
type Ns = usize;

/// The name of the second namespace.
const NS1: &str = "ns1";

/// At most this many snapshots are held at once (taking another releases the oldest).
const MAX_SNAPSHOTS: usize = 4;

/// The TTL the expire hook gives the keys it rewrites.
const HOOK_TTL_MS: u64 = 1_000;

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
enum GetExChoice {
    After(u64),
    /// Relative to now; may be in the past.
    At(i64),
    Persist,
}

#[derive(Clone, Debug)]
enum Op {
    Put(Ns, u8, u8, TtlChoice, u8),
    Delete(Ns, u8),
    Expire(Ns, u8, u64, u8),
    ExpireAt(Ns, u8, i64, u8),
    Persist(Ns, u8),
    GetEx(Ns, u8, GetExChoice),
    Batch(Ns, Vec<(bool, u8, u8, TtlChoice, u8)>),
    Advance(i64),
    ClockBack(i64),
    /// The clock misreads once: a century ahead (`false`), or no plausible time at all (`true`).
    ClockGlitch(bool),
    Get(Ns, u8),
    Scan(Ns, Option<u8>, Option<u8>, Option<u8>, bool, Option<usize>),
    Snapshot(Ns),
    SnapGet(usize, u8),
    SnapScan(usize, Option<u8>, bool),
    SnapRelease(usize),
    Purge(usize),
    DropNamespace,
    /// Remove every key of a keyspace; what was due is purged (and reported) first.
    Clear(Ns),
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

fn get_ex_choice() -> impl Strategy<Value = GetExChoice> {
    prop_oneof![
        3 => (1u64..3_000).prop_map(GetExChoice::After),
        2 => (-500i64..3_000).prop_map(GetExChoice::At),
        2 => Just(GetExChoice::Persist),
    ]
}

fn ns() -> impl Strategy<Value = Ns> {
    prop_oneof![2 => Just(0usize), 1 => Just(1usize)]
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0u8..24;
    prop_oneof![
        10 => (ns(), k.clone(), any::<u8>(), ttl_choice(), 0u8..6).prop_map(|(n, k, v, t, c)| Op::Put(n, k, v, t, c)),
        3 => (ns(), k.clone()).prop_map(|(n, k)| Op::Delete(n, k)),
        2 => (ns(), k.clone(), prop_oneof![1 => Just(0u64), 5 => 1u64..3_000], 0u8..12).prop_map(|(n, k, ms, c)| Op::Expire(n, k, ms, c)),
        1 => (ns(), k.clone(), -500i64..3_000, 0u8..12).prop_map(|(n, k, at, c)| Op::ExpireAt(n, k, at, c)),
        1 => (ns(), k.clone()).prop_map(|(n, k)| Op::Persist(n, k)),
        2 => (ns(), k.clone(), get_ex_choice()).prop_map(|(n, k, g)| Op::GetEx(n, k, g)),
        2 => (ns(), prop::collection::vec((any::<bool>(), k.clone(), any::<u8>(), ttl_choice(), 0u8..8), 1..6))
            .prop_map(|(n, ops)| Op::Batch(n, ops)),
        4 => prop_oneof![0i64..200, 0i64..3_000, Just(100_000)].prop_map(Op::Advance),
        1 => (1i64..2_000).prop_map(Op::ClockBack),
        1 => any::<bool>().prop_map(Op::ClockGlitch),
        6 => (ns(), k.clone()).prop_map(|(n, k)| Op::Get(n, k)),
        2 => (ns(), prop::option::of(0u8..3), prop::option::of(0u8..24), prop::option::of(0u8..24), any::<bool>(), prop::option::of(1usize..6))
            .prop_map(|(n, p, s, e, r, l)| Op::Scan(n, p, s, e, r, l)),
        1 => ns().prop_map(Op::Snapshot),
        2 => (0usize..MAX_SNAPSHOTS, k.clone()).prop_map(|(i, k)| Op::SnapGet(i, k)),
        1 => (0usize..MAX_SNAPSHOTS, prop::option::of(0u8..3), any::<bool>()).prop_map(|(i, p, r)| Op::SnapScan(i, p, r)),
        1 => (0usize..MAX_SNAPSHOTS).prop_map(Op::SnapRelease),
        2 => prop_oneof![0usize..6, Just(1_000)].prop_map(Op::Purge),
        1 => Just(Op::DropNamespace),
        1 => ns().prop_map(Op::Clear),
        2 => Just(Op::Flush),
        1 => Just(Op::Compact),
        2 => Just(Op::Maintenance),
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

/// Whether the expire hook rewrites a key with this value (its first byte is odd).
fn hook_rewrites(value: &[u8]) -> bool {
    value.first().is_some_and(|b| b % 2 == 1)
}

/// The value the expire hook rewrites a key with: the first byte made even, so the rewritten key
/// expires for good the next time.
fn hook_value(value: &[u8]) -> Vec<u8> {
    let mut v = value.to_vec();
    if let Some(b) = v.first_mut() {
        *b = b.wrapping_add(1);
    }
    v
}

fn expire_hook() -> ExpireHook {
    Rc::new(|e: &ExpiredEntry| {
        hook_rewrites(&e.value).then(|| Replacement {
            value: hook_value(&e.value),
            ttl: Ttl::ExpireAfter(HOOK_TTL_MS),
        })
    })
}

/// The model of one namespace: the current row of every key (value and expiry), and the
/// namespace's TTL rules. An expired row stays here until the purge removes it or a write
/// replaces it, exactly as the engine keeps it until then.
#[derive(Default, Clone, Debug)]
struct Space {
    rows: BTreeMap<Vec<u8>, (Vec<u8>, Option<i64>)>,
    /// Rows that expired and were replaced before the purge reported them: their events are
    /// still owed, by `(expiry, key)`, with the value they had.
    owed: BTreeMap<(i64, Vec<u8>), Vec<u8>>,
    default_ttl: Option<u64>,
    max_ttl: Option<u64>,
    /// The namespace id its rows are stored under (it orders the expiry index): the default
    /// keyspace starts at 0, "ns1" at 1; a drop and re-create, or a clear, moves it to the next.
    id: u32,
}

type Row = (Vec<u8>, Option<i64>);

impl Space {
    fn live(&self, k: &[u8], now: i64) -> Option<&Row> {
        self.rows
            .get(k)
            .filter(|(_, e)| e.is_none_or(|at| now < at))
    }

    /// The namespace's maximum TTL applied to an expiry (a missing one becomes the maximum).
    fn clamp(&self, at: Option<i64>, now: i64) -> Option<i64> {
        match self.max_ttl {
            Some(max) => {
                let cap = now + max as i64;
                Some(at.map_or(cap, |at| at.min(cap)))
            }
            None => at,
        }
    }

    fn expiry(&self, t: &TtlChoice, now: i64, current: Option<Option<i64>>) -> Option<i64> {
        let raw = match t {
            TtlChoice::Default => self.default_ttl.map(|ms| now + ms as i64),
            TtlChoice::NoExpiry => None,
            TtlChoice::After(ms) => Some(now + *ms as i64),
            TtlChoice::At(rel) => Some(now + rel),
            TtlChoice::Keep => current.flatten(),
        };
        self.clamp(raw, now)
    }

    /// Write a row, or remove the key if its expiry is not in the future.
    fn set(&mut self, k: &[u8], v: Vec<u8>, at: Option<i64>, now: i64) {
        if at.is_some_and(|at| at <= now) {
            self.rows.remove(k);
        } else {
            self.rows.insert(k.to_vec(), (v, at));
        }
    }

    /// Returns false if the condition failed. A put replaces the key's row even if it expired.
    fn put(&mut self, k: &[u8], v: Vec<u8>, t: &TtlChoice, c: PutCondition, now: i64) -> bool {
        let live = self.live(k, now).cloned();
        match c {
            PutCondition::IfAbsent if live.is_some() => return false,
            PutCondition::IfPresent if live.is_none() => return false,
            _ => {}
        }
        let was_live = live.is_some();
        let e = self.expiry(t, now, live.map(|(_, e)| e));
        if let Some((old, Some(at))) = self.rows.get(k).filter(|_| !was_live).cloned() {
            self.owed.insert((at, k.to_vec()), old);
        }
        self.set(k, v, e, now);
        true
    }

    /// Only a live key is deleted; an expired row stays for the purge.
    fn delete(&mut self, k: &[u8], now: i64) -> bool {
        let was = self.live(k, now).is_some();
        if was {
            self.rows.remove(k);
        }
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
        let new = self.clamp(Some(at), now);
        if new != cur {
            self.set(k, v, new, now);
        }
        true
    }

    /// Under a maximum TTL, persisting sets the maximum: true only if that changes the expiry.
    fn persist(&mut self, k: &[u8], now: i64) -> bool {
        let Some((v, Some(cur))) = self.live(k, now).cloned() else {
            return false;
        };
        let new = self.clamp(None, now);
        if new == Some(cur) {
            return false;
        }
        self.set(k, v, new, now);
        true
    }

    fn get_ex(&mut self, k: &[u8], target: Option<i64>, now: i64) -> Option<Vec<u8>> {
        let (v, cur) = self.live(k, now).cloned()?;
        let new = self.clamp(target, now);
        if new != cur {
            self.set(k, v.clone(), new, now);
        }
        Some(v)
    }

    fn scan(&self, options: &ScanOptions, now: i64) -> Vec<(Vec<u8>, Vec<u8>, Option<i64>)> {
        let mut want: Vec<_> = self
            .rows
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
        want
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

fn ns_name(ns: Ns) -> &'static str {
    if ns == 0 {
        ""
    } else {
        NS1
    }
}

/// What one case runs with, besides its operations.
#[derive(Clone, Copy, Debug)]
struct Setup {
    default_ttl: Option<u64>,
    relaxed: bool,
    ns1: NamespaceOptions,
    hook: bool,
    purge_slice_keys: usize,
    /// The store shares its pages (read in place, no cache: the npm memory storage) or hands out
    /// copies only (read through the page cache and its checks, as from IndexedDB).
    shares_pages: bool,
    /// The row cache's budget: the default, or room for a few keys only (eight slots), so that
    /// keys come and go all the time.
    row_cache_bytes: usize,
    /// Compactions merge on a thread of their own, installed by a later maintenance step (or
    /// waited for by `compact()`): every operation may land while one merges.
    background_compaction: bool,
}

fn setup() -> impl Strategy<Value = Setup> {
    (
        prop::option::of(1u64..2_000),
        any::<bool>(),
        prop::option::of(1u64..2_000),
        prop::option::weighted(0.6, 1u64..4_000),
        any::<bool>(),
        prop_oneof![1usize..6, Just(1_000)],
        any::<bool>(),
        prop_oneof![Just(DbOptions::default().row_cache_bytes), Just(2_048)],
        any::<bool>(),
    )
        .prop_map(
            |(
                default_ttl,
                relaxed,
                ns_default,
                ns_max,
                hook,
                purge_slice_keys,
                shares_pages,
                row_cache_bytes,
                background_compaction,
            )| {
                Setup {
                    default_ttl,
                    relaxed,
                    ns1: NamespaceOptions {
                        default_ttl_ms: ns_default,
                        max_ttl_ms: ns_max,
                    },
                    hook,
                    purge_slice_keys,
                    shares_pages,
                    row_cache_bytes,
                    background_compaction,
                }
            },
        )
}

/// A snapshot held by the test, with the model as it was when the snapshot was taken.
struct HeldSnapshot {
    snap: Snapshot,
    space: Space,
    time: i64,
}

/// What a case did beyond its operations, summed for the report line.
#[derive(Default, Clone, Copy)]
struct Tally {
    events: usize,
    rewrites: usize,
    snapshot_reads: usize,
}

/// The harness's clock: a fake clock, except for a one-off misreading queued in `glitch`.
#[derive(Clone)]
struct GlitchClock {
    base: FakeClock,
    glitch: Rc<Cell<Option<i64>>>,
}

impl Clock for GlitchClock {
    fn now_ms(&self) -> i64 {
        self.glitch.take().unwrap_or_else(|| self.base.now_ms())
    }
}

struct Harness {
    db: Db,
    ns1: Db,
    store: MemoryStore,
    clock: FakeClock,
    /// What the database reads: `clock`, with the glitches `Op::ClockGlitch` queues.
    engine_clock: GlitchClock,
    options: DbOptions,
    setup: Setup,
    spaces: [Space; 2],
    snapshots: Vec<HeldSnapshot>,
    now: i64,
    /// `"ns1"` was dropped (and re-created) at least once.
    dropped_ns1: bool,
    /// The namespace id the engine hands out next.
    next_id: u32,
    tally: Tally,
}

impl Harness {
    async fn new(setup: Setup) -> Self {
        let options = DbOptions {
            default_ttl_ms: setup.default_ttl,
            durability: if setup.relaxed {
                Durability::Relaxed
            } else {
                Durability::Durable
            },
            purge_slice_keys: setup.purge_slice_keys,
            row_cache_bytes: setup.row_cache_bytes,
            // Only where the engine has threads (`threads`, a default feature).
            background_compaction: setup.background_compaction && cfg!(feature = "threads"),
            ..small()
        };
        let store = MemoryStore::new();
        store.set_copies_only(!setup.shares_pages);
        let clock = FakeClock::new(T0);
        let engine_clock = GlitchClock {
            base: clock.clone(),
            glitch: Rc::default(),
        };
        let db = Db::open(store.clone(), engine_clock.clone(), options.clone())
            .await
            .unwrap();
        let ns1 = db.namespace(NS1, Some(setup.ns1)).await.unwrap();
        if setup.hook {
            db.set_expire_hook(Some(expire_hook()));
        }
        let now = db.now().unwrap();
        Harness {
            db,
            ns1,
            store,
            clock,
            engine_clock,
            options,
            setup,
            spaces: [
                Space {
                    default_ttl: setup.default_ttl,
                    ..Space::default()
                },
                Space {
                    default_ttl: setup.ns1.default_ttl_ms.or(setup.default_ttl),
                    max_ttl: setup.ns1.max_ttl_ms,
                    id: 1,
                    ..Space::default()
                },
            ],
            next_id: 2,
            snapshots: Vec::new(),
            now,
            dropped_ns1: false,
            tally: Tally::default(),
        }
    }

    fn handle(&self, ns: Ns) -> &Db {
        if ns == 0 {
            &self.db
        } else {
            &self.ns1
        }
    }

    fn tick(&mut self) -> i64 {
        let now = self.db.now().unwrap();
        assert!(now >= self.now, "the engine clock went backwards");
        self.now = now;
        now
    }

    async fn check_key(&self, ns: Ns, k: &[u8]) {
        let now = self.now;
        let expected = self.spaces[ns].live(k, now);
        let db = self.handle(ns);
        let got = db.get_entry(k).await.unwrap();
        assert_eq!(
            got.as_ref().map(|e| (&e.value, e.expire_at)),
            expected.map(|(v, e)| (v, *e)),
            "get_entry({:?}) in namespace {ns} at {now}",
            String::from_utf8_lossy(k)
        );
        let ttl = db.ttl(k).await.unwrap();
        let want = match expected {
            None => -2,
            Some((_, None)) => -1,
            Some((_, Some(at))) => at - now,
        };
        assert_eq!(
            ttl,
            want,
            "ttl({:?}) in namespace {ns}",
            String::from_utf8_lossy(k)
        );
        // `get`, and `get_with` under it, answered at once from the row cache or by its search,
        // agree.
        assert_eq!(
            db.get(k).await.unwrap().as_ref(),
            expected.map(|(v, _)| v),
            "get({:?}) in namespace {ns} at {now}",
            String::from_utf8_lossy(k)
        );
        let value = match db.get_with(k, |v| v.map(<[u8]>::to_vec)).unwrap() {
            Lookup::Now(value) => value,
            Lookup::Later(search) => search.await.unwrap(),
        };
        assert_eq!(
            value.as_ref(),
            expected.map(|(v, _)| v),
            "get_with({:?}) in namespace {ns} at {now}",
            String::from_utf8_lossy(k)
        );
    }

    async fn check_scan(&self, ns: Ns, options: ScanOptions) {
        let now = self.now;
        let want = self.spaces[ns].scan(&options, now);
        let got: Vec<_> = self
            .handle(ns)
            .scan(&options)
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.key, e.value, e.expire_at))
            .collect();
        assert_eq!(got, want, "scan {options:?} in namespace {ns} at {now}");
    }

    async fn check_snapshot_key(&mut self, i: usize, k: &[u8]) {
        let held = &self.snapshots[i];
        let expected = held.space.live(k, held.time);
        let got = held.snap.get_entry(k).await.unwrap();
        assert_eq!(
            got.as_ref().map(|e| (&e.value, e.expire_at)),
            expected.map(|(v, e)| (v, *e)),
            "snapshot {i} (time {}) get_entry({:?}), now {}",
            held.time,
            String::from_utf8_lossy(k),
            self.now
        );
        let ttl = held.snap.ttl(k).await.unwrap();
        let want = match expected {
            None => -2,
            Some((_, None)) => -1,
            Some((_, Some(at))) => at - held.time,
        };
        assert_eq!(
            ttl,
            want,
            "snapshot {i} ttl({:?})",
            String::from_utf8_lossy(k)
        );
        self.tally.snapshot_reads += 1;
    }

    async fn check_snapshot_scan(&mut self, i: usize, options: ScanOptions) {
        let held = &self.snapshots[i];
        let want = held.space.scan(&options, held.time);
        let got: Vec<_> = held
            .snap
            .scan(&options)
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.key, e.value, e.expire_at))
            .collect();
        assert_eq!(
            got, want,
            "snapshot {i} (time {}) scan {options:?}, now {}",
            held.time, self.now
        );
        self.tally.snapshot_reads += 1;
    }

    /// The model's due rows (expired, not yet purged) in expiry-index order: expiry, then
    /// namespace id (`Space::id`), then key bytes.
    fn due(&self, now: i64) -> Vec<(i64, Ns, Vec<u8>)> {
        let mut due: Vec<_> = self
            .spaces
            .iter()
            .enumerate()
            .flat_map(|(ns, space)| {
                let rows = space.rows.iter().filter_map(move |(k, (_, e))| {
                    e.filter(|at| *at <= now).map(|at| (at, ns, k.clone()))
                });
                let owed = space.owed.keys().map(move |(at, k)| (*at, ns, k.clone()));
                rows.chain(owed)
            })
            .collect();
        due.sort_by_key(|(at, ns, k)| (*at, self.spaces[*ns].id, k.clone()));
        due
    }

    /// Check a purge report against the model's due set and apply it: the keys the purge handled
    /// are a prefix of the due set (all of it unless `more_due`), each removed key reported once
    /// in that order with its last value, each key the hook rewrote reported as a rewrite.
    fn settle_purge(&mut self, report: &PurgeReport, limit: usize, what: &str) {
        let now = self.now;
        let due = self.due(now);
        let handled = report.removed + report.rewritten;
        assert!(
            report.hook_errors.is_empty(),
            "{what}: hook errors {:?}",
            report.hook_errors
        );
        assert_eq!(
            report.removed,
            report.expired.len(),
            "{what}: removed count"
        );
        assert!(
            handled <= limit.max(1),
            "{what}: handled {handled} keys with limit {limit}"
        );
        assert!(
            handled <= due.len(),
            "{what} at {now}: handled {handled} keys but only {} are due: {due:?}; report {report:?}",
            due.len()
        );
        if !report.more_due {
            assert_eq!(
                handled,
                due.len(),
                "{what} at {now}: due keys left behind without more_due: {due:?}; report {report:?}"
            );
        }
        let mut want = Vec::new();
        let mut rewrites = 0;
        for (at, ns, k) in &due[..handled] {
            let space = &mut self.spaces[*ns];
            if let Some(value) = space.owed.remove(&(*at, k.clone())) {
                want.push(ExpiredEntry {
                    namespace: ns_name(*ns).to_string(),
                    key: k.clone(),
                    value,
                    expire_at: *at,
                });
                continue;
            }
            let (value, _) = space.rows[k].clone();
            if self.setup.hook && hook_rewrites(&value) {
                rewrites += 1;
                let new = space.clamp(Some(now + HOOK_TTL_MS as i64), now);
                space.set(k, hook_value(&value), new, now);
            } else {
                space.rows.remove(k);
                want.push(ExpiredEntry {
                    namespace: ns_name(*ns).to_string(),
                    key: k.clone(),
                    value,
                    expire_at: *at,
                });
            }
        }
        assert_eq!(
            report.expired, want,
            "{what} at {now}: expired entries (due: {due:?})"
        );
        assert_eq!(report.rewritten, rewrites, "{what}: rewritten count");
        self.tally.events += want.len();
        self.tally.rewrites += rewrites;
    }

    /// Purge until nothing is due, checking each slice (three keys a slice, so a drain takes
    /// several slices, also past the entries of a dropped namespace).
    async fn drain_purge(&mut self) {
        let limit = 3;
        for _ in 0..10_000 {
            self.tick();
            let report = self.db.purge_expired(limit).await.unwrap();
            self.settle_purge(&report, limit, "draining purge");
            if !report.more_due {
                assert!(self.due(self.now).is_empty(), "due keys left after a drain");
                return;
            }
        }
        panic!("the purge kept reporting more_due");
    }

    async fn reopen(&mut self) {
        // Snapshots do not survive a reopen.
        self.snapshots.clear();
        self.db.close().await.unwrap();
        self.db = Db::open(
            self.store.clone(),
            self.engine_clock.clone(),
            self.options.clone(),
        )
        .await
        .unwrap();
        self.ns1 = self.db.namespace(NS1, None).await.unwrap();
        assert_eq!(
            self.db.namespaces(),
            vec![(NS1.to_string(), self.setup.ns1)],
            "namespaces after reopen"
        );
        if self.setup.hook {
            self.db.set_expire_hook(Some(expire_hook()));
        }
    }

    async fn apply(&mut self, op: &Op) {
        match op {
            Op::Put(ns, k, v, t, c) => {
                let now = self.tick();
                let (k, v, c) = (key(*k), vec![*v; 1 + (*v as usize % 40)], put_condition(*c));
                let opts = PutOptions {
                    ttl: to_ttl(t, now),
                    condition: c,
                };
                let got = self
                    .handle(*ns)
                    .put_with_options(&k, &v, opts)
                    .await
                    .unwrap();
                let want = self.spaces[*ns].put(&k, v, t, c, now);
                assert_eq!(got, want, "put result");
            }
            Op::Delete(ns, k) => {
                let now = self.tick();
                let got = self.handle(*ns).delete(&key(*k)).await.unwrap();
                let want = self.spaces[*ns].delete(&key(*k), now);
                assert_eq!(got, want, "delete result");
            }
            Op::Expire(ns, k, ms, c) => {
                let now = self.tick();
                let c = expire_condition(*c);
                let got = self.handle(*ns).expire(&key(*k), *ms, c).await.unwrap();
                let want = self.spaces[*ns].expire_at(&key(*k), now + *ms as i64, c, now);
                assert_eq!(got, want, "expire result");
            }
            Op::ExpireAt(ns, k, rel, c) => {
                let now = self.tick();
                let c = expire_condition(*c);
                let got = self
                    .handle(*ns)
                    .expire_at(&key(*k), now + rel, c)
                    .await
                    .unwrap();
                let want = self.spaces[*ns].expire_at(&key(*k), now + rel, c, now);
                assert_eq!(got, want, "expire_at result");
            }
            Op::Persist(ns, k) => {
                let now = self.tick();
                let got = self.handle(*ns).persist(&key(*k)).await.unwrap();
                let want = self.spaces[*ns].persist(&key(*k), now);
                assert_eq!(got, want, "persist result");
            }
            Op::GetEx(ns, k, g) => {
                let now = self.tick();
                let (options, target) = match g {
                    GetExChoice::After(ms) => {
                        (GetExOptions::ExpireAfter(*ms), Some(now + *ms as i64))
                    }
                    GetExChoice::At(rel) => (GetExOptions::ExpireAt(now + rel), Some(now + rel)),
                    GetExChoice::Persist => (GetExOptions::Persist, None),
                };
                let got = self.handle(*ns).get_ex(&key(*k), options).await.unwrap();
                let want = self.spaces[*ns].get_ex(&key(*k), target, now);
                assert_eq!(got, want, "get_ex({options:?}) result at {now}");
            }
            Op::Batch(ns, ops) => {
                let now = self.tick();
                let mut batch = WriteBatch::new();
                let mut model = self.spaces[*ns].clone();
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
                        ok &= model.put(&k, vec![*v], t, c, now);
                    } else {
                        batch.delete(&k);
                        model.delete(&k, now);
                    }
                }
                let got = self.handle(*ns).write(batch).await.unwrap();
                assert_eq!(got, ok, "batch result");
                if ok {
                    self.spaces[*ns] = model;
                }
            }
            Op::Advance(ms) => self.clock.advance(*ms),
            Op::ClockBack(ms) => self.clock.advance(-ms),
            Op::ClockGlitch(implausible) => {
                if *implausible {
                    // A JS clock of 1e300 converts to i64::MAX: an error, and nothing changes.
                    self.engine_clock.glitch.set(Some(i64::MAX));
                    let e = self.db.now().unwrap_err();
                    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
                } else {
                    // A century ahead, once: whichever call reads it next, no one sees it.
                    let century = 100 * 365 * 86_400_000;
                    self.engine_clock
                        .glitch
                        .set(Some(self.clock.now_ms() + century));
                }
            }
            Op::Get(ns, k) => {
                self.tick();
                self.check_key(*ns, &key(*k)).await;
            }
            Op::Scan(ns, p, s, e, reverse, limit) => {
                self.tick();
                let options = ScanOptions {
                    prefix: p.map(|p| vec![b"abc"[p as usize]]),
                    start: s.map(key),
                    end: e.map(key),
                    limit: *limit,
                    reverse: *reverse,
                };
                self.check_scan(*ns, options).await;
            }
            Op::Snapshot(ns) => {
                let snap = self.handle(*ns).snapshot().unwrap();
                let time = snap.time();
                assert_eq!(time, self.tick(), "snapshot time");
                if self.snapshots.len() >= MAX_SNAPSHOTS {
                    self.snapshots.remove(0).snap.release();
                }
                self.snapshots.push(HeldSnapshot {
                    snap,
                    space: self.spaces[*ns].clone(),
                    time,
                });
            }
            Op::SnapGet(i, k) => {
                self.tick();
                if !self.snapshots.is_empty() {
                    let i = i % self.snapshots.len();
                    self.check_snapshot_key(i, &key(*k)).await;
                }
            }
            Op::SnapScan(i, p, reverse) => {
                self.tick();
                if !self.snapshots.is_empty() {
                    let i = i % self.snapshots.len();
                    let options = ScanOptions {
                        prefix: p.map(|p| vec![b"abc"[p as usize]]),
                        reverse: *reverse,
                        ..ScanOptions::default()
                    };
                    self.check_snapshot_scan(i, options).await;
                }
            }
            Op::SnapRelease(i) => {
                if !self.snapshots.is_empty() {
                    let i = i % self.snapshots.len();
                    let held = self.snapshots.remove(i);
                    held.snap.release();
                    let err = held.snap.get(b"a0").await.unwrap_err();
                    assert_eq!(err.kind(), ErrorKind::Closed, "read after release");
                }
            }
            Op::Purge(0) => {
                self.tick();
                // A purge that may remove nothing is refused, and changes nothing.
                let e = self.db.purge_expired(0).await.unwrap_err();
                assert_eq!(e.kind(), ErrorKind::InvalidArgument, "purge_expired(0)");
            }
            Op::Purge(limit) => {
                self.tick();
                let report = self.db.purge_expired(*limit).await.unwrap();
                self.settle_purge(&report, *limit, "purge_expired");
            }
            Op::DropNamespace => {
                let old = self.ns1.clone();
                assert!(self.db.drop_namespace(NS1).await.unwrap(), "drop_namespace");
                self.dropped_ns1 = true;
                let err = old.get(b"a0").await.unwrap_err();
                assert_eq!(
                    err.kind(),
                    ErrorKind::Closed,
                    "read through a dropped handle"
                );
                self.ns1 = self.db.namespace(NS1, Some(self.setup.ns1)).await.unwrap();
                // The new namespace starts empty; the old one's expired rows produce no events.
                self.spaces[1].rows.clear();
                self.spaces[1].owed.clear();
                self.spaces[1].id = self.next_id;
                self.next_id += 1;
                let err = old.put(b"a0", b"x").await.unwrap_err();
                assert_eq!(
                    err.kind(),
                    ErrorKind::Closed,
                    "write through a dropped handle"
                );
                assert_eq!(
                    self.db.namespaces(),
                    vec![(NS1.to_string(), self.setup.ns1)],
                    "namespaces after re-creating"
                );
            }
            Op::Clear(ns) => {
                self.tick();
                let report = self.handle(*ns).clear().await.unwrap();
                self.settle_purge(&report, usize::MAX, "clear");
                self.spaces[*ns].rows.clear();
                self.spaces[*ns].owed.clear();
                self.spaces[*ns].id = self.next_id;
                self.next_id += 1;
            }
            Op::Flush => self.db.flush().await.unwrap(),
            Op::Compact => self.db.compact().await.unwrap(),
            Op::Maintenance => {
                let now = self.tick();
                let step = self.db.maintenance_step().await.unwrap();
                self.settle_purge(&step.purge, self.setup.purge_slice_keys, "maintenance");
                // The next wake-up is no later than the earliest expiry still held.
                let earliest = self
                    .spaces
                    .iter()
                    .flat_map(|s| s.rows.values().filter_map(|(_, e)| *e))
                    .min();
                if let Some(at) = earliest {
                    let wake = step.next_wakeup_ms;
                    assert!(
                        wake.is_some_and(|w| w <= at.max(now)),
                        "next wake-up {wake:?} is after the earliest expiry {at} (now {now})"
                    );
                }
            }
            Op::Reopen => self.reopen().await,
        }
    }

    async fn check_everything(&mut self) {
        self.tick();
        for ns in 0..2 {
            for k in 0..24 {
                self.check_key(ns, &key(k)).await;
            }
            self.check_scan(ns, ScanOptions::default()).await;
            self.check_scan(
                ns,
                ScanOptions {
                    reverse: true,
                    ..ScanOptions::default()
                },
            )
            .await;
        }
        for i in 0..self.snapshots.len() {
            self.check_snapshot_scan(i, ScanOptions::default()).await;
        }
    }
}

/// Runs one case; returns what it counted.
fn run_case(setup: Setup, ops: &[Op]) -> Tally {
    run(async {
        let mut h = Harness::new(setup).await;
        for op in ops {
            h.apply(op).await;
        }
        h.check_everything().await;
        h.reopen().await;
        h.check_everything().await;
        // Every expired key not yet reported is reported now, exactly once: nothing (flush,
        // compaction, reopen) lost one.
        h.drain_purge().await;
        h.check_everything().await;
        h.db.close().await.unwrap();
        h.tally
    })
}

/// Seeds that ever failed are replayed first (proptest's regression file); engine bugs found
/// this way are kept as named tests in `model_regressions.rs`.
const REGRESSIONS: &str = "tests/model_based.proptest-regressions";

#[test]
fn engine_agrees_with_the_model() {
    use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};

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
    let ran = Cell::new(0usize);
    let ops_run = Cell::new(0usize);
    let total = Cell::new(Tally::default());
    let strategy = (setup(), prop::collection::vec(op(), 1..160));
    let result = runner.run(&strategy, |(setup, ops)| {
        let tally = run_case(setup, &ops);
        ran.set(ran.get() + 1);
        ops_run.set(ops_run.get() + ops.len());
        let t = total.get();
        total.set(Tally {
            events: t.events + tally.events,
            rewrites: t.rewrites + tally.rewrites,
            snapshot_reads: t.snapshot_reads + tally.snapshot_reads,
        });
        Ok(())
    });
    println!(
        "model-based: {} cases, {} operations, all agreed with the model",
        ran.get(),
        ops_run.get()
    );
    let t = total.get();
    println!(
        "model-based: {} expire events, {} hook rewrites, {} snapshot reads checked",
        t.events, t.rewrites, t.snapshot_reads
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}
