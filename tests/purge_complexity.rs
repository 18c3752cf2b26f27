//! Complexity of the purge: removing 1,000 due keys touches a number of pages bounded by the
//! number of due keys, not by the number of keys stored (1,000 / 100,000 / 1,000,000), because it
//! walks the expiry index from its oldest entry and stops at the first that is not due, then
//! reads each due key's row once. Due keys are spread evenly over the key space (the worst case:
//! no two share a page once the store is large). Pages are counted at the store with a cold
//! cache (the database is reopened first); times are printed for context only.

mod common;
use common::*;

use ttlkv::store::{MemoryStore, PageKind};
use ttlkv::{Db, DbOptions, Durability, FakeClock, PutOptions, WriteBatch};

const DUE: u32 = 1_000;

struct Measured {
    total: u32,
    pages: u64,
    full_scan_pages: u64,
    micros: u128,
}

/// Options for loading many keys at once: relaxed, and a memtable that holds them all.
fn bulk_load() -> DbOptions {
    DbOptions {
        durability: Durability::Relaxed,
        memtable_flush_bytes: 32 << 20,
        memtable_stall_bytes: 64 << 20,
        ..DbOptions::default()
    }
}

async fn measure(total: u32) -> Measured {
    let options = bulk_load();
    let store = MemoryStore::new();
    let clock = FakeClock::new(T0);
    let db = Db::open(store.clone(), clock.clone(), options.clone())
        .await
        .unwrap();
    // Every key has a TTL; DUE of them, spread evenly over the key space, expire first.
    let stride = total / DUE;
    let mut batch = WriteBatch::new();
    for i in 0..total {
        let ttl = if i % stride == 0 { 1_000 } else { 86_400_000 };
        batch.put_with_options(&i.to_be_bytes(), &[b'v'; 16], PutOptions::expire_after(ttl));
        if batch.len() == 10_000 {
            db.write(std::mem::take(&mut batch)).await.unwrap();
        }
    }
    db.write(batch).await.unwrap();
    db.compact().await.unwrap();
    db.close().await.unwrap();

    // Cold: a fresh open has no page cached.
    let db = Db::open(store.clone(), clock.clone(), options.clone())
        .await
        .unwrap();
    clock.advance(1_000);
    store.reset_counters();
    #[allow(
        clippy::disallowed_methods,
        reason = "printed for context, never asserted"
    )]
    let started = std::time::Instant::now();
    let report = db.purge_expired(DUE as usize + 1).await.unwrap();
    let micros = started.elapsed().as_micros();
    assert_eq!(report.removed, DUE as usize);
    assert!(!report.more_due);
    let pages = store.page_reads();
    // What a purge without an index reads: every data page (a full scan).
    let full_scan_pages = store.page_count_of(PageKind::SstData) as u64;
    assert_eq!(
        db.scan(&Default::default()).await.unwrap().len(),
        (total - DUE) as usize
    );
    Measured {
        total,
        pages,
        full_scan_pages,
        micros,
    }
}

#[test]
fn purging_a_thousand_due_keys_touches_pages_independent_of_the_total() {
    let results: Vec<Measured> = [1_000, 100_000, 1_000_000]
        .into_iter()
        .map(|t| run(measure(t)))
        .collect();
    for m in &results {
        println!(
            "purge complexity: {DUE} due among {:>9} keys: {:>5} pages read ({:.1} ms); a full scan reads {:>6} pages",
            m.total,
            m.pages,
            m.micros as f64 / 1000.0,
            m.full_scan_pages
        );
    }
    let (mid, big) = (&results[1], &results[2]);
    // Bounded by the work, not the data: the index pages of the due entries plus at most one
    // data page per due key, whatever the total (fewer when due keys share pages).
    for m in &results {
        assert!(
            m.pages <= u64::from(DUE) + 50,
            "{} pages for {} keys",
            m.pages,
            m.total
        );
    }
    // A full scan grows with the data; the purge does not.
    assert!(big.full_scan_pages >= 8 * mid.full_scan_pages);
    assert!(
        big.pages * 3 < big.full_scan_pages,
        "far below a full scan at 1M"
    );
}

/// Expiry-index rows each slice of a purge walks, for `total` keys that all expire in one
/// millisecond, purged in slices of `slice` (each slice ends inside that millisecond, so it
/// removes the entries it handled with tombstones).
async fn slices_of_one_millisecond(total: u32, slice: usize) -> Vec<u64> {
    let clock = FakeClock::new(T0);
    let db = Db::open(MemoryStore::new(), clock.clone(), bulk_load())
        .await
        .unwrap();
    let at = T0 + 1_000;
    let mut batch = WriteBatch::new();
    for i in 0..total {
        let expire_at = PutOptions {
            ttl: ttlkv::Ttl::ExpireAt(at),
            ..PutOptions::default()
        };
        batch.put_with_options(&i.to_be_bytes(), b"v", expire_at);
    }
    db.write(batch).await.unwrap();
    db.compact().await.unwrap();
    clock.set(at + 1);
    let mut walked = Vec::new();
    let mut removed = 0;
    loop {
        let before = db.stats().purge_rows_walked;
        let report = db.purge_expired(slice).await.unwrap();
        walked.push(db.stats().purge_rows_walked - before);
        removed += report.removed;
        if !report.more_due {
            break;
        }
    }
    assert_eq!(removed, total as usize);
    walked
}

#[test]
fn purging_keys_that_share_one_expiry_millisecond_costs_each_slice_the_same() {
    let walked = run(slices_of_one_millisecond(20_000, 1_000));
    println!(
        "purge complexity: one expiry ms, 20,000 keys in slices of 1,000: index rows walked per slice {walked:?}"
    );
    // A slice that walked past the earlier slices' entries would walk ~20,000 by the end.
    let worst = *walked.iter().max().unwrap();
    assert!(
        worst <= 1_001,
        "index rows walked per slice grow: {walked:?}"
    );
}
