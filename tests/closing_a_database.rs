//! What `close()` promises: it returns once every write it accepted before is committed, whether
//! it is the only close, one beside another, or one after a close whose future was dropped
//! half-way (a caller's timeout); and every call that reaches the database afterwards fails with
//! `Closed`, on the handle that was closed, on a namespace's handle and on a call-recording handle
//! alike, none of them answering from the state the close let go of (an empty answer would read
//! as "nothing there" or "nothing due").

mod common;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use common::{fail_commit, fresh, open_faulty, relaxed, reopen, run, T0};
use ttlkv::store::FaultPlan;
use ttlkv::{
    DbOptions, Durability, ErrorKind, ExpireCondition, GetExOptions, PutOptions, ScanOptions,
    WriteBatch,
};

/// Each call a `Db` handle offers that may touch the database, by name, with its error if it
/// failed (`None` if it succeeded).
fn every_call(db: &ttlkv::Db) -> Vec<(&'static str, Option<ttlkv::Error>)> {
    fn outcome<T>(r: ttlkv::Result<T>) -> Option<ttlkv::Error> {
        r.err()
    }
    let mut batch = WriteBatch::new();
    batch.put(b"b", b"v");
    vec![
        ("get", outcome(run(db.get(b"k")))),
        (
            "get_with",
            outcome(db.get_with(b"k", |v| v.map(<[u8]>::to_vec)).map(|_| ())),
        ),
        ("get_entry", outcome(run(db.get_entry(b"k")))),
        ("get_many", outcome(run(db.get_many(&[b"k", b"due"])))),
        ("has", outcome(run(db.has(b"k")))),
        ("ttl", outcome(run(db.ttl(b"k")))),
        ("scan", outcome(run(db.scan(&ScanOptions::default())))),
        ("snapshot", outcome(db.snapshot().map(|_| ()))),
        ("put", outcome(run(db.put(b"k", b"w")))),
        (
            "put_with_options",
            outcome(run(db.put_with_options(
                b"k",
                b"w",
                PutOptions::expire_after(1_000),
            ))),
        ),
        ("delete", outcome(run(db.delete(b"k")))),
        (
            "expire",
            outcome(run(db.expire(b"k", 1_000, ExpireCondition::default()))),
        ),
        (
            "expire_at",
            outcome(run(db.expire_at(
                b"k",
                T0 + 1_000,
                ExpireCondition::default(),
            ))),
        ),
        ("persist", outcome(run(db.persist(b"k")))),
        (
            "get_ex",
            outcome(run(db.get_ex(b"k", GetExOptions::Persist))),
        ),
        ("write", outcome(run(db.write(batch)))),
        ("clear", outcome(run(db.clear()))),
        ("purge_expired", outcome(run(db.purge_expired(100)))),
        ("reclaim", outcome(run(db.reclaim()))),
        ("flush", outcome(run(db.flush()))),
        ("compact", outcome(run(db.compact()))),
        ("maintenance_step", outcome(run(db.maintenance_step()))),
        ("namespace", outcome(run(db.namespace("other", None)))),
        (
            "drop_namespace",
            outcome(run(db.drop_namespace("sessions"))),
        ),
        ("recorded_call", outcome(run(db.recorded_call(b"call-1")))),
    ]
}

fn assert_all_closed(handle: &str, db: &ttlkv::Db) {
    for (call, error) in every_call(db) {
        match error {
            Some(e) => assert_eq!(e.kind(), ErrorKind::Closed, "{handle}: {call}: {e}"),
            None => panic!("{handle}: {call} succeeded on a closed handle"),
        }
    }
}

#[test]
fn every_call_on_a_closed_database_fails_closed_on_each_of_its_handles() {
    let (db, store, clock) = fresh(DbOptions::default());
    let ns = run(db.namespace("sessions", None)).unwrap();
    let recording = db.recording_call(b"call-1").unwrap();
    for handle in [&db, &ns] {
        run(handle.put(b"k", b"v")).unwrap();
        run(handle.put_with_options(b"due", b"v", PutOptions::expire_after(10))).unwrap();
    }
    run(recording.put(b"r", b"v")).unwrap();
    // Some of it in SSTs, some in the memtable, and keys due for a purge.
    run(db.flush()).unwrap();
    run(db.put(b"late", b"v")).unwrap();
    clock.advance(1_000);

    run(db.close()).unwrap();
    assert_all_closed("db", &db);
    assert_all_closed("namespace", &ns);
    assert_all_closed("recording", &recording);
    // Closing again does nothing, and the calls above changed nothing.
    run(db.close()).unwrap();
    drop((db, ns, recording));
    let db = reopen(&store, &clock, DbOptions::default());
    assert_eq!(run(db.get(b"k")).unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(run(db.get(b"late")).unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(run(db.get(b"b")).unwrap(), None);
    assert!(run(db.recorded_call(b"call-1")).unwrap().is_some());
    let ns = run(db.namespace("sessions", None)).unwrap();
    assert_eq!(run(ns.get(b"k")).unwrap().as_deref(), Some(&b"v"[..]));
    // The due keys were never purged by the calls on the closed handle: a purge now reports them.
    let report = run(db.purge_expired(100)).unwrap();
    assert_eq!(report.expired.len(), 2, "{report:?}");
}

/// Poll `future` once, as an executor would that is then dropped.
fn poll_once<F: Future + ?Sized>(future: Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(futures::task::noop_waker_ref()))
}

#[test]
fn a_close_whose_future_was_dropped_half_way_is_finished_by_the_next_close() {
    let (db, store, clock) = fresh(relaxed());
    store.set_latency(3);
    run(db.put(b"first", b"v")).unwrap();
    // A flush whose commit of the first write is in flight, and a second write waiting behind it.
    let mut flush = Box::pin(db.flush());
    assert!(poll_once(flush.as_mut()).is_pending());
    run(db.put(b"second", b"v")).unwrap();
    // A close that waits for that commit, given up on (a caller's timeout).
    let mut close = Box::pin(db.close());
    assert!(poll_once(close.as_mut()).is_pending());
    drop(close);
    let _ = run(flush);
    // The second write is not committed yet; the next close commits it before it returns.
    run(db.close()).unwrap();
    let e = run(db.get(b"first")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
    assert_eq!(
        db.stats().memtable_bytes,
        0,
        "the closed handle holds nothing"
    );
    drop(db);
    store.set_latency(0);
    let db = reopen(&store, &clock, relaxed());
    for key in [&b"first"[..], b"second"] {
        assert_eq!(
            run(db.get(key)).unwrap().as_deref(),
            Some(&b"v"[..]),
            "{}",
            String::from_utf8_lossy(key)
        );
    }
}

#[test]
fn two_closes_side_by_side_both_return_once_every_write_is_committed() {
    for head_start in 0..12 {
        let (db, store, clock) = fresh(relaxed());
        store.set_latency(2);
        let unwritten = store.stored_bytes();
        for i in 0..3u8 {
            run(db.put(&[b'k', i], b"v")).unwrap();
        }
        let mut first = Box::pin(db.close());
        let mut first_done = None;
        for _ in 0..head_start {
            if first_done.is_none() {
                if let Poll::Ready(r) = poll_once(first.as_mut()) {
                    first_done = Some(r);
                }
            }
        }
        let mut second = Box::pin(db.close());
        // The second close may not answer before the first has committed everything.
        let mut second_done = None;
        while first_done.is_none() || second_done.is_none() {
            if first_done.is_none() {
                if let Poll::Ready(r) = poll_once(first.as_mut()) {
                    first_done = Some(r);
                }
            }
            if second_done.is_none() {
                if let Poll::Ready(r) = poll_once(second.as_mut()) {
                    assert!(
                        store.stored_bytes() > unwritten,
                        "head start {head_start}: the second close answered before the writes were committed"
                    );
                    let e = db.get_with(b"k", |_| ()).err();
                    assert_eq!(
                        e.map(|e| e.kind()),
                        Some(ErrorKind::Closed),
                        "head start {head_start}: the second close answered before the database was closed"
                    );
                    second_done = Some(r);
                }
            }
        }
        first_done.unwrap().unwrap();
        second_done
            .unwrap()
            .unwrap_or_else(|e| panic!("head start {head_start}: the second close failed: {e}"));
        drop((first, second));
        drop(db);
        store.set_latency(0);
        let db = reopen(&store, &clock, relaxed());
        for i in 0..3u8 {
            assert_eq!(
                run(db.get(&[b'k', i])).unwrap().as_deref(),
                Some(&b"v"[..]),
                "head start {head_start}"
            );
        }
    }
}

/// Options for a compaction long enough to give the host many turns: two flushes of 4,096 rows
/// of about 220 bytes, merged in slices of 16 KiB.
fn long_compaction() -> DbOptions {
    DbOptions {
        durability: Durability::Relaxed,
        work_slice_bytes: 16 * 1024,
        memtable_flush_bytes: 64 * 1024 * 1024,
        memtable_stall_bytes: 64 * 1024 * 1024,
        l0_compaction_trigger: 100,
        ..DbOptions::default()
    }
}

#[test]
fn a_compaction_under_way_when_a_close_fails_to_commit_still_gives_the_host_its_turns() {
    let (db, store, clock) = open_faulty(long_compaction());
    let key = |i: usize| format!("key-{i:06}").into_bytes();
    run(async {
        for round in 1..=2u8 {
            for start in (0..4096).step_by(256) {
                let mut batch = WriteBatch::new();
                for i in start..start + 256 {
                    batch.put(&key(i), &[round; 200]);
                }
                db.write(batch).await.unwrap();
            }
            db.flush().await.unwrap();
        }
    });
    // The first step of the full compaction merges the older flush's SST into the level below:
    // it writes about as many bytes again.
    let first_step = db.stats().levels[0].ssts[0].bytes;
    store.inner().reset_counters();
    // Each turn given to the host (and each store operation) takes one poll more.
    store.inner().set_latency(1);
    let mut compact = Box::pin(db.compact());
    while store.inner().yields() < 2 {
        assert!(poll_once(compact.as_mut()).is_pending());
    }
    // Merging: a relaxed write beside it, then a close whose commit of that write fails.
    run(db.put(b"pending", b"v")).unwrap();
    fail_commit(&store, 1);
    let (compacted, closed) = run(futures::future::join(compact, db.close()));
    let e = closed.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Storage, "{e}");
    // The merge gave the host its turns to the end, as any merge does: it went on while the
    // close waited for it, not after the close had let go of the store it yields through (2
    // turns so). Its commit then fails: the relaxed write it would have kept was lost.
    assert!(
        store.inner().yields() + 1 >= first_step / (16 * 1024),
        "{} turns for a first step of {first_step} bytes merged in slices of 16 KiB (compaction: {compacted:?})",
        store.inner().yields()
    );
    drop(db);
    let db = reopen(store.inner(), &clock, long_compaction());
    for i in (0..4096).step_by(97) {
        assert_eq!(run(db.get(&key(i))).unwrap(), Some(vec![2; 200]));
    }
    // Its commit failed, and the close said so.
    assert_eq!(run(db.get(b"pending")).unwrap(), None);
}

#[test]
fn relaxed_writes_lost_to_a_failed_commit_stop_later_writes_and_fail_the_close() {
    // The app's relaxed writes were accepted at once; the maintenance step's commit of them
    // failed (the app never sees a step's error) and rolled them back. A later write landing
    // would keep it and lose the ones before it, which no crash does; and the close has nothing
    // left to commit, but must not answer as if everything it accepted were stored.
    let (db, store, clock) = open_faulty(relaxed());
    run(db.put(b"kept", b"v")).unwrap();
    run(db.flush()).unwrap();
    run(db.put(b"lost", b"v")).unwrap();
    fail_commit(&store, 1);
    clock.advance(1_000);
    assert!(
        run(db.maintenance_step()).is_err(),
        "the step's commit failed"
    );
    assert_eq!(run(db.get(b"lost")).unwrap(), None, "rolled back");
    let e = run(db.put(b"after", b"v")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Storage, "{e}");
    assert!(
        e.message()
            .starts_with("relaxed writes were lost; reopen the database: injected failure"),
        "says what happened, what to do and its cause: {e}"
    );
    assert_eq!(
        run(db.get(b"kept")).unwrap().as_deref(),
        Some(&b"v"[..]),
        "reads go on"
    );
    let e = run(db.close()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Storage, "{e}");
    // The database is closed: closing again does nothing.
    run(db.close()).unwrap();
    drop(db);
    let db = reopen(store.inner(), &clock, relaxed());
    assert_eq!(run(db.get(b"kept")).unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(run(db.get(b"lost")).unwrap(), None);
    assert_eq!(run(db.get(b"after")).unwrap(), None);
    // Reopened, it takes writes again, and one whose relaxed writes all landed closes cleanly.
    run(db.put(b"more", b"v")).unwrap();
    run(db.close()).unwrap();
}

#[test]
fn a_failed_commit_of_durable_writes_leaves_the_database_writable() {
    // Their writers were told: nothing is withheld from later writes.
    let (db, store, _clock) = open_faulty(DbOptions::default());
    fail_commit(&store, 1);
    let e = run(db.put(b"failed", b"v")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Storage, "{e}");
    run(db.put(b"next", b"v")).unwrap();
    run(db.close()).unwrap();
}

#[test]
fn relaxed_writes_lost_to_a_commit_given_up_on_stop_later_writes_and_fail_the_close() {
    // A flush leading the commit of a relaxed write is dropped half-way (a caller's timeout):
    // the write is rolled back, as for a crash, and no caller hears of it.
    let (db, store, clock) = fresh(relaxed());
    run(db.put(b"kept", b"v")).unwrap();
    run(db.flush()).unwrap();
    store.set_latency(3);
    run(db.put(b"lost", b"v")).unwrap();
    let mut flush = Box::pin(db.flush());
    assert!(poll_once(flush.as_mut()).is_pending());
    drop(flush);
    assert_eq!(run(db.get(b"lost")).unwrap(), None, "rolled back");
    let e = run(db.put(b"after", b"v")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Storage, "{e}");
    let e = run(db.close()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Storage, "{e}");
    drop(db);
    store.set_latency(0);
    let db = reopen(&store, &clock, relaxed());
    assert_eq!(run(db.get(b"kept")).unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(run(db.get(b"after")).unwrap(), None);
}

#[test]
fn relaxed_writes_lost_behind_a_purges_failed_commit_stop_later_writes() {
    // On a relaxed database a purge commits its deletes durably: its group has a writer waiting
    // (the purge), who hears of the failure. A relaxed write queued behind that commit is rolled
    // back with it, and no caller hears of that. (The purge writes deletes where its limit cuts
    // a millisecond's keys in two: `purged_until` cannot say which of them it handled.)
    let (db, store, clock) = open_faulty(relaxed());
    for key in [&b"due 1"[..], b"due 2"] {
        run(db.put_with_options(key, b"v", PutOptions::expire_after(10))).unwrap();
    }
    run(db.flush()).unwrap();
    clock.advance(1_000);
    store.inner().set_latency(3);
    store.set_plan(FaultPlan {
        crash_after_commit: Some(1),
        ..FaultPlan::default()
    });
    let mut purge = Box::pin(db.purge_expired(1));
    while store.commits_attempted() == 0 {
        assert!(poll_once(purge.as_mut()).is_pending());
    }
    // The purge's commit is in flight; a relaxed write is accepted behind it.
    run(db.put(b"queued", b"v")).unwrap();
    let e = run(purge).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Storage, "{e}");
    assert_eq!(run(db.get(b"queued")).unwrap(), None, "rolled back");
    let e = run(db.put(b"after", b"v")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Storage, "{e}");
}
