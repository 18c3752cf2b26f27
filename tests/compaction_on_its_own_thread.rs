//! Compactions merged on a thread of their own (`DbOptions::background_compaction`): what lands
//! while one merges (writes over its inputs, a flush, a snapshot, a namespace dropped) is all
//! there once it is installed, and the database ends as the same script leaves it with every
//! compaction run inline; a close while one merges loses nothing. (The model-based test and the
//! crash test run with it too.) Without the `threads` feature, asking for it is `UNSUPPORTED`.

mod common;
use common::*;

use ttlkv::{Db, DbOptions};

#[cfg(feature = "threads")]
/// `small()`, with room in level 1 for both flushes: one compaction takes all of L0.
fn options(background: bool) -> DbOptions {
    DbOptions {
        background_compaction: background,
        level1_target_bytes: 64 * 1024,
        ..small()
    }
}

#[cfg(feature = "threads")]
fn key(i: u8) -> Vec<u8> {
    vec![b'k', i]
}

#[cfg(feature = "threads")]
/// Two flushes of 40 keys in the default keyspace and 40 in namespace "b": L0 at `small()`'s
/// trigger, so the next maintenance step compacts (or starts the compaction on its thread).
async fn two_flushes(db: &Db) {
    let b = db.namespace("b", None).await.unwrap();
    for round in 0..2u8 {
        for i in 0..40u8 {
            db.put(&key(i), &[round; 16]).await.unwrap();
            b.put(&key(i), &[round; 16]).await.unwrap();
        }
        db.flush().await.unwrap();
    }
}

#[cfg(feature = "threads")]
/// What the script leaves: rows stored, every key's value, and what a snapshot taken while the
/// compaction merged reads.
type Outcome = (u64, Vec<Option<Vec<u8>>>, Vec<Option<Vec<u8>>>);

#[cfg(feature = "threads")]
fn script(background: bool) -> Outcome {
    let (db, _store, _clock) = fresh(options(background));
    run(async {
        two_flushes(&db).await;
        let report = db.maintenance_step().await.unwrap();
        // Inline, the step ran the compaction; on its own thread, it only started it.
        assert_eq!(report.compactions, usize::from(!background));
        assert_eq!(report.compaction_started, background);
        assert!(!report.is_idle());
        // While it merges: writes over its inputs, a snapshot, more writes, a flush, and the
        // namespace whose rows it is merging dropped.
        db.put(&key(0), b"new").await.unwrap();
        db.delete(&key(1)).await.unwrap();
        let snapshot = db.snapshot().unwrap();
        db.put(&key(2), b"after the snapshot").await.unwrap();
        db.flush().await.unwrap();
        assert!(db.drop_namespace("b").await.unwrap());
        let mut then = Vec::new();
        for i in 0..40u8 {
            then.push(snapshot.get(&key(i)).await.unwrap());
        }
        // Released, the snapshot no longer keeps the dropped namespace's rows.
        drop(snapshot);
        // Waits for the job, installs it, then merges everything into the bottom level, where
        // the dropped namespace's rows go.
        db.compact().await.unwrap();
        let mut now = Vec::new();
        for i in 0..40u8 {
            now.push(db.get(&key(i)).await.unwrap());
        }
        let b = db.namespace("b", None).await.unwrap();
        for i in 0..40u8 {
            assert_eq!(
                b.get(&key(i)).await.unwrap(),
                None,
                "a dropped namespace's key"
            );
        }
        (stored_rows(&db), now, then)
    })
}

#[cfg(feature = "threads")]
#[test]
fn what_lands_while_a_compaction_merges_on_its_thread_ends_as_with_every_compaction_inline() {
    let inline = script(false);
    let background = script(true);
    assert_eq!(inline.1[0].as_deref(), Some(&b"new"[..]));
    assert_eq!(inline.1[1], None);
    assert_eq!(inline.1[2].as_deref(), Some(&b"after the snapshot"[..]));
    assert_eq!(inline.2[2].as_deref(), Some(&[1u8; 16][..]));
    // Only the default keyspace's rows are left (one version a key, the deleted one gone).
    assert_eq!(inline.0, 39);
    // The same rows stored: the dropped namespace's rows, which the job kept as live, were
    // still known as dropped afterwards and went in the full compaction.
    assert_eq!(background.0, inline.0, "rows stored");
    assert_eq!(background.1, inline.1, "the values read after it");
    assert_eq!(background.2, inline.2, "the snapshot's reads");
}

#[cfg(feature = "threads")]
#[test]
fn a_database_closed_while_a_compaction_merges_on_its_thread_reopens_with_every_write() {
    let (db, store, clock) = fresh(options(true));
    run(async {
        two_flushes(&db).await;
        let report = db.maintenance_step().await.unwrap();
        assert_eq!(report.compactions, 0, "the compaction only started");
        assert!(report.compaction_started);
        for i in 40..60u8 {
            db.put(&key(i), b"while it merged").await.unwrap();
        }
        db.close().await.unwrap();
    });
    let db = reopen(&store, &clock, options(true));
    run(async {
        let check = |db: Db| async move {
            for i in 0..40u8 {
                assert_eq!(
                    db.get(&key(i)).await.unwrap().as_deref(),
                    Some(&[1u8; 16][..])
                );
            }
            for i in 40..60u8 {
                let got = db.get(&key(i)).await.unwrap();
                assert_eq!(got.as_deref(), Some(&b"while it merged"[..]));
            }
        };
        check(db.clone()).await;
        db.compact().await.unwrap();
        check(db.clone()).await;
    });
}

#[test]
#[cfg(not(feature = "threads"))]
fn asking_for_compactions_on_their_own_thread_without_threads_is_unsupported() {
    use ttlkv::store::MemoryStore;
    use ttlkv::{ErrorKind, FakeClock};
    let options = DbOptions {
        background_compaction: true,
        ..small()
    };
    let opened = run(Db::open(MemoryStore::new(), FakeClock::new(T0), options));
    assert_eq!(opened.err().map(|e| e.kind()), Some(ErrorKind::Unsupported));
}
