//! Namespaces (separate keyspaces with default and maximum TTL, dropped with their expiry
//! entries) and snapshots (reads as of a sequence number and a time, kept through compaction).

mod common;
use common::*;

use ttlkv::{
    DbOptions, ErrorKind, ExpireCondition, NamespaceOptions, PutOptions, ScanOptions, Ttl,
};

#[test]
fn namespaces_are_separate_keyspaces() {
    let (db, _, _) = fresh(DbOptions::default());
    run(async {
        let carts = db.namespace("carts", None).await.unwrap();
        db.put(b"k", b"default").await.unwrap();
        carts.put(b"k", b"carts").await.unwrap();
        assert_eq!(
            db.get(b"k").await.unwrap().as_deref(),
            Some(&b"default"[..])
        );
        assert_eq!(
            carts.get(b"k").await.unwrap().as_deref(),
            Some(&b"carts"[..])
        );
        assert!(carts.delete(b"k").await.unwrap());
        assert!(db.has(b"k").await.unwrap());
        carts.put(b"a", b"1").await.unwrap();
        carts.put(b"b", b"2").await.unwrap();
        let keys: Vec<_> = carts
            .scan(&ScanOptions::default())
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.key)
            .collect();
        assert_eq!(keys, [b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(db.scan(&ScanOptions::default()).await.unwrap().len(), 1);
        let again = db.namespace("carts", None).await.unwrap();
        assert!(
            again.has(b"a").await.unwrap(),
            "the same name is the same keyspace"
        );
    });
}

#[test]
fn a_namespace_default_ttl_applies_and_its_maximum_clamps_longer_or_missing_ttls() {
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        let opts = NamespaceOptions {
            default_ttl_ms: Some(1_000),
            max_ttl_ms: Some(5_000),
        };
        let ns = db.namespace("otp", Some(opts)).await.unwrap();
        ns.put(b"default", b"v").await.unwrap();
        assert_eq!(ns.ttl(b"default").await.unwrap(), 1_000);
        ns.put_with_options(b"long", b"v", PutOptions::expire_after(60_000))
            .await
            .unwrap();
        assert_eq!(ns.ttl(b"long").await.unwrap(), 5_000, "clamped");
        ns.put_with_options(
            b"none",
            b"v",
            PutOptions {
                ttl: Ttl::NoExpiry,
                ..Default::default()
            },
        )
        .await
        .unwrap();
        assert_eq!(
            ns.ttl(b"none").await.unwrap(),
            5_000,
            "a missing TTL is clamped too"
        );
        assert!(ns
            .expire(b"none", 100_000, ExpireCondition::default())
            .await
            .unwrap());
        assert_eq!(ns.ttl(b"none").await.unwrap(), 5_000);
        clock.advance(5_000);
        assert!(ns.scan(&ScanOptions::default()).await.unwrap().is_empty());
        assert_eq!(db.namespaces(), vec![("otp".to_string(), opts)]);
    });
}

#[test]
fn namespace_options_are_validated_and_survive_reopen() {
    let (db, store, clock) = fresh(DbOptions::default());
    run(async {
        let bad = NamespaceOptions {
            default_ttl_ms: Some(0),
            max_ttl_ms: None,
        };
        assert_eq!(
            db.namespace("x", Some(bad)).await.unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
        assert_eq!(
            db.namespace("", None).await.unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
        let opts = NamespaceOptions {
            default_ttl_ms: Some(60_000),
            max_ttl_ms: None,
        };
        db.namespace("sessions", Some(opts))
            .await
            .unwrap()
            .put(b"k", b"v")
            .await
            .unwrap();
        db.close().await.unwrap();
    });
    let db = reopen(&store, &clock, DbOptions::default());
    run(async {
        let ns = db.namespace("sessions", None).await.unwrap();
        assert_eq!(ns.ttl(b"k").await.unwrap(), 60_000);
        ns.put(b"k2", b"v").await.unwrap();
        assert_eq!(
            ns.ttl(b"k2").await.unwrap(),
            60_000,
            "the default TTL came back with it"
        );
    });
}

#[test]
fn dropping_a_namespace_drops_its_keys_and_expiry_entries_and_closes_its_handles() {
    let (db, _, clock) = fresh(small());
    run(async {
        let ns = db.namespace("tmp", None).await.unwrap();
        for i in 0..100u32 {
            ns.put_with_options(&i.to_be_bytes(), b"v", PutOptions::expire_after(50))
                .await
                .unwrap();
            db.put(&i.to_be_bytes(), b"kept").await.unwrap();
        }
        db.flush().await.unwrap();
        assert!(db.drop_namespace("tmp").await.unwrap());
        assert!(!db.drop_namespace("tmp").await.unwrap());
        assert_eq!(ns.get(b"k").await.unwrap_err().kind(), ErrorKind::Closed);
        assert_eq!(
            ns.put(b"k", b"v").await.unwrap_err().kind(),
            ErrorKind::Closed
        );
        let fresh_ns = db.namespace("tmp", None).await.unwrap();
        assert!(
            fresh_ns
                .scan(&ScanOptions::default())
                .await
                .unwrap()
                .is_empty(),
            "a new, empty keyspace"
        );
        clock.advance(50);
        let r = db.purge_expired(1_000).await.unwrap();
        assert_eq!(
            (r.removed, r.stale),
            (0, 100),
            "its expiry entries fire no events"
        );
        db.compact().await.unwrap();
        let rows = stored_rows(&db);
        assert_eq!(rows, 100, "only the default namespace's rows remain");
        assert_eq!(db.scan(&ScanOptions::default()).await.unwrap().len(), 100);
    });
}

#[test]
fn a_snapshot_still_sees_a_key_that_expires_after_it_was_taken() {
    let (db, _, clock) = fresh(small());
    run(async {
        db.put_with_options(b"k", b"v", PutOptions::expire_after(100))
            .await
            .unwrap();
        db.put(b"other", b"1").await.unwrap();
        let snap = db.snapshot().unwrap();
        clock.advance(100);
        db.put(b"other", b"2").await.unwrap();
        db.delete(b"gone-later").await.unwrap();
        assert!(!db.has(b"k").await.unwrap());
        assert!(
            snap.has(b"k").await.unwrap(),
            "expiry evaluated at the snapshot's time"
        );
        assert_eq!(snap.ttl(b"k").await.unwrap(), 100);
        assert_eq!(
            snap.get(b"other").await.unwrap().as_deref(),
            Some(&b"1"[..])
        );
        // Compaction and the purge keep what the snapshot needs.
        let r = db.purge_expired(100).await.unwrap();
        assert_eq!(r.removed, 1);
        db.compact().await.unwrap();
        assert!(snap.has(b"k").await.unwrap());
        assert_eq!(snap.scan(&ScanOptions::default()).await.unwrap().len(), 2);
        snap.release();
        assert_eq!(snap.get(b"k").await.unwrap_err().kind(), ErrorKind::Closed);
        db.compact().await.unwrap();
        let rows = stored_rows(&db);
        assert_eq!(rows, 1, "released: only the live key remains");
    });
}

#[test]
fn a_snapshot_of_a_namespace_reads_that_namespace() {
    let (db, _, _) = fresh(DbOptions::default());
    run(async {
        let ns = db.namespace("n", None).await.unwrap();
        ns.put(b"k", b"in n").await.unwrap();
        db.put(b"k", b"in default").await.unwrap();
        let snap = ns.snapshot().unwrap();
        ns.put(b"k", b"changed").await.unwrap();
        assert_eq!(snap.get(b"k").await.unwrap().as_deref(), Some(&b"in n"[..]));
    });
}

#[test]
fn dropped_namespace_ids_are_forgotten_once_no_row_of_them_is_left() {
    use ttlkv::store::PageStore;
    let (db, store, _) = fresh(DbOptions::default());
    run(async {
        db.put(b"default", b"stays").await.unwrap();
        for i in 0..2_000 {
            let name = format!("tenant-{i}");
            let ns = db.namespace(&name, None).await.unwrap();
            ns.put(b"k", b"v").await.unwrap();
            assert!(db.drop_namespace(&name).await.unwrap());
        }
        let kept = db.namespace("kept", None).await.unwrap();
        kept.put(b"k", b"v").await.unwrap();
        db.compact().await.unwrap();
        let record = store.read_manifest().await.unwrap().unwrap();
        let manifest = ttlkv::format::Manifest::decode(&record.bytes).unwrap();
        assert_eq!(
            manifest.dropped_namespaces.len(),
            0,
            "no row of a dropped namespace is left, so no id needs remembering"
        );
        assert_eq!(kept.get(b"k").await.unwrap().as_deref(), Some(&b"v"[..]));
        assert_eq!(
            db.get(b"default").await.unwrap().as_deref(),
            Some(&b"stays"[..])
        );
        // A namespace made now gets a new id: nothing of the dropped ones comes back.
        let again = db.namespace("tenant-7", None).await.unwrap();
        assert_eq!(again.get(b"k").await.unwrap(), None);
    });
}

#[test]
fn a_namespace_ttl_that_no_write_could_use_is_refused_when_it_is_set_never_stored() {
    let (db, store, clock) = fresh(DbOptions::default());
    run(async {
        let huge = NamespaceOptions {
            default_ttl_ms: Some(i64::MAX as u64),
            max_ttl_ms: None,
        };
        let e = db.namespace("sessions", Some(huge)).await.err().unwrap();
        assert_eq!(e.kind(), ttlkv::ErrorKind::InvalidArgument, "{e}");
        let longest = NamespaceOptions {
            default_ttl_ms: Some(ttlkv::MAX_TTL_MS),
            max_ttl_ms: None,
        };
        let ns = db.namespace("sessions", Some(longest)).await.unwrap();
        ns.put(b"k", b"v").await.unwrap();
        db.close().await.unwrap();
    });
    let db = reopen(&store, &clock, DbOptions::default());
    run(async {
        let ns = db.namespace("sessions", None).await.unwrap();
        ns.put(b"k2", b"v").await.unwrap();
        assert!(ns.ttl(b"k2").await.unwrap() > 0);
    });
}

#[test]
fn a_namespace_costs_the_manifest_a_few_dozen_bytes_and_thousands_reopen_whole() {
    use ttlkv::store::{MemoryStore, PageStore};
    let (db, store, clock) = fresh(DbOptions::default());
    let manifest_len = |store: &MemoryStore| {
        run(store.read_manifest())
            .unwrap()
            .map_or(0, |record| record.bytes.len())
    };
    let before = manifest_len(&store);
    const N: u32 = 2_000;
    run(async {
        for i in 0..N {
            // Names of 12 bytes.
            let ns = db.namespace(&format!("tenant-{i:05}"), None).await.unwrap();
            ns.put(b"k", &i.to_le_bytes()).await.unwrap();
        }
    });
    // Every namespace is listed in the manifest, which each creation, drop, clear, flush and
    // compaction writes whole (docs/api.md, "Namespaces"): its size is what they all pay.
    let per_namespace = (manifest_len(&store) - before) / N as usize;
    assert!(
        per_namespace <= 48,
        "{per_namespace} manifest bytes a namespace"
    );
    drop(db);
    let db = reopen(&store, &clock, DbOptions::default());
    run(async {
        for i in (0..N).step_by(97) {
            let ns = db.namespace(&format!("tenant-{i:05}"), None).await.unwrap();
            assert_eq!(
                ns.get(b"k").await.unwrap().as_deref(),
                Some(&i.to_le_bytes()[..])
            );
        }
        assert_eq!(db.namespaces().len(), N as usize);
    });
}
