//! Every SST carries a key filter: a point read of a key an SST does not hold reads none of its
//! pages (bar the filter's rare false positives), also after a reopen, when the filters come
//! back from the metadata pages. The page cache is off and the store hands out copies only (no
//! shared pages, which a read keeps with its SST), so every page read reaches the store.

mod common;

use common::{reopen, run, T0};
use ttlkv::store::MemoryStore;
use ttlkv::{Db, DbOptions, FakeClock};

const SSTS: u32 = 4;
const KEYS_PER_SST: u32 = 250;

fn options() -> DbOptions {
    DbOptions {
        page_cache_bytes: 0,
        l0_compaction_trigger: 100,
        ..DbOptions::default()
    }
}

/// Four L0 SSTs whose key ranges all overlap: SST `s` holds `key-{i}` for `i % 4 == s`.
fn four_overlapping_ssts() -> (Db, MemoryStore, FakeClock) {
    let store = MemoryStore::new();
    store.set_copies_only(true);
    let clock = FakeClock::new(T0);
    let db = run(Db::open(store.clone(), clock.clone(), options())).unwrap();
    run(async {
        for s in 0..SSTS {
            for i in 0..KEYS_PER_SST {
                let key = format!("key-{:05}", i * SSTS + s);
                db.put(key.as_bytes(), b"value").await.unwrap();
            }
            db.flush().await.unwrap();
        }
    });
    assert_eq!(db.stats().levels[0].ssts.len(), SSTS as usize);
    (db, store, clock)
}

fn reads_for(db: &Db, store: &MemoryStore, keys: impl Iterator<Item = String>) -> u64 {
    store.reset_counters();
    run(async {
        for key in keys {
            db.get(key.as_bytes()).await.unwrap();
        }
    });
    store.page_reads()
}

/// Keys inside every SST's range that no SST holds.
fn absent_keys() -> impl Iterator<Item = String> {
    (0..SSTS * KEYS_PER_SST - 1).map(|i| format!("key-{i:05}-absent"))
}

fn present_keys() -> impl Iterator<Item = String> {
    (0..SSTS * KEYS_PER_SST).map(|i| format!("key-{i:05}"))
}

#[test]
fn a_read_of_an_absent_key_reads_almost_no_pages() {
    let (db, store, clock) = four_overlapping_ssts();
    let lookups = u64::from(SSTS * KEYS_PER_SST - 1);
    // Without filters every lookup would read a page of each of the 4 SSTs: 3,996 reads.
    // With them, about 1 % of the 4 probes per key pass: some 40.
    let reads = reads_for(&db, &store, absent_keys());
    assert!(
        reads < lookups / 10,
        "{reads} page reads for {lookups} absent keys"
    );
    run(db.close()).unwrap();

    let db = reopen(&store, &clock, options());
    let reads = reads_for(&db, &store, absent_keys());
    assert!(reads < lookups / 10, "after a reopen: {reads} page reads");
}

#[test]
fn a_read_of_a_present_key_reads_the_one_sst_that_holds_it() {
    let (db, store, _clock) = four_overlapping_ssts();
    let lookups = u64::from(SSTS * KEYS_PER_SST);
    // One page read per key, plus the rare false positive in a newer SST.
    let reads = reads_for(&db, &store, present_keys());
    assert!(reads >= lookups, "{reads}");
    assert!(
        reads < lookups + lookups / 10,
        "{reads} page reads for {lookups} keys"
    );
    run(async {
        for key in present_keys() {
            assert_eq!(
                db.get(key.as_bytes()).await.unwrap().as_deref(),
                Some(&b"value"[..])
            );
        }
    });
}
