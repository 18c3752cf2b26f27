//! Opening a database deletes the pages of SSTs its manifest no longer references: what a crash
//! leaves behind between a compaction (which drops its inputs from the manifest) and the commit
//! that deletes their pages. Open finds them through their metadata pages, and falls back to
//! listing every data page when such a metadata page cannot be read.

mod common;

use std::collections::BTreeSet;

use common::{reopen, run, small};
use ttlkv::store::{Commit, FaultPlan, FaultyStore, MemoryStore, PageKind, PageStore};
use ttlkv::{Db, DbOptions, Durability, FakeClock};

/// Ids of the SSTs the database's manifest references.
fn referenced(db: &Db) -> BTreeSet<u64> {
    db.stats()
        .levels
        .iter()
        .flat_map(|l| &l.ssts)
        .map(|s| s.id)
        .collect()
}

/// Ids of the SSTs that have pages of `kind` in the store.
fn stored(store: &MemoryStore, kind: PageKind) -> BTreeSet<u64> {
    run(store.list_pages(kind))
        .expect("list")
        .into_iter()
        .map(|p| p.file)
        .collect()
}

/// A store holding SSTs a compaction replaced but whose pages were never deleted: the process
/// "crashed" at the commit that would have deleted them (the first crash point, trying each
/// commit of `compact()` in turn, that leaves such SSTs behind).
fn crashed_with_orphans() -> (MemoryStore, FakeClock, BTreeSet<u64>) {
    for crash_at in 1..200 {
        let disk = MemoryStore::new();
        let store = FaultyStore::new(disk.clone(), FaultPlan::default());
        let clock = FakeClock::new(common::T0);
        let db = run(Db::open(store.clone(), clock.clone(), relaxed())).expect("open");
        store.set_plan(FaultPlan {
            crash_before_commit: Some(store.commits_attempted() + crash_at),
            ..FaultPlan::default()
        });
        let mut crashed = false;
        for round in 0..3u32 {
            for i in 0..200u32 {
                let value = [round as u8; 40];
                crashed |= run(db.put(format!("key{i:04}").as_bytes(), &value)).is_err();
            }
            crashed |= run(db.flush()).is_err() || run(db.compact()).is_err();
        }
        if !crashed {
            break;
        }
        drop(db);
        let meta = stored(&disk, PageKind::SstMeta);
        let referenced_now = manifest_ssts(&disk);
        let orphans: BTreeSet<u64> = meta.difference(&referenced_now).copied().collect();
        if !orphans.is_empty() {
            return (disk, clock, orphans);
        }
    }
    panic!("no crash point left an unreferenced SST behind");
}

/// Small pages and tables, and writes that commit in groups (fewer commits to try).
fn relaxed() -> DbOptions {
    DbOptions {
        durability: Durability::Relaxed,
        ..small()
    }
}

/// The SSTs the store's manifest references, read without opening (opening would clean up).
fn manifest_ssts(disk: &MemoryStore) -> BTreeSet<u64> {
    let record = run(disk.read_manifest()).expect("manifest").expect("some");
    let manifest = ttlkv::format::Manifest::decode(&record.bytes).expect("decode");
    manifest.levels.iter().flatten().copied().collect()
}

#[test]
fn open_deletes_every_page_of_sst_nothing_references() {
    let (store, clock, orphans) = crashed_with_orphans();
    let db = reopen(&store, &clock, small());
    let live = referenced(&db);
    assert_eq!(stored(&store, PageKind::SstMeta), live);
    assert_eq!(stored(&store, PageKind::SstData), live);
    assert!(orphans.is_disjoint(&live));
    // Nothing the manifest references went with the orphans: every key still reads.
    for i in 0..200u32 {
        run(db.get(format!("key{i:04}").as_bytes())).expect("a read after the cleanup");
    }
}

#[test]
fn open_lists_data_pages_when_an_orphan_metadata_page_is_unreadable() {
    let (store, clock, orphans) = crashed_with_orphans();
    let broken = *orphans.iter().next().expect("an orphan");
    let version = run(store.read_manifest())
        .expect("manifest")
        .expect("some")
        .version;
    run(store.commit(Commit {
        expected_manifest_version: version,
        puts: vec![(
            ttlkv::store::PageId::sst_meta(broken),
            b"not a page".to_vec(),
        )],
        ..Commit::default()
    }))
    .expect("overwrite the orphan's metadata page");

    let db = reopen(&store, &clock, small());
    let live = referenced(&db);
    assert_eq!(stored(&store, PageKind::SstMeta), live);
    assert_eq!(stored(&store, PageKind::SstData), live);
}
