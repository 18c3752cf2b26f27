//! One bad clock reading never poisons a database. A reading that is no plausible time
//! (non-finite, saturated, nanoseconds by mistake, beyond the year 9999) is an `InvalidArgument`
//! error and is never used or stored; a single reading far ahead of its neighbours is dropped for
//! the next one; a database whose stored time is already far ahead of a good clock refuses to
//! open with a clear error, and opens with `reset_clock`, after which TTLs work again.

mod common;
use common::*;

use std::cell::RefCell;
use std::rc::Rc;

use ttlkv::clock::MAX_PLAUSIBLE_MS;
use ttlkv::store::MemoryStore;
use ttlkv::{Clock, Db, DbOptions, ErrorKind, FakeClock, Lookup, PutOptions};

/// A clock that reads `base`, except for readings queued in `glitches`, each used once.
#[derive(Clone)]
struct Glitchy {
    base: FakeClock,
    glitches: Rc<RefCell<Vec<i64>>>,
}

impl Glitchy {
    fn new() -> Self {
        Glitchy {
            base: FakeClock::new(T0),
            glitches: Rc::default(),
        }
    }

    fn misread_once(&self, ms: i64) {
        self.glitches.borrow_mut().push(ms);
    }
}

impl Clock for Glitchy {
    fn now_ms(&self) -> i64 {
        let next = self.glitches.borrow_mut().pop();
        next.unwrap_or_else(|| self.base.now_ms())
    }
}

const CENTURY: i64 = 100 * 365 * 86_400_000;

/// A database on memory storage with default options, read through a [`Glitchy`] clock.
fn glitchy_db() -> (Glitchy, Db) {
    let clock = Glitchy::new();
    let db = run(Db::open(
        MemoryStore::new(),
        clock.clone(),
        DbOptions::default(),
    ))
    .unwrap();
    (clock, db)
}

#[test]
fn a_single_reading_a_century_ahead_is_never_stored_and_ttls_keep_working() {
    let store = MemoryStore::new();
    let clock = Glitchy::new();
    let db = run(Db::open(store.clone(), clock.clone(), DbOptions::default())).unwrap();
    clock.misread_once(T0 + CENTURY);
    run(db.put(b"before", b"v")).unwrap();
    run(db.close()).unwrap();
    // Reopened on the good clock, a 1 s TTL runs out after 1 s.
    let db = run(Db::open(store, clock.clone(), DbOptions::default())).unwrap();
    assert!(
        db.now().unwrap() < T0 + 60_000,
        "the stored time is the good one"
    );
    run(db.put_with_options(b"k", b"v", PutOptions::expire_after(1_000))).unwrap();
    clock.base.advance(3_600_000);
    assert!(!run(db.has(b"k")).unwrap(), "an hour later the key is gone");
    assert_eq!(run(db.ttl(b"k")).unwrap(), -2);
}

#[test]
fn readings_that_are_no_plausible_time_are_invalid_arguments_and_change_nothing() {
    // i64::MAX is what a JS clock of 1e300 (or any value past ~9.2e18) converts to; i64::MIN is
    // a non-finite one; nanoseconds since the epoch are ~1.7e18.
    for bad in [
        i64::MAX,
        i64::MIN,
        1_767_225_600_000_000_000,
        MAX_PLAUSIBLE_MS + 1,
    ] {
        let (db, store, _) = fresh(DbOptions::default());
        let clock = Glitchy::new();
        let db2 = {
            run(db.close()).unwrap();
            run(Db::open(store.clone(), clock.clone(), DbOptions::default())).unwrap()
        };
        clock.misread_once(bad);
        let e = run(db2.put_with_options(b"k", b"v", PutOptions::expire_after(1_000))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{bad}: {e}");
        assert!(e.message().contains("plausible"), "{e}");
        assert_eq!(
            run(db2.get(b"k")).unwrap(),
            None,
            "{bad}: nothing was written"
        );
        // The next (good) reading works, and a TTL put is a TTL put, not a delete.
        assert!(run(db2.put_with_options(b"k", b"v", PutOptions::expire_after(1_000))).is_ok());
        assert_eq!(
            run(db2.get(b"k")).unwrap().as_deref(),
            Some(&b"v"[..]),
            "{bad}"
        );
        assert_eq!(run(db2.ttl(b"k")).unwrap(), 1_000);
        run(db2.close()).unwrap();
        let reopened = run(Db::open(store, clock.clone(), DbOptions::default())).unwrap();
        assert!(reopened.now().unwrap() < T0 + 60_000, "{bad}: never stored");
    }
}

#[test]
fn a_database_whose_stored_time_is_far_ahead_refuses_to_open_until_reset_clock() {
    let store = MemoryStore::new();
    let ahead = FakeClock::new(T0 + CENTURY);
    let db = run(Db::open(store.clone(), ahead, DbOptions::default())).unwrap();
    run(db.put(b"kept", b"v")).unwrap();
    run(db.close()).unwrap();
    // The clock is right again: the database last handed out a time a century ahead.
    let clock = FakeClock::new(T0);
    let e = run(Db::open(store.clone(), clock.clone(), DbOptions::default())).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(
        e.message().contains("reset_clock"),
        "the error says how to recover: {e}"
    );
    let reset = DbOptions {
        reset_clock: true,
        ..DbOptions::default()
    };
    let db = run(Db::open(store.clone(), clock.clone(), reset)).unwrap();
    assert_eq!(db.now().unwrap(), T0);
    assert_eq!(
        run(db.get(b"kept")).unwrap().as_deref(),
        Some(&b"v"[..]),
        "nothing is lost"
    );
    run(db.put_with_options(b"k", b"v", PutOptions::expire_after(1_000))).unwrap();
    clock.advance(2_000);
    assert!(
        !run(db.has(b"k")).unwrap(),
        "TTLs run on the clock's time again"
    );
    assert_eq!(run(db.purge_expired(10)).unwrap().removed, 1);
    run(db.close()).unwrap();
    // And the next plain open is fine.
    run(Db::open(store, clock, DbOptions::default())).unwrap();
}

#[test]
fn times_left_only_in_the_wal_are_held_to_the_same_rule_as_the_stored_time() {
    let store = MemoryStore::new();
    let clock = FakeClock::new(T0);
    let db = run(Db::open(store.clone(), clock.clone(), DbOptions::default())).unwrap();
    // The clock leaps a year ahead (and stays: the second look confirms it); a durable put lands
    // in the WAL with that time, and the context is killed before any manifest commit.
    clock.advance(365 * 86_400_000);
    run(db.put_with_options(b"k", b"v", PutOptions::expire_after(3_600_000))).unwrap();
    drop(db);
    clock.set(T0 + 1_000);
    let e = run(Db::open(store.clone(), clock.clone(), DbOptions::default()))
        .err()
        .unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let reset = DbOptions {
        reset_clock: true,
        ..DbOptions::default()
    };
    let db = run(Db::open(store, clock, reset)).unwrap();
    assert!(db.now().unwrap() < T0 + 60_000, "time is the clock's again");
    assert_eq!(
        run(db.get(b"k")).unwrap().as_deref(),
        Some(&b"v"[..]),
        "nothing acknowledged is lost"
    );
}

#[test]
fn a_get_answered_at_once_from_the_row_cache_reads_the_clock_as_get_does() {
    let (clock, db) = glitchy_db();
    run(db.put_with_options(b"k", b"v", PutOptions::expire_after(1_000))).unwrap();
    // Read twice: the row cache keeps a key missed twice lately (or once, where it has room).
    for _ in 0..2 {
        assert_eq!(run(db.get(b"k")).unwrap().as_deref(), Some(&b"v"[..]));
    }
    let in_place = || -> ttlkv::Result<Option<Option<Vec<u8>>>> {
        Ok(match db.get_with(b"k", |v| v.map(<[u8]>::to_vec))? {
            Lookup::Now(value) => Some(value),
            Lookup::Later(_) => None,
        })
    };
    if !cfg!(feature = "row-cache") && !cfg!(feature = "point-index") {
        // Built without the row cache and the search without a wait (as the browser's engine
        // is): never an answer at once.
        assert_eq!(in_place().unwrap(), None);
        return;
    }
    clock.misread_once(i64::MIN);
    let e = in_place().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    // The next reading is good; an hour later the key is gone, in place as by `get`.
    assert_eq!(in_place().unwrap(), Some(Some(b"v".to_vec())));
    clock.base.advance(3_600_000);
    assert_eq!(in_place().unwrap(), Some(None));
    assert_eq!(run(db.get(b"k")).unwrap(), None);
}

#[test]
fn a_get_on_a_closed_handle_fails_closed_without_asking_the_clock() {
    let (clock, db) = glitchy_db();
    let ns = run(db.namespace("sessions", None)).unwrap();
    for handle in [&db, &ns] {
        run(handle.put(b"k", b"v")).unwrap();
        // Read twice: the row cache keeps the key, so a get could answer at once.
        for _ in 0..2 {
            assert_eq!(run(handle.get(b"k")).unwrap().as_deref(), Some(&b"v"[..]));
        }
    }
    assert!(run(db.drop_namespace("sessions")).unwrap());
    run(db.close()).unwrap();
    for handle in [&db, &ns] {
        // A reading that would fail the call, queued: a closed handle never asks for it.
        clock.misread_once(i64::MIN);
        let e = run(handle.get(b"k")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Closed, "get: {e}");
        let e = handle
            .get_with(b"k", |v| v.map(<[u8]>::to_vec))
            .err()
            .expect("get_with on a closed handle");
        assert_eq!(e.kind(), ErrorKind::Closed, "get_with: {e}");
        assert_eq!(clock.glitches.borrow_mut().pop(), Some(i64::MIN));
    }
}
