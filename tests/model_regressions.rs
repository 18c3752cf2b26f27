//! Engine bugs found by the model-based test (`model_based.rs`), each minimized to the shortest
//! sequence of calls that shows it, with what the model expects. Each failed before its fix.

mod common;
use common::*;

use ttlkv::{Db, DbOptions, PutOptions};

/// One due key in namespace `"ns1"` for each of `dropped` keys, then `"ns1"` dropped, then one
/// key `"k"` in the default namespace expiring after all of them, and the clock moved past it.
async fn expired_key_behind_a_dropped_namespace(db: &Db, clock: &ttlkv::FakeClock, dropped: u8) {
    let ns = db.namespace("ns1", None).await.unwrap();
    for k in 0..dropped {
        ns.put_with_options(&[b'a' + k], b"v", PutOptions::expire_after(10))
            .await
            .unwrap();
    }
    db.put_with_options(b"k", b"v", PutOptions::expire_after(20))
        .await
        .unwrap();
    assert!(db.drop_namespace("ns1").await.unwrap());
    clock.advance(20);
}

/// The purge walks the expiry index oldest first. Entries of a dropped namespace are judged
/// stale, but while the namespace's rows are still stored (until a compaction rewrites them) the
/// `ResolveExpired` op keeps every entry whose row still carries that expiry, so they are never
/// removed. Once `limit` of them are due, every purge reads the same entries, reports
/// `more_due: true` with nothing removed, and never reaches the keys behind them: "k" expired
/// but is never purged and its expire event never fires.
///
/// Model: the first purges drop the two stale entries; "k" is reported within a few calls.
/// Engine: `PurgeReport { removed: 0, stale: 2, more_due: true, .. }` on every call.
#[test]
fn purge_gets_past_expiry_entries_of_a_dropped_namespace() {
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        expired_key_behind_a_dropped_namespace(&db, &clock, 2).await;
        let mut expired = Vec::new();
        for _ in 0..10 {
            let report = db.purge_expired(2).await.unwrap();
            expired.extend(report.expired.into_iter().map(|e| e.key));
            if !report.more_due {
                break;
            }
        }
        assert_eq!(expired, [b"k".to_vec()], "expire events");
    });
}

/// The same stall through the maintenance step (what automatic maintenance runs): with
/// `purge_slice_keys` at or below the number of due entries of the dropped namespace, each step
/// asks to be called again at once (`next_wakeup_ms == Some(now)`) and never purges "k". With
/// the default `purge_slice_keys` (1,000) a dropped namespace with 1,000 expired keys does it.
#[test]
fn maintenance_purges_keys_behind_a_dropped_namespace() {
    let (db, _, clock) = fresh(DbOptions {
        purge_slice_keys: 2,
        ..DbOptions::default()
    });
    run(async {
        expired_key_behind_a_dropped_namespace(&db, &clock, 2).await;
        let mut expired = Vec::new();
        for _ in 0..10 {
            let step = db.maintenance_step().await.unwrap();
            expired.extend(step.purge.expired.into_iter().map(|e| e.key));
            if !step.purge.more_due {
                break;
            }
        }
        assert_eq!(expired, [b"k".to_vec()], "expire events");
    });
}

/// A snapshot taken while a key's newest row has expired (but is not purged yet) sees the key
/// as absent, and must keep doing so. The whole-SST drop (`plan_whole_drop` in compaction.rs)
/// drops an SST once every row in it expired before `purged_until` and no pinned reader reads at
/// a time before the SST's `max_expire_at`. But a snapshot reading at or after that time still
/// needs the expired row: it is the newest version at the snapshot's seq and hides the key's
/// older version in a lower level. Once the SST is dropped, that older version (here without
/// expiry) resurfaces through the snapshot; live reads are unaffected (the purge's tombstone
/// hides it).
///
/// Model: `snap.get_entry("k")` is `None` before and after the maintenance step.
/// Engine: `None` before; after the step (purge of "k", then the L0 SST dropped whole)
/// `Some(Entry { value: "old", expire_at: None })`.
#[test]
fn snapshot_keeps_an_expired_key_absent_after_a_whole_sst_drop() {
    let (db, _, clock) = fresh(small());
    run(async {
        db.put(b"k", b"old").await.unwrap();
        // "old", without expiry, goes to L1.
        db.compact().await.unwrap();
        assert!(db.expire(b"k", 1, Default::default()).await.unwrap());
        // The row with the expiry and its expiry-index entry: an L0 SST of expiring rows only.
        db.flush().await.unwrap();
        clock.advance(1);
        let snap = db.snapshot().unwrap();
        assert_eq!(snap.get_entry(b"k").await.unwrap(), None);
        // Purges "k" (one expire event), then drops the L0 SST whole.
        let step = db.maintenance_step().await.unwrap();
        assert_eq!(step.purge.removed, 1);
        assert_eq!(db.get_entry(b"k").await.unwrap(), None);
        assert_eq!(
            snap.get_entry(b"k").await.unwrap(),
            None,
            "a key expired at the snapshot's time reappeared through the snapshot"
        );
    });
}
