//! A call that may be sent twice (a tab forwarded it to a writer that went away before it
//! answered) takes effect once: the write records its outcome under the call's id in the same
//! atomic batch as its effect, and the call sent again is answered from that record. A crash at
//! either side of the commit leaves both the effect and the record, or neither.

mod common;
use common::*;

use ttlkv::store::{FaultPlan, FaultyStore, MemoryStore};
use ttlkv::{CallRecord, Db, DbOptions, ExpireCondition, FakeClock, PutCondition, PutOptions};

fn if_absent() -> PutOptions {
    PutOptions {
        condition: PutCondition::IfAbsent,
        ..PutOptions::default()
    }
}

#[test]
fn a_conditional_put_sent_again_after_it_took_effect_gets_its_first_outcome() {
    let (db, _, _) = fresh(DbOptions::default());
    run(async {
        let call = db.recording_call(b"tab-a:7").unwrap();
        assert!(call
            .put_with_options(b"k", b"v", if_absent())
            .await
            .unwrap());
        // Sent again: the record answers, and says the put was written.
        let record = db.recorded_call(b"tab-a:7").await.unwrap();
        assert_eq!(
            record,
            Some(CallRecord {
                applied: true,
                value: None
            })
        );
        // Run again instead, it would report the opposite.
        assert!(!db.put_with_options(b"k", b"w", if_absent()).await.unwrap());
        assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"v"[..]));
    });
}

#[test]
fn only_writes_that_change_something_are_recorded() {
    let (db, _, _) = fresh(DbOptions::default());
    run(async {
        db.put(b"k", b"v").await.unwrap();
        let failed = db.recording_call(b"c1").unwrap();
        assert!(!failed
            .put_with_options(b"k", b"w", if_absent())
            .await
            .unwrap());
        assert_eq!(
            db.recorded_call(b"c1").await.unwrap(),
            None,
            "nothing was written"
        );
        let deleted = db.recording_call(b"c2").unwrap();
        assert!(deleted.delete(b"k").await.unwrap());
        assert_eq!(
            db.recorded_call(b"c2").await.unwrap(),
            Some(CallRecord {
                applied: true,
                value: None
            })
        );
        let absent = db.recording_call(b"c3").unwrap();
        assert!(!absent.delete(b"k").await.unwrap());
        assert_eq!(db.recorded_call(b"c3").await.unwrap(), None);
    });
}

#[test]
fn get_ex_records_the_value_it_read_and_namespaces_record_too() {
    let (db, _, _) = fresh(DbOptions::default());
    run(async {
        let ns = db.namespace("sessions", None).await.unwrap();
        ns.put(b"s", b"data").await.unwrap();
        let call = ns.recording_call(b"c").unwrap();
        let got = call
            .get_ex(b"s", ttlkv::GetExOptions::ExpireAfter(5_000))
            .await
            .unwrap();
        assert_eq!(got.as_deref(), Some(&b"data"[..]));
        let record = db.recorded_call(b"c").await.unwrap().unwrap();
        assert_eq!(record.value.as_deref(), Some(&b"data"[..]));
        let expire = ns.recording_call(b"e").unwrap();
        assert!(expire
            .expire(b"s", 9_000, ExpireCondition::default())
            .await
            .unwrap());
        assert!(ns.recorded_call(b"e").await.unwrap().unwrap().applied);
    });
}

#[test]
fn records_outlive_a_resend_and_then_expire() {
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        let call = db.recording_call(b"c").unwrap();
        call.put(b"k", b"v").await.unwrap();
        clock.advance(9 * 60 * 1000);
        assert!(db.recorded_call(b"c").await.unwrap().is_some());
        clock.advance(2 * 60 * 1000);
        assert_eq!(db.recorded_call(b"c").await.unwrap(), None);
        // Purges pass over expired records without reporting them as expired keys.
        let report = db.purge_expired(100).await.unwrap();
        assert!(report.expired.is_empty(), "{report:?}");
    });
}

#[test]
fn a_crash_at_the_commit_of_a_recorded_write_leaves_both_effect_and_record_or_neither() {
    for after in [false, true] {
        let store = FaultyStore::new(MemoryStore::new(), FaultPlan::default());
        let clock = FakeClock::new(T0);
        let db = run(Db::open(store.clone(), clock.clone(), DbOptions::default())).unwrap();
        store.set_plan(FaultPlan {
            crash_before_commit: (!after).then_some(1),
            crash_after_commit: after.then_some(1),
            ..FaultPlan::default()
        });
        let call = db.recording_call(b"c").unwrap();
        assert!(run(call.put_with_options(b"k", b"v", if_absent())).is_err());
        let db = run(Db::open(store.inner().clone(), clock, DbOptions::default())).unwrap();
        let written = run(db.get(b"k")).unwrap().is_some();
        let recorded = run(db.recorded_call(b"c")).unwrap().is_some();
        assert_eq!(
            written,
            after,
            "crash {} the commit",
            if after { "after" } else { "before" }
        );
        assert_eq!(
            recorded, written,
            "the record lands with the effect, or not at all"
        );
    }
}
