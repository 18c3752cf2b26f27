//! What the engine holds in memory besides the store's pages, measured with a counting allocator:
//! a burst of writes leaves nothing behind once it is flushed, a flush or compaction holds each
//! SST it writes once (in wasm, memory once grown is never given back, so a peak is paid for good),
//! and a closed handle holds nothing of the data.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

use common::{fresh, relaxed, reopen, run};
use ttlkv::{DbOptions, ErrorKind, PutOptions, WriteBatch};

/// Counts the bytes allocated now and the most ever allocated at once.
struct CountingAllocator;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
        PEAK.fetch_max(live, Relaxed);
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: the caller's contract for `dealloc` is passed on unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// The counters are process-wide: the tests here take turns.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const KEYS: usize = 10_000;
const VALUE_LEN: usize = 1_000;

/// Writes `KEYS` 1,000-byte values in batches of 1,000 without ever yielding, so the relaxed WAL
/// collects the whole burst before its first commit.
fn write_burst(db: &ttlkv::Db) {
    run(async {
        for start in (0..KEYS).step_by(1_000) {
            let mut batch = WriteBatch::new();
            for i in start..start + 1_000 {
                let value = vec![(i % 251) as u8; VALUE_LEN];
                batch.put_with_options(
                    format!("session:{i:08}").as_bytes(),
                    &value,
                    PutOptions::expire_after(3_600_000),
                );
            }
            db.write(batch).await.unwrap();
        }
    });
}

#[test]
fn after_a_burst_is_flushed_the_engine_holds_little_beyond_the_stored_pages() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let before = LIVE.load(Relaxed);
    let (db, store, _clock) = fresh(relaxed());
    write_burst(&db);
    run(db.flush()).unwrap();
    let held = LIVE.load(Relaxed) - before;
    let stored = store.stored_bytes();
    let beyond = held.saturating_sub(stored);
    // About 10 MB were written; what is left beyond the pages is metadata, a few KiB per SST.
    assert!(
        beyond < 1024 * 1024,
        "the engine holds {beyond} bytes beyond the {stored} stored"
    );
}

#[test]
fn a_full_compaction_holds_its_output_once() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (db, store, _clock) = fresh(relaxed());
    write_burst(&db);
    run(db.flush()).unwrap();
    let stored = store.stored_bytes();
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    run(db.compact()).unwrap();
    let peak = PEAK.load(Relaxed) - before;
    // The inputs stay in the store until the commit; the output (about as large again) is the
    // least a compaction adds at its peak. A second copy of it would add as much again.
    assert!(
        peak < stored + stored / 8,
        "the compaction's peak added {peak} bytes to the {stored} stored"
    );
}

#[test]
fn a_full_compaction_of_overlapping_ssts_never_holds_a_second_copy_of_the_data() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Ten L0 SSTs of scattered keys, each overlapping every other: the full compaction must
    // merge all of them, and a merge of everything at once would hold its output (the size of
    // the data) beside its inputs until one commit.
    let (db, store, _clock) = fresh(DbOptions {
        sst_target_bytes: 256 * 1024,
        level1_target_bytes: 1024 * 1024,
        ..relaxed()
    });
    let scattered = |i: usize| (i * 7_919) % KEYS;
    run(async {
        for start in (0..KEYS).step_by(1_000) {
            let mut batch = WriteBatch::new();
            for i in start..start + 1_000 {
                let value = vec![(scattered(i) % 251) as u8; VALUE_LEN];
                batch.put_with_options(
                    format!("session:{:08}", scattered(i)).as_bytes(),
                    &value,
                    PutOptions::expire_after(3_600_000),
                );
            }
            db.write(batch).await.unwrap();
            db.flush().await.unwrap();
        }
    });
    assert_eq!(db.stats().levels[0].ssts.len(), KEYS / 1_000);
    let stored = store.stored_bytes();
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    run(db.compact()).unwrap();
    let peak = PEAK.load(Relaxed) - before;
    println!("full compaction of {stored} stored bytes: peak +{peak}");
    assert!(
        peak < stored / 2,
        "the compaction's peak added {peak} bytes to the {stored} stored"
    );
    // Done in steps, and still a full compaction: one level, every key once, each value intact.
    let stats = db.stats();
    let levels: Vec<_> = stats.levels.iter().filter(|l| !l.ssts.is_empty()).collect();
    assert_eq!(levels.len(), 1, "every SST ends in one level");
    let after = store.stored_bytes();
    // The same rows in smaller SSTs (a little more metadata); no input's pages are left.
    assert!(
        after < stored + stored / 100,
        "{after} bytes stored after, {stored} before"
    );
    run(async {
        for i in 0..KEYS {
            let value = db.get(format!("session:{i:08}").as_bytes()).await.unwrap();
            assert_eq!(value, Some(vec![(i % 251) as u8; VALUE_LEN]));
        }
    });
}

#[test]
fn a_long_l0_is_merged_in_bounded_steps_when_no_maintenance_runs() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // No maintenance runs: each 1 MB batch of scattered keys fills the memtable past its stall
    // limit, so the write flushes it, and at 3 × 4 L0 SSTs (each overlapping every other) the
    // write compacts. A merge of the whole of L0 at once would hold as much again as L0.
    let (db, store, _clock) = fresh(DbOptions {
        memtable_flush_bytes: 512 * 1024,
        memtable_stall_bytes: 1024 * 1024,
        l0_compaction_trigger: 4,
        sst_target_bytes: 256 * 1024,
        level1_target_bytes: 1024 * 1024,
        ..relaxed()
    });
    const BATCHES: usize = 24;
    let scattered = |i: usize| (i * 7_919) % (BATCHES * 1_000);
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let mut highest_beyond = 0usize;
    run(async {
        for start in (0..BATCHES * 1_000).step_by(1_000) {
            let mut batch = WriteBatch::new();
            for i in start..start + 1_000 {
                batch.put(
                    format!("session:{:08}", scattered(i)).as_bytes(),
                    &vec![(scattered(i) % 251) as u8; VALUE_LEN],
                );
            }
            let stored_before = store.stored_bytes();
            PEAK.store(LIVE.load(Relaxed), Relaxed);
            db.write(batch).await.unwrap();
            // What this write held at its peak beyond what was stored before it.
            let peak = PEAK.load(Relaxed) - before;
            highest_beyond = highest_beyond.max(peak.saturating_sub(stored_before));
        }
    });
    let stored = store.stored_bytes();
    let l0 = db.stats().levels[0].ssts.len();
    println!("{BATCHES} MB written, {stored} stored, L0 {l0}: a write held at most {highest_beyond} beyond the stored");
    assert!(l0 < 12, "the writes compacted L0 ({l0} SSTs left)");
    // The memtable and its WAL copy (about 2.5 MB), a flush's SST (1 MB) and the output of one
    // merge: L0's oldest SSTs up to twice L1's target with an L1 within twice its target (about
    // 4 MB): about 7 MB. Merging the 12 L0 SSTs and L1 at once held 16.3 MB here.
    assert!(
        highest_beyond < 12 * 1024 * 1024,
        "a write held {highest_beyond} bytes beyond the {stored} stored"
    );
    run(async {
        for i in (0..BATCHES * 1_000).step_by(97) {
            let value = db.get(format!("session:{i:08}").as_bytes()).await.unwrap();
            assert_eq!(value, Some(vec![(i % 251) as u8; VALUE_LEN]));
        }
    });
}

/// The engine's live bytes added by reading every key once (all from SSTs) on a fresh database
/// whose store shares its pages or, with `copies_only`, hands out copies.
fn held_by_reading_everything(copies_only: bool) -> usize {
    let (db, store, _clock) = fresh(relaxed());
    store.set_copies_only(copies_only);
    write_burst(&db);
    run(db.flush()).unwrap();
    run(db.compact()).unwrap();
    let before = LIVE.load(Relaxed);
    run(async {
        for i in 0..KEYS {
            let value = db.get(format!("session:{i:08}").as_bytes()).await.unwrap();
            assert_eq!(value.map(|v| v.len()), Some(VALUE_LEN));
        }
    });
    LIVE.load(Relaxed).saturating_sub(before)
}

#[test]
fn reads_from_memory_storage_hold_no_second_copy_of_its_pages() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let in_place = held_by_reading_everything(false);
    // What reads add is the search aids (each page's `KeyPrefixes`, eight bytes a row, for the
    // pages searched before an SST's point index is built; the point index, 10 to 20 bytes a
    // row) and the row cache (at most its budget), not a copy of the pages (about 10 MB).
    assert!(
        in_place < 64 * 1024 + 24 * KEYS + relaxed().row_cache_bytes,
        "reading every key of a sharing store left {in_place} bytes held"
    );
    // The same reads through copies fill the page cache (8 MiB by default) with what the store
    // already holds: the second copy that reading in place avoids.
    let copied = held_by_reading_everything(true);
    assert!(
        copied > 4 * 1024 * 1024,
        "reading every key through copies left only {copied} bytes held"
    );
}

#[test]
fn a_closed_handle_holds_no_data_and_lets_go_of_the_hooks_it_was_given() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let before = LIVE.load(Relaxed);
    let (db, store, clock) = fresh(relaxed());
    // Everywhere a handle keeps data: SSTs read once (the row cache, the point index), and a
    // memtable of overwrites on top.
    write_burst(&db);
    run(db.flush()).unwrap();
    run(async {
        for i in 0..KEYS {
            db.get(format!("session:{i:08}").as_bytes()).await.unwrap();
        }
    });
    write_burst(&db);
    // Hooks that hold something of the app's: in JavaScript, a closure that reaches the handle
    // itself, which nothing could collect while the engine held the closure.
    let app = Rc::new(());
    let (in_hook, in_listener) = (app.clone(), app.clone());
    db.set_expire_hook(Some(Rc::new(move |_| {
        let _app = &in_hook;
        None
    })));
    db.set_reclaim_listener(Some(Rc::new(move |_| {
        let _app = &in_listener;
    })));
    assert_eq!(Rc::strong_count(&app), 3);

    run(db.close()).unwrap();

    let held = LIVE.load(Relaxed).saturating_sub(before);
    let stored = store.stored_bytes();
    let beyond = held.saturating_sub(stored);
    println!("a closed handle: {beyond} bytes held beyond the {stored} stored");
    // About 20 MB were written (10 MB in SSTs, 10 MB in the WAL); a handle that kept its
    // memtable, caches and SSTs would hold 15 MB and more beyond the pages.
    assert!(
        beyond < 512 * 1024,
        "the closed handle holds {beyond} bytes beyond the {stored} stored"
    );
    assert_eq!(
        Rc::strong_count(&app),
        1,
        "the hooks were let go of at close"
    );
    let e = run(db.get(b"session:00000001")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
    // The store keeps everything for a reopen: the overwrites (in its WAL) and the SSTs.
    let again = reopen(&store, &clock, relaxed());
    let value = run(again.get(b"session:00000007")).unwrap();
    assert_eq!(value, Some(vec![7; VALUE_LEN]));
    run(again.close()).unwrap();
    // Nor does the closed handle keep the store: once its other holders are gone (for a
    // memory database, its registry at `destroy`), its pages are freed, the handles kept.
    drop(store);
    let kept = LIVE.load(Relaxed).saturating_sub(before);
    assert!(
        kept < 512 * 1024,
        "two closed handles hold {kept} bytes once the store's own holder let go of it"
    );
    drop((db, again));
}

#[test]
fn a_read_under_way_when_its_database_closes_answers_rightly_or_closed_and_keeps_nothing() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (db, store, _clock) = fresh(relaxed());
    write_burst(&db);
    run(db.flush()).unwrap();
    // Writes the close must commit first, so that it waits on the store.
    run(async {
        for i in 0..10 {
            db.put(format!("late:{i}").as_bytes(), b"v").await.unwrap();
        }
    });
    // Every page a read needs is a copy that takes a few polls to arrive.
    store.set_copies_only(true);
    store.set_latency(3);
    // The close begins first and waits on its commit; the get starts meanwhile, finds its key's
    // SST and waits for the page while the close finishes and lets go of the data.
    let (closed, (value, let_go_first)) = run(async {
        futures::join!(db.close(), async {
            let value = db.get(b"session:00000042").await;
            (value, db.stats().levels.iter().all(|l| l.ssts.is_empty()))
        })
    });
    closed.unwrap();
    assert!(let_go_first, "the close finished before the read did");
    // The search ends on the SSTs it took: the right value, or `Closed`; never "absent" from
    // the emptied state.
    match value {
        Ok(found) => assert_eq!(found, Some(vec![42; VALUE_LEN])),
        Err(e) => assert_eq!(e.kind(), ErrorKind::Closed, "{e}"),
    }
    // And the closed handle took nothing anew: no page, no row.
    let stats = db.stats();
    assert_eq!((stats.cache_bytes, stats.row_cache_bytes), (0, 0));
}
