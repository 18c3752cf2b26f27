//! A quick native figure: 1M puts and 1M gets of 16-byte keys and 100-byte values on the
//! in-memory page store (LevelDB db_bench's shape). Not a test: run it in release,
//! `cargo run --release --example bench_native [count]`. Printed times are for context; the
//! ratios against peers live in the npm benchmark suite.

use std::time::Instant;

use futures::executor::block_on;
use ttlkv::store::MemoryStore;
use ttlkv::{Db, DbOptions, Durability, PutOptions, SystemClock, WriteBatch};

fn key(i: u64) -> [u8; 16] {
    // Spread keys over the key space like a hash would (a multiplicative scramble).
    let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&x.to_be_bytes());
    k[8..].copy_from_slice(&i.to_be_bytes());
    k
}

fn rate(n: u64, secs: f64) -> String {
    format!("{:>10.0} ops/s ({:.2} s)", n as f64 / secs, secs)
}

#[allow(clippy::disallowed_methods, reason = "benchmarks measure wall time")]
fn main() -> ttlkv::Result<()> {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let value = [b'v'; 100];
    block_on(async {
        for durability in [Durability::Relaxed, Durability::Durable] {
            let store = MemoryStore::new();
            let options = DbOptions {
                durability,
                ..DbOptions::default()
            };
            let db = Db::open(store.clone(), SystemClock, options).await?;
            let t = Instant::now();
            for i in 0..n {
                db.put_with_options(&key(i), &value, PutOptions::expire_after(3_600_000))
                    .await?;
                if i % 16_384 == 0 {
                    // What a host's timer would do: run maintenance until nothing is due.
                    while db
                        .maintenance_step()
                        .await?
                        .next_wakeup_ms
                        .is_some_and(|t| t <= db.now().unwrap())
                    {}
                }
            }
            db.flush().await?;
            let put_secs = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let mut found = 0u64;
            for i in 0..n {
                let j = (i.wrapping_mul(7919)) % n;
                if db.get(&key(j)).await?.is_some() {
                    found += 1;
                }
            }
            let get_secs = t.elapsed().as_secs_f64();
            assert_eq!(found, n);
            println!("{durability:?} puts (one call each): {}", rate(n, put_secs));
            println!("{durability:?} gets (random):        {}", rate(n, get_secs));
            let levels: Vec<usize> = db.stats().levels.iter().map(|l| l.ssts.len()).collect();
            println!(
                "  SSTs per level {levels:?}, stored {} MiB",
                store.stored_bytes() >> 20
            );
        }
        let db = Db::open(MemoryStore::new(), SystemClock, DbOptions::default()).await?;
        let t = Instant::now();
        for chunk in 0..n / 1_000 {
            let mut batch = WriteBatch::new();
            for i in chunk * 1_000..(chunk + 1) * 1_000 {
                batch.put(&key(i), &value);
            }
            db.write(batch).await?;
        }
        println!(
            "Durable puts in batches of 1000:  {}",
            rate(n, t.elapsed().as_secs_f64())
        );
        Ok(())
    })
}
