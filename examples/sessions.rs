//! A session store on the in-memory page store, on the system clock.
//!
//! Run with `cargo run --example sessions`. It logs users in with a 30-minute sliding session,
//! refreshes one, logs one out, lists the live sessions, then shows a short-lived one-time code
//! expiring on its own, and what the LSM looks like after a flush and a compaction.

use std::time::Duration;

use futures::executor::block_on;
use ttlkv::store::MemoryStore;
use ttlkv::{Db, DbOptions, ExpireCondition, PutCondition, PutOptions, ScanOptions, SystemClock};

const SESSION_TTL_MS: u64 = 30 * 60 * 1000;

fn main() -> ttlkv::Result<()> {
    block_on(run())
}

async fn run() -> ttlkv::Result<()> {
    let store = MemoryStore::new();
    let options = DbOptions {
        default_ttl_ms: Some(SESSION_TTL_MS),
        ..DbOptions::default()
    };
    let db = Db::open(store.clone(), SystemClock, options.clone()).await?;

    println!("== log in three users (default TTL: 30 min)");
    for user in ["alice", "bob", "carol"] {
        let key = format!("session:{user}");
        let value = format!(r#"{{"user":"{user}","cart":[]}}"#);
        // NX: a second login does not clobber a live session.
        let created = db
            .put_with_options(
                key.as_bytes(),
                value.as_bytes(),
                PutOptions::from(PutCondition::IfAbsent),
            )
            .await?;
        println!(
            "  {key}: created={created}, ttl={} ms",
            db.ttl(key.as_bytes()).await?
        );
    }

    println!("== bob is active: slide his session (expire only if it makes it later: GT)");
    std::thread::sleep(Duration::from_millis(20));
    let gt = ExpireCondition {
        gt: true,
        ..ExpireCondition::default()
    };
    let slid = db.expire(b"session:bob", SESSION_TTL_MS, gt).await?;
    println!(
        "  refreshed={slid}, ttl={} ms",
        db.ttl(b"session:bob").await?
    );

    println!("== carol logs out");
    println!("  deleted={}", db.delete(b"session:carol").await?);

    println!("== live sessions");
    let prefix = ScanOptions {
        prefix: Some(b"session:".to_vec()),
        ..ScanOptions::default()
    };
    for e in db.scan(&prefix).await? {
        println!(
            "  {} = {}",
            String::from_utf8_lossy(&e.key),
            String::from_utf8_lossy(&e.value)
        );
    }

    println!("== a one-time code that lives 300 ms");
    db.put_with_options(b"otp:alice", b"493817", PutOptions::expire_after(300))
        .await?;
    println!(
        "  now:         {:?}",
        db.get(b"otp:alice").await?.map(String::from_utf8)
    );
    std::thread::sleep(Duration::from_millis(350));
    println!(
        "  after 350ms: {:?} (ttl {})",
        db.get(b"otp:alice").await?,
        db.ttl(b"otp:alice").await?
    );

    println!("== 10,000 cache entries with a 200 ms TTL, flushed to an SST");
    for i in 0..10_000u32 {
        let key = format!("cache:{i:05}");
        db.put_with_options(key.as_bytes(), &[b'x'; 100], PutOptions::expire_after(200))
            .await?;
    }
    db.flush().await?;
    print_levels(&db);
    println!("  stored bytes: {}", store.stored_bytes());
    std::thread::sleep(Duration::from_millis(250));
    db.compact().await?;
    println!("== after they expired and a compaction (TTL filter):");
    print_levels(&db);
    println!("  stored bytes: {}", store.stored_bytes());

    db.close().await?;
    let db = Db::open(store, SystemClock, options).await?;
    println!(
        "== reopened: bob's session is still there: {}",
        db.has(b"session:bob").await?
    );
    Ok(())
}

fn print_levels(db: &Db) {
    for level in db.stats().levels {
        for sst in level.ssts {
            println!(
                "  L{} sst {}: {} rows, {} bytes, expiry percentiles {:?}",
                level.level, sst.id, sst.rows, sst.bytes, sst.expiry_percentiles
            );
        }
    }
}
