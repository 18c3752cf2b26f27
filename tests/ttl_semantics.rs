//! The SNKV RFC's TTL test plan, and the Redis overwrite rules, on a fake clock that jumps.

mod common;
use common::*;
use ttlkv::{
    DbOptions, ErrorKind, ExpireCondition, GetExOptions, PutCondition, PutOptions, Ttl, WriteBatch,
};

fn ttl(ms: u64) -> PutOptions {
    PutOptions::expire_after(ms)
}

#[test]
fn basic_put_get_expiry() {
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        db.put_with_options(b"session", b"alice", ttl(1_000))
            .await
            .unwrap();
        assert_eq!(
            db.get(b"session").await.unwrap().as_deref(),
            Some(&b"alice"[..])
        );
        clock.advance(999);
        assert!(db.has(b"session").await.unwrap());
        clock.advance(1);
        assert_eq!(
            db.get(b"session").await.unwrap(),
            None,
            "expires when now >= expire_at"
        );
        assert!(!db.has(b"session").await.unwrap());
    });
}

#[test]
fn expired_keys_stay_absent_after_flush_compaction_and_reopen() {
    let (db, store, clock) = fresh(small());
    run(async {
        db.put_with_options(b"k", b"v", ttl(10)).await.unwrap();
        db.put(b"forever", b"v").await.unwrap();
        db.flush().await.unwrap();
        clock.advance(10);
        assert_eq!(db.get(b"k").await.unwrap(), None);
        db.compact().await.unwrap();
        assert_eq!(db.get(b"k").await.unwrap(), None);
        db.close().await.unwrap();
    });
    let db = reopen(&store, &clock, small());
    run(async {
        assert_eq!(db.get(b"k").await.unwrap(), None);
        assert!(db.has(b"forever").await.unwrap());
    });
}

#[test]
fn put_without_ttl_overwrites_a_ttl_key_and_makes_it_permanent() {
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        db.put_with_options(b"k", b"1", ttl(100)).await.unwrap();
        db.put(b"k", b"2").await.unwrap();
        assert_eq!(db.ttl(b"k").await.unwrap(), -1);
        clock.advance(1_000);
        assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"2"[..]));
    });
}

#[test]
fn put_with_ttl_overwrites_a_permanent_key() {
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        db.put(b"k", b"1").await.unwrap();
        db.put_with_options(b"k", b"2", ttl(100)).await.unwrap();
        assert_eq!(db.ttl(b"k").await.unwrap(), 100);
        clock.advance(100);
        assert_eq!(db.get(b"k").await.unwrap(), None);
    });
}

#[test]
fn a_new_ttl_replaces_the_old_one() {
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        db.put_with_options(b"k", b"1", ttl(60)).await.unwrap();
        db.put_with_options(b"k", b"2", ttl(120)).await.unwrap();
        clock.advance(60);
        assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"2"[..]));
        assert_eq!(db.ttl(b"k").await.unwrap(), 60);
    });
}

#[test]
fn keep_ttl_keeps_the_current_expiry_and_a_new_key_gets_none() {
    let (db, _, clock) = fresh(DbOptions::default());
    let keep = PutOptions {
        ttl: Ttl::Keep,
        ..PutOptions::default()
    };
    run(async {
        db.put_with_options(b"k", b"1", ttl(100)).await.unwrap();
        clock.advance(40);
        db.put_with_options(b"k", b"2", keep).await.unwrap();
        assert_eq!(db.ttl(b"k").await.unwrap(), 60);
        db.put_with_options(b"fresh", b"x", keep).await.unwrap();
        assert_eq!(db.ttl(b"fresh").await.unwrap(), -1);
    });
}

#[test]
fn delete_removes_a_ttl_key_and_reports_whether_it_was_live() {
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        db.put_with_options(b"k", b"v", ttl(100)).await.unwrap();
        assert!(db.delete(b"k").await.unwrap());
        assert!(!db.delete(b"k").await.unwrap());
        assert_eq!(db.ttl(b"k").await.unwrap(), -2);
        db.put_with_options(b"e", b"v", ttl(5)).await.unwrap();
        clock.advance(5);
        assert!(
            !db.delete(b"e").await.unwrap(),
            "an expired key is not live"
        );
    });
}

#[test]
fn ttl_reports_remaining_ms_minus_one_and_minus_two() {
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        db.put_with_options(b"t", b"v", ttl(5_000)).await.unwrap();
        db.put(b"p", b"v").await.unwrap();
        clock.advance(1_234);
        assert_eq!(db.ttl(b"t").await.unwrap(), 3_766);
        assert_eq!(db.ttl(b"p").await.unwrap(), -1);
        assert_eq!(db.ttl(b"missing").await.unwrap(), -2);
        clock.advance(3_766);
        assert_eq!(db.ttl(b"t").await.unwrap(), -2);
    });
}

#[test]
fn zero_and_oversized_ttls_are_invalid_arguments() {
    let (db, _, _) = fresh(DbOptions::default());
    run(async {
        let e = db.put_with_options(b"k", b"v", ttl(0)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        let e = db
            .put_with_options(b"k", b"v", ttl(u64::MAX))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(db.get(b"k").await.unwrap(), None, "nothing was written");
    });
}

#[test]
fn an_expiry_past_the_range_of_times_is_an_invalid_argument_never_a_delete() {
    let (db, _, _) = fresh(DbOptions::default());
    run(async {
        db.put(b"k", b"v").await.unwrap();
        let far = i64::MAX as u64;
        let e = db.put_with_options(b"k", b"w", ttl(far)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        let e = db
            .expire(b"k", far, ExpireCondition::default())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        let e = db
            .get_ex(b"k", GetExOptions::ExpireAfter(far))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert_eq!(
            db.get(b"k").await.unwrap().as_deref(),
            Some(&b"v"[..]),
            "the key is untouched"
        );
        assert_eq!(db.ttl(b"k").await.unwrap(), -1);
    });
}

#[test]
fn expire_with_zero_ms_deletes_the_key_as_pexpire_does() {
    let (db, _, _) = fresh(DbOptions::default());
    run(async {
        let none = ExpireCondition::default();
        assert!(!db.expire(b"k", 0, none).await.unwrap(), "absent: false");
        db.put(b"k", b"v").await.unwrap();
        assert!(
            db.expire(b"k", 0, none).await.unwrap(),
            "live: deleted, true"
        );
        assert_eq!(db.get(b"k").await.unwrap(), None);
        assert_eq!(db.ttl(b"k").await.unwrap(), -2);
        // A condition that fails leaves the key, as Redis does.
        db.put(b"k", b"v").await.unwrap();
        let nx_fails = ExpireCondition { xx: true, ..none };
        assert!(!db.expire(b"k", 0, nx_fails).await.unwrap());
        assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"v"[..]));
    });
}

#[test]
fn bad_keys_and_values_are_rejected_with_their_kind() {
    let (db, _, _) = fresh(DbOptions::default());
    run(async {
        assert_eq!(
            db.put(b"", b"v").await.unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
        let long = vec![b'k'; ttlkv::MAX_KEY_LEN + 1];
        assert_eq!(
            db.put(&long, b"v").await.unwrap_err().kind(),
            ErrorKind::KeyTooLarge
        );
        assert_eq!(
            db.get(&long).await.unwrap_err().kind(),
            ErrorKind::KeyTooLarge
        );
        let big = vec![0u8; ttlkv::MAX_VALUE_LEN + 1];
        assert_eq!(
            db.put(b"k", &big).await.unwrap_err().kind(),
            ErrorKind::ValueTooLarge
        );
        db.put(&long[..ttlkv::MAX_KEY_LEN], b"max key is fine")
            .await
            .unwrap();
    });
}

#[test]
fn a_value_header_larger_than_its_limit_is_refused_at_open() {
    // Added to the value limit, a header of any size would lift it.
    refused_past_its_limit(
        "value_header_bytes",
        ttlkv::MAX_VALUE_HEADER_BYTES,
        |bytes| DbOptions {
            value_header_bytes: bytes,
            ..DbOptions::default()
        },
    );
}

#[test]
fn expire_at_in_the_past_leaves_the_key_absent() {
    let (db, _, _) = fresh(DbOptions::default());
    run(async {
        db.put(b"old", b"v").await.unwrap();
        let past = PutOptions {
            ttl: Ttl::ExpireAt(T0 - 1),
            ..PutOptions::default()
        };
        assert!(db.put_with_options(b"old", b"new", past).await.unwrap());
        assert_eq!(db.get(b"old").await.unwrap(), None);
        assert!(db.put(b"k", b"v").await.is_ok());
        assert!(db
            .expire_at(b"k", T0, ExpireCondition::default())
            .await
            .unwrap());
        assert_eq!(db.get(b"k").await.unwrap(), None);
    });
}

#[test]
fn default_ttl_applies_to_puts_that_give_none() {
    let options = DbOptions {
        default_ttl_ms: Some(1_000),
        ..DbOptions::default()
    };
    let (db, _, clock) = fresh(options);
    run(async {
        db.put(b"d", b"v").await.unwrap();
        db.put_with_options(
            b"n",
            b"v",
            PutOptions {
                ttl: Ttl::NoExpiry,
                ..Default::default()
            },
        )
        .await
        .unwrap();
        assert_eq!(db.ttl(b"d").await.unwrap(), 1_000);
        clock.advance(1_000);
        assert!(!db.has(b"d").await.unwrap());
        assert!(db.has(b"n").await.unwrap());
    });
}

#[test]
fn if_absent_and_if_present_treat_expired_keys_as_absent() {
    let (db, _, clock) = fresh(DbOptions::default());
    let nx = PutOptions::from(PutCondition::IfAbsent);
    let xx = PutOptions::from(PutCondition::IfPresent);
    run(async {
        assert!(!db.put_with_options(b"k", b"1", xx).await.unwrap());
        assert_eq!(db.get(b"k").await.unwrap(), None);
        assert!(db.put_with_options(b"k", b"1", nx).await.unwrap());
        assert!(!db.put_with_options(b"k", b"2", nx).await.unwrap());
        assert!(db.put_with_options(b"k", b"3", xx).await.unwrap());
        assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"3"[..]));
        db.put_with_options(b"t", b"1", ttl(10)).await.unwrap();
        clock.advance(10);
        assert!(db.put_with_options(b"t", b"2", nx).await.unwrap());
    });
}

#[test]
fn expire_conditions_follow_redis_with_no_ttl_as_infinite() {
    let (db, _, _) = fresh(DbOptions::default());
    let c = |nx, xx, gt, lt| ExpireCondition { nx, xx, gt, lt };
    run(async {
        db.put(b"k", b"v").await.unwrap();
        assert!(
            !db.expire(b"k", 100, c(false, true, false, false))
                .await
                .unwrap(),
            "XX without ttl"
        );
        assert!(
            !db.expire(b"k", 100, c(false, false, true, false))
                .await
                .unwrap(),
            "GT vs infinite"
        );
        assert!(
            db.expire(b"k", 100, c(false, false, false, true))
                .await
                .unwrap(),
            "LT vs infinite"
        );
        assert!(
            !db.expire(b"k", 50, c(true, false, false, false))
                .await
                .unwrap(),
            "NX with ttl"
        );
        assert!(db
            .expire(b"k", 200, c(false, false, true, false))
            .await
            .unwrap());
        assert_eq!(db.ttl(b"k").await.unwrap(), 200);
        assert!(!db
            .expire(b"k", 300, c(false, false, false, true))
            .await
            .unwrap());
        assert!(db
            .expire(b"k", 150, c(false, true, false, true))
            .await
            .unwrap());
        assert_eq!(db.ttl(b"k").await.unwrap(), 150);
        assert!(!db
            .expire(b"absent", 100, ExpireCondition::default())
            .await
            .unwrap());
        let e = db
            .expire(b"k", 1, c(true, false, true, false))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    });
}

#[test]
fn persist_removes_a_ttl_and_reports_whether_there_was_one() {
    let (db, _, clock) = fresh(DbOptions::default());
    run(async {
        db.put_with_options(b"k", b"v", ttl(100)).await.unwrap();
        assert!(db.persist(b"k").await.unwrap());
        assert!(!db.persist(b"k").await.unwrap());
        assert!(!db.persist(b"absent").await.unwrap());
        clock.advance(1_000);
        assert_eq!(db.ttl(b"k").await.unwrap(), -1);
    });
}

#[test]
fn ttl_changes_survive_flush_and_reopen() {
    let (db, store, clock) = fresh(small());
    run(async {
        db.put_with_options(b"a", b"v", ttl(1_000)).await.unwrap();
        db.put(b"b", b"v").await.unwrap();
        db.flush().await.unwrap();
        assert!(db.persist(b"a").await.unwrap());
        assert!(db
            .expire(b"b", 500, ExpireCondition::default())
            .await
            .unwrap());
        db.close().await.unwrap();
    });
    let db = reopen(&store, &clock, small());
    run(async {
        assert_eq!(db.ttl(b"a").await.unwrap(), -1);
        assert_eq!(db.ttl(b"b").await.unwrap(), 500);
        clock.advance(500);
        assert!(!db.has(b"b").await.unwrap());
    });
}

#[test]
fn reopen_keeps_ttls_enforced() {
    let (db, store, clock) = fresh(DbOptions::default());
    run(async {
        db.put_with_options(b"k", b"v", ttl(1_000)).await.unwrap();
        db.close().await.unwrap();
        assert_eq!(db.get(b"k").await.unwrap_err().kind(), ErrorKind::Closed);
    });
    clock.advance(500);
    let db = reopen(&store, &clock, DbOptions::default());
    run(async {
        assert_eq!(db.ttl(b"k").await.unwrap(), 500);
        clock.advance(500);
        assert_eq!(db.get(b"k").await.unwrap(), None);
    });
}

#[test]
fn batches_apply_all_or_nothing() {
    let (db, _, _) = fresh(DbOptions::default());
    run(async {
        db.put(b"x", b"old").await.unwrap();
        let mut b = WriteBatch::new();
        b.put(b"a", b"1")
            .put_with_options(b"b", b"2", ttl(10))
            .delete(b"x");
        assert!(db.write(b).await.unwrap());
        assert_eq!(db.get(b"a").await.unwrap().as_deref(), Some(&b"1"[..]));
        assert_eq!(db.ttl(b"b").await.unwrap(), 10);
        assert_eq!(db.get(b"x").await.unwrap(), None);

        // A failed condition rolls the whole batch back.
        let mut b = WriteBatch::new();
        b.put(b"c", b"3")
            .put_with_options(b"a", b"new", PutOptions::from(PutCondition::IfAbsent));
        assert!(!db.write(b).await.unwrap());
        assert_eq!(db.get(b"c").await.unwrap(), None);
        assert_eq!(db.get(b"a").await.unwrap().as_deref(), Some(&b"1"[..]));

        // An invalid op rejects the whole batch before anything is written.
        let mut b = WriteBatch::new();
        b.put(b"d", b"4").put(b"", b"bad");
        assert_eq!(
            db.write(b).await.unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
        assert_eq!(db.get(b"d").await.unwrap(), None);
    });
}

#[test]
fn later_ops_in_a_batch_see_earlier_ones() {
    let (db, _, _) = fresh(DbOptions::default());
    run(async {
        let mut b = WriteBatch::new();
        b.put(b"k", b"1")
            .put_with_options(b"k", b"2", PutOptions::from(PutCondition::IfPresent))
            .delete(b"k")
            .put(b"k", b"3");
        assert!(db.write(b).await.unwrap());
        assert_eq!(db.get(b"k").await.unwrap().as_deref(), Some(&b"3"[..]));
    });
}

#[test]
fn the_clock_never_goes_backwards_across_a_reopen() {
    let (db, store, clock) = fresh(DbOptions::default());
    run(async {
        db.put_with_options(b"k", b"v", ttl(1_000)).await.unwrap();
        db.close().await.unwrap();
    });
    clock.set(T0 - 1_000_000);
    let db = reopen(&store, &clock, DbOptions::default());
    assert!(db.now().unwrap() >= T0);
    run(async {
        assert_eq!(db.ttl(b"k").await.unwrap(), 1_000);
    });
}

/// A batch's puts and deletes: a key, and its value or `None` for a delete.
type BatchOps<'a> = &'a [(&'a [u8], Option<&'a [u8]>)];

/// A batch plans its rows in a sorted list while its keys come in ascending order and in a map
/// from the first key below the last one (`write/plan.rs`): a key written again must take its
/// last write on every path, and later ops must see the earlier ones' effect.
#[test]
fn a_batch_that_writes_a_key_again_keeps_its_last_write_in_any_key_order() {
    let (db, _, _) = fresh(DbOptions::default());
    run(async {
        let cases: [BatchOps; 7] = [
            // Ascending, then the last key again.
            &[(b"a", Some(b"1")), (b"b", Some(b"1")), (b"b", Some(b"2"))],
            // Ascending, then an earlier key again (found in the sorted list, not at its end).
            &[(b"c", Some(b"1")), (b"d", Some(b"1")), (b"c", Some(b"2"))],
            // A key below the last that was not planned (the map from there on), then repeats.
            &[
                (b"f", Some(b"1")),
                (b"e", Some(b"1")),
                (b"f", Some(b"2")),
                (b"e", Some(b"2")),
            ],
            // A put, its delete, a put again; a delete, then a put.
            &[
                (b"g", Some(b"1")),
                (b"g", None),
                (b"g", Some(b"3")),
                (b"h", None),
                (b"h", Some(b"4")),
            ],
            // A put, then its delete.
            &[(b"i", Some(b"1")), (b"i", None)],
            // A key below the last, then a delete that must find the first put among the plans.
            &[(b"p", Some(b"1")), (b"o", Some(b"1")), (b"p", None)],
            // Descending throughout, each key twice.
            &[
                (b"l", Some(b"1")),
                (b"k", Some(b"1")),
                (b"j", Some(b"1")),
                (b"l", Some(b"2")),
                (b"j", Some(b"2")),
            ],
        ];
        for ops in cases {
            let mut batch = WriteBatch::new();
            let mut want = std::collections::BTreeMap::new();
            for (key, value) in ops {
                match value {
                    Some(v) => batch.put(key, v),
                    None => batch.delete(key),
                };
                want.insert(key.to_vec(), value.map(<[u8]>::to_vec));
            }
            assert!(db.write(batch).await.unwrap());
            for (key, value) in want {
                assert_eq!(db.get(&key).await.unwrap(), value, "{ops:?}: {key:?}");
            }
        }
        // A conditional put sees the batch's own earlier write of its key.
        let mut batch = WriteBatch::new();
        batch.put(b"m", b"1").put(b"n", b"1").put_with_options(
            b"m",
            b"2",
            PutOptions::from(PutCondition::IfPresent),
        );
        assert!(db.write(batch).await.unwrap());
        assert_eq!(db.get(b"m").await.unwrap().as_deref(), Some(&b"2"[..]));
    });
}

#[test]
fn expire_takes_any_ttl_whose_expiry_fits_and_refuses_one_past_the_end_of_time() {
    let (db, _, _) = fresh(DbOptions::default());
    run(async {
        db.put(b"k", b"v").await.unwrap();
        let now = T0;
        for ms in [(i64::MAX - now) as u64 + 1, u64::MAX / 2, u64::MAX] {
            let e = db
                .expire(b"k", ms, ExpireCondition::default())
                .await
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{ms}");
        }
        assert_eq!(
            db.ttl(b"k").await.unwrap(),
            -1,
            "nothing changed, nothing deleted"
        );
        let last = (i64::MAX - now) as u64;
        assert!(db
            .expire(b"k", last, ExpireCondition::default())
            .await
            .unwrap());
        assert_eq!(
            db.get_entry(b"k").await.unwrap().unwrap().expire_at,
            Some(i64::MAX)
        );
        assert!(db.has(b"k").await.unwrap());
    });
}

#[test]
fn an_l0_compaction_trigger_near_usize_max_never_overflows_a_write() {
    for trigger in [usize::MAX, usize::MAX / 2, usize::MAX / 3 + 1] {
        let (db, _, _) = fresh(DbOptions {
            l0_compaction_trigger: trigger,
            ..DbOptions::default()
        });
        run(async {
            for i in 0..20u32 {
                db.put(&i.to_be_bytes(), b"v").await.unwrap();
                db.flush().await.unwrap();
            }
            assert_eq!(db.stats().levels[0].ssts.len(), 20, "no compaction was due");
        });
    }
}
