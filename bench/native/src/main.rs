//! ttlkv natively, side by side with peers measured in the same run on the same data: fjall (an
//! LSM on files, here on tmpfs), moka (`sync::Cache` with a time to live) and a `BTreeMap` with
//! an expiry check (the ceiling: no store that checks expiry can do less work per operation).
//!
//! `cargo run --release --manifest-path bench/native/Cargo.toml [-- --count N]`
//!
//! N random 16-byte keys (seeded), 100-byte values, a 1 h TTL. Phases: load (the keys in random
//! order), uniform gets (every key once, in random order), Zipf 0.99 gets (N), and a mix of 95 %
//! gets / 5 % puts with Zipf keys (N operations). Each round opens every store afresh and runs
//! each phase on every store before the next phase, the stores in an order that rotates from round
//! to round; three rounds. Printed: ops/s per store and phase, and ttlkv's ratio against each
//! peer (ttlkv ÷ peer, above 1 = ttlkv faster): the median of the three rounds' ratios and their
//! spread (min–max), each ratio taken within one round. ttlkv's gets lend the value (`get_with`)
//! rather than copy it out (`get`), as the `BTreeMap` lends its own; moka and fjall hand out values
//! the caller may keep (an `Arc` clone, a `Slice`).
//!
//! Not part of the root workspace (it is in its `exclude` list): CI never builds it.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::executor::block_on;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use ttlkv::store::MemoryStore;
use ttlkv::{Clock, Db, DbOptions, Durability, Lookup, PutOptions, SystemClock, WriteBatch};

const TTL_MS: u64 = 3_600_000;
const VALUE_LEN: usize = 100;
const ROUNDS: usize = 3;
/// Keys per write batch in the load (ttlkv and fjall; the maps have no batch call).
const LOAD_BATCH: usize = 1_000;
/// How often (in operations) ttlkv's host runs the maintenance that is due, as a timer would
/// (`examples/bench_native.rs` does the same): ttlkv has no threads of its own.
const MAINTENANCE_EVERY: usize = 16_384;
/// Every 20th operation of the mix is a put (5 %).
const PUT_EVERY: usize = 20;
const ZIPF_S: f64 = 0.99;

type Key = [u8; 16];

/// The data every store sees: the keys and, per phase, the sequence of key indexes.
struct Workload {
    keys: Vec<Key>,
    /// Every index once, shuffled: the load and the uniform gets.
    load_order: Vec<u32>,
    uniform: Vec<u32>,
    /// Zipf-distributed indexes (rank r is key r; the keys are random, so hot keys are scattered
    /// over the key space).
    zipf: Vec<u32>,
    mix: Vec<u32>,
}

impl Workload {
    fn new(n: usize) -> Self {
        let mut rng = StdRng::seed_from_u64(0x0074_746c_6b76);
        let keys: Vec<Key> = (0..n)
            .map(|_| {
                let mut k = [0u8; 16];
                rng.fill(&mut k);
                k
            })
            .collect();
        let mut load_order: Vec<u32> = (0..n as u32).collect();
        load_order.shuffle(&mut rng);
        let mut uniform: Vec<u32> = (0..n as u32).collect();
        uniform.shuffle(&mut rng);
        let cdf = zipf_cdf(n);
        let zipf = zipf_draws(&cdf, n, &mut rng);
        let mix = zipf_draws(&cdf, n, &mut rng);
        Workload {
            keys,
            load_order,
            uniform,
            zipf,
            mix,
        }
    }
}

/// The cumulative (unnormalised) weights 1 / (rank + 1)^s over `n` ranks.
fn zipf_cdf(n: usize) -> Vec<f64> {
    let mut total = 0.0;
    (0..n)
        .map(|r| {
            total += 1.0 / ((r + 1) as f64).powf(ZIPF_S);
            total
        })
        .collect()
}

fn zipf_draws(cdf: &[f64], count: usize, rng: &mut StdRng) -> Vec<u32> {
    let total = cdf[cdf.len() - 1];
    (0..count)
        .map(|_| {
            let u = rng.gen::<f64>() * total;
            cdf.partition_point(|&c| c < u).min(cdf.len() - 1) as u32
        })
        .collect()
}

/// The value of key `i` (or of a later put to it): its number, then filler.
fn value(i: u64) -> [u8; VALUE_LEN] {
    let mut v = [b'v'; VALUE_LEN];
    v[..8].copy_from_slice(&i.to_le_bytes());
    v
}

/// The same clock ttlkv reads, for the peers' own expiry checks.
fn now_ms() -> i64 {
    SystemClock.now_ms()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Load,
    UniformGets,
    ZipfGets,
    Mix,
}

const PHASES: [Phase; 4] = [Phase::Load, Phase::UniformGets, Phase::ZipfGets, Phase::Mix];

impl Phase {
    fn title(self) -> &'static str {
        match self {
            Phase::Load => {
                "load, random order (ttlkv and fjall in batches of 1,000, the others one by one)"
            }
            Phase::UniformGets => "uniform gets, every key once in random order",
            Phase::ZipfGets => "Zipf 0.99 gets",
            Phase::Mix => "mix, 95 % get / 5 % put, Zipf 0.99 keys",
        }
    }
}

/// One store under test. `run` does a phase and returns how many operations it did; `settle`
/// (untimed, after the load) finishes the background work the load left, so every store's gets
/// start from its settled shape.
trait Store {
    fn run(&mut self, phase: Phase, w: &Workload) -> usize;
    fn settle(&mut self);
}

/// Operations of `phase`: the key indexes in order, and whether operation j is a put.
fn ops_of(phase: Phase, w: &Workload) -> &[u32] {
    match phase {
        Phase::Load => &w.load_order,
        Phase::UniformGets => &w.uniform,
        Phase::ZipfGets => &w.zipf,
        Phase::Mix => &w.mix,
    }
}

fn is_put(phase: Phase, j: usize) -> bool {
    phase == Phase::Mix && j.is_multiple_of(PUT_EVERY)
}

/// Every get of these phases must find its key (nothing expires within the run).
fn check_hits(name: &str, gets: usize, hits: usize) {
    assert_eq!(hits, gets, "{name}: {} of {gets} gets missed", gets - hits);
}

// ---------------------------------------------------------------------------------------------

struct TtlKv {
    db: Db,
}

impl TtlKv {
    fn open() -> Self {
        let options = DbOptions {
            durability: Durability::Relaxed,
            // Compactions merge on a second core, as fjall's do on threads of its own.
            background_compaction: true,
            ..DbOptions::default()
        };
        let db = block_on(Db::open(MemoryStore::new(), SystemClock, options)).expect("open ttlkv");
        TtlKv { db }
    }
}

/// Run the maintenance that is due now, as a host's timer would.
async fn maintain(db: &Db) -> ttlkv::Result<()> {
    while db
        .maintenance_step()
        .await?
        .next_wakeup_ms
        .is_some_and(|t| t <= db.now().unwrap_or(i64::MAX))
    {}
    Ok(())
}

impl Store for TtlKv {
    fn run(&mut self, phase: Phase, w: &Workload) -> usize {
        let db = &self.db;
        let ops = ops_of(phase, w);
        let ttl = PutOptions::expire_after(TTL_MS);
        block_on(async {
            if phase == Phase::Load {
                for (b, chunk) in ops.chunks(LOAD_BATCH).enumerate() {
                    let mut batch = WriteBatch::new();
                    for &i in chunk {
                        batch.put_with_options(&w.keys[i as usize], &value(i as u64), ttl);
                    }
                    db.write(batch).await?;
                    if (b + 1) * LOAD_BATCH % MAINTENANCE_EVERY < LOAD_BATCH {
                        maintain(db).await?;
                    }
                }
                return Ok(ops.len());
            }
            let (mut gets, mut hits) = (0, 0);
            for (j, &i) in ops.iter().enumerate() {
                let k = &w.keys[i as usize];
                if is_put(phase, j) {
                    db.put_with_options(k, &value(i as u64 + j as u64), ttl)
                        .await?;
                } else {
                    gets += 1;
                    // The value lent (`get_with`), not copied out into a `Vec` of the caller's
                    // (`get`), as the `BTreeMap` lends its own. moka and fjall hand out values
                    // the caller may keep (an `Arc` clone, a `Slice`): a little more work than
                    // a loan, less than a copy.
                    let found = match db.get_with(k, |v| v.map(|v| black_box(v).len()))? {
                        Lookup::Now(found) => found,
                        Lookup::Later(search) => search.await?,
                    };
                    if found.is_some() {
                        hits += 1;
                    }
                }
                if phase == Phase::Mix && (j + 1) % MAINTENANCE_EVERY == 0 {
                    maintain(db).await?;
                }
            }
            check_hits("ttlkv", gets, hits);
            Ok::<_, ttlkv::Error>(ops.len())
        })
        .expect("ttlkv")
    }

    fn settle(&mut self) {
        block_on(async {
            self.db.flush().await?;
            self.db.compact().await
        })
        .expect("settle ttlkv");
    }
}

// ---------------------------------------------------------------------------------------------

/// fjall on a tmpfs directory. A value is its expiry (ms since the epoch, 8 bytes big-endian)
/// followed by the value; a get checks the expiry.
struct Fjall {
    // Dropped in this order: the keyspace and the database, then the directory.
    keyspace: fjall::Keyspace,
    db: fjall::Database,
    _dir: RemoveOnDrop,
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Fjall {
    fn open(round: usize) -> Self {
        let dir = PathBuf::from(format!(
            "/dev/shm/ttlkv-bench-native-{}-{round}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let guard = RemoveOnDrop(dir.clone());
        let db = fjall::Database::builder(&dir).open().expect("open fjall");
        let keyspace = db
            .keyspace("bench", fjall::KeyspaceCreateOptions::default)
            .expect("fjall keyspace");
        Fjall {
            keyspace,
            db,
            _dir: guard,
        }
    }
}

fn with_expiry(expire_at: i64, v: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + v.len());
    out.extend_from_slice(&expire_at.to_be_bytes());
    out.extend_from_slice(v);
    out
}

/// The value of a stored fjall entry if it has not expired.
fn live_value(stored: &[u8], now: i64) -> Option<&[u8]> {
    let (at, v) = stored.split_at_checked(8)?;
    let at = i64::from_be_bytes(at.try_into().ok()?);
    (at > now).then_some(v)
}

impl Store for Fjall {
    fn run(&mut self, phase: Phase, w: &Workload) -> usize {
        let ops = ops_of(phase, w);
        if phase == Phase::Load {
            for chunk in ops.chunks(LOAD_BATCH) {
                let expire_at = now_ms() + TTL_MS as i64;
                let mut batch = self.db.batch();
                for &i in chunk {
                    let v = with_expiry(expire_at, &value(i as u64));
                    batch.insert(&self.keyspace, w.keys[i as usize], v);
                }
                batch.commit().expect("fjall batch");
            }
            return ops.len();
        }
        let (mut gets, mut hits) = (0, 0);
        for (j, &i) in ops.iter().enumerate() {
            let k = &w.keys[i as usize];
            let now = now_ms();
            if is_put(phase, j) {
                let v = with_expiry(now + TTL_MS as i64, &value(i as u64 + j as u64));
                self.keyspace.insert(*k, v).expect("fjall insert");
            } else {
                gets += 1;
                if let Some(stored) = self.keyspace.get(k).expect("fjall get") {
                    if let Some(v) = live_value(&stored, now) {
                        black_box(v);
                        hits += 1;
                    }
                }
            }
        }
        check_hits("fjall", gets, hits);
        ops.len()
    }

    fn settle(&mut self) {
        self.keyspace
            .rotate_memtable_and_wait()
            .expect("fjall flush");
        self.keyspace.major_compact().expect("fjall compaction");
    }
}

// ---------------------------------------------------------------------------------------------

/// The ceiling: an ordered map with an expiry check, nothing else (no log, no copy handed back).
struct Ceiling {
    map: BTreeMap<Key, (i64, Vec<u8>)>,
}

impl Store for Ceiling {
    fn run(&mut self, phase: Phase, w: &Workload) -> usize {
        let ops = ops_of(phase, w);
        let (mut gets, mut hits) = (0, 0);
        for (j, &i) in ops.iter().enumerate() {
            let k = w.keys[i as usize];
            let now = now_ms();
            if phase == Phase::Load || is_put(phase, j) {
                let n = if phase == Phase::Load {
                    i as u64
                } else {
                    i as u64 + j as u64
                };
                self.map.insert(k, (now + TTL_MS as i64, value(n).to_vec()));
            } else {
                gets += 1;
                if let Some((at, v)) = self.map.get(&k) {
                    if *at > now {
                        black_box(v);
                        hits += 1;
                    }
                }
            }
        }
        if phase != Phase::Load {
            check_hits("BTreeMap", gets, hits);
        }
        ops.len()
    }

    fn settle(&mut self) {}
}

// ---------------------------------------------------------------------------------------------

/// moka's concurrent cache with a 1 h time to live (its own expiry), bounded at 2 N entries
/// like the JS peers. Values are `Arc<[u8]>`: a get hands back a shared reference, not a copy.
struct Moka {
    cache: moka::sync::Cache<Key, Arc<[u8]>>,
}

impl Moka {
    fn new(n: usize) -> Self {
        let cache = moka::sync::Cache::builder()
            .max_capacity(2 * n as u64)
            .time_to_live(Duration::from_millis(TTL_MS))
            .build();
        Moka { cache }
    }
}

impl Store for Moka {
    fn run(&mut self, phase: Phase, w: &Workload) -> usize {
        let ops = ops_of(phase, w);
        let (mut gets, mut hits) = (0, 0);
        for (j, &i) in ops.iter().enumerate() {
            let k = w.keys[i as usize];
            if phase == Phase::Load || is_put(phase, j) {
                let n = if phase == Phase::Load {
                    i as u64
                } else {
                    i as u64 + j as u64
                };
                self.cache.insert(k, Arc::from(&value(n)[..]));
            } else {
                gets += 1;
                if let Some(v) = self.cache.get(&k) {
                    black_box(&v);
                    hits += 1;
                }
            }
        }
        if phase != Phase::Load {
            check_hits("moka", gets, hits);
        }
        ops.len()
    }

    fn settle(&mut self) {
        self.cache.run_pending_tasks();
    }
}

// ---------------------------------------------------------------------------------------------

const NAMES: [&str; 4] = ["ttlkv", "fjall", "BTreeMap", "moka"];
const TTLKV: usize = 0;

fn open_all(n: usize, round: usize) -> Vec<Box<dyn Store>> {
    vec![
        Box::new(TtlKv::open()),
        Box::new(Fjall::open(round)),
        Box::new(Ceiling {
            map: BTreeMap::new(),
        }),
        Box::new(Moka::new(n)),
    ]
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let m = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[m]
    } else {
        (xs[m - 1] + xs[m]) / 2.0
    }
}

fn min_max(xs: &[f64]) -> (f64, f64) {
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (min, max)
}

/// 1234567.8 -> "1,234,568".
fn thousands(x: f64) -> String {
    let digits = format!("{:.0}", x);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn parse_count() -> usize {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut n = 1_000_000;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--count" => {
                n = it
                    .next()
                    .and_then(|s| s.replace(['_', ','], "").parse().ok())
                    .filter(|&n: &usize| n > 0)
                    .unwrap_or_else(|| usage());
            }
            _ => usage(),
        }
    }
    n
}

fn usage() -> ! {
    eprintln!("usage: cargo run --release --manifest-path bench/native/Cargo.toml [-- --count N]");
    std::process::exit(2)
}

#[allow(clippy::disallowed_methods, reason = "benchmarks measure wall time")]
fn main() {
    let n = parse_count();
    let cores = std::thread::available_parallelism().map_or(0, |c| c.get());
    println!(
        "ttlkv native side by side: {} keys of 16 random bytes (seeded), {VALUE_LEN}-byte values, \
         1 h TTL; {ROUNDS} rounds, {cores} cores",
        thousands(n as f64)
    );
    println!(
        "stores: ttlkv (MemoryStore, Durability::Relaxed, default options but compactions merged \
         on a thread of their own (background_compaction), maintenance every \
         {MAINTENANCE_EVERY} ops, gets by get_with: the value lent, not copied); \
         fjall (tmpfs, default options, expiry prefix checked on get); \
         BTreeMap with expiry check (the ceiling); moka sync::Cache (time_to_live 1 h)"
    );
    println!(
        "after the load, untimed: ttlkv flush + compact, fjall memtable flush + major compaction, \
         moka run_pending_tasks; fjall's flushes and compactions and ttlkv's compactions run on \
         threads of their own, and a load's time stops when its last write returns"
    );
    let t = Instant::now();
    let w = Workload::new(n);
    println!("workload built in {:.1} s\n", t.elapsed().as_secs_f64());

    // rates[phase][store][round], in ops/s.
    let mut rates = vec![vec![Vec::new(); NAMES.len()]; PHASES.len()];
    for round in 0..ROUNDS {
        let mut stores = open_all(n, round);
        let mut order: Vec<usize> = (0..NAMES.len()).collect();
        order.rotate_left(round % NAMES.len());
        let names: Vec<&str> = order.iter().map(|&s| NAMES[s]).collect();
        println!("round {}/{ROUNDS} (order: {})", round + 1, names.join(", "));
        for (p, &phase) in PHASES.iter().enumerate() {
            let mut line = Vec::new();
            for &s in &order {
                let started = Instant::now();
                let ops = stores[s].run(phase, &w);
                let secs = started.elapsed().as_secs_f64();
                let rate = ops as f64 / secs;
                rates[p][s].push(rate);
                line.push(format!("{} {}", NAMES[s], thousands(rate)));
                if phase == Phase::Load {
                    stores[s].settle();
                }
            }
            println!("  {:<14} {} ops/s", phase_short(phase), line.join(", "));
        }
        drop(stores);
    }

    println!(
        "\nmedian of {ROUNDS} rounds; ratio = ttlkv ÷ peer in the same round (above 1 = ttlkv \
         faster), median [min–max]"
    );
    for (p, &phase) in PHASES.iter().enumerate() {
        println!("\n{}", phase.title());
        for (s, name) in NAMES.iter().enumerate() {
            let (lo, hi) = min_max(&rates[p][s]);
            let spread = format!("({}–{})", thousands(lo), thousands(hi));
            let mut line = format!(
                "  {:<9} {:>11} ops/s {:<25}",
                name,
                thousands(median(rates[p][s].clone())),
                spread
            );
            if s != TTLKV {
                let ratios: Vec<f64> = (0..ROUNDS)
                    .map(|r| rates[p][TTLKV][r] / rates[p][s][r])
                    .collect();
                let (lo, hi) = min_max(&ratios);
                line += &format!(
                    " ttlkv ÷ {name}: {:.2}× [{:.2}–{:.2}]",
                    median(ratios.clone()),
                    lo,
                    hi
                );
            }
            println!("{line}");
        }
    }
}

fn phase_short(phase: Phase) -> &'static str {
    match phase {
        Phase::Load => "load",
        Phase::UniformGets => "uniform gets",
        Phase::ZipfGets => "Zipf gets",
        Phase::Mix => "mix 95/5",
    }
}
