//! Time, injected: the [`Clock`] trait, the system clock, a fake clock for tests, and the
//! [`MonotonicClock`] wrapper the engine reads through.
//!
//! This is the only module allowed to read the system time (`clippy.toml` bans it elsewhere).
//! Times are milliseconds since the Unix epoch as `i64`.

use alloc::rc::Rc;
use core::cell::Cell;

use crate::error::{Error, Result};

/// A source of wall-clock time in milliseconds since the Unix epoch.
///
/// It may jump (forwards or backwards); the engine wraps it in a [`MonotonicClock`].
pub trait Clock {
    /// The current time, in ms since the Unix epoch.
    fn now_ms(&self) -> i64;
}

impl<C: Clock + ?Sized> Clock for Rc<C> {
    fn now_ms(&self) -> i64 {
        (**self).now_ms()
    }
}

/// The operating system's clock (`std` only).
#[cfg(feature = "std")]
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

#[cfg(feature = "std")]
impl Clock for SystemClock {
    #[allow(
        clippy::disallowed_methods,
        reason = "the one sanctioned read of system time"
    )]
    fn now_ms(&self) -> i64 {
        extern crate std;
        match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
            Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
        }
    }
}

/// A clock that only moves when told to. Clones share the same time, so a test keeps one handle
/// and gives another to the database.
#[derive(Clone, Debug, Default)]
pub struct FakeClock {
    now: Rc<Cell<i64>>,
}

impl FakeClock {
    /// A fake clock reading `start_ms`.
    pub fn new(start_ms: i64) -> Self {
        FakeClock {
            now: Rc::new(Cell::new(start_ms)),
        }
    }

    /// Set the time (it may go backwards: the engine's monotonic wrapper must cope).
    pub fn set(&self, ms: i64) {
        self.now.set(ms);
    }

    /// Move the time forward by `ms` (saturating).
    pub fn advance(&self, ms: i64) {
        self.now.set(self.now.get().saturating_add(ms));
    }
}

impl Clock for FakeClock {
    fn now_ms(&self) -> i64 {
        self.now.get()
    }
}

/// The latest time a clock may plausibly read: the last millisecond of the year 9999. A reading
/// beyond it (nanoseconds or microseconds by mistake, `1e300`, a saturated conversion) is
/// rejected: stored as the clock seed it would hold time there for good, and added to a TTL it
/// would overflow.
pub const MAX_PLAUSIBLE_MS: i64 = 253_402_300_799_999;

/// How far ahead of the time last handed out a reading may jump without a second look. A
/// reading further ahead is taken only if the next reading confirms it (a machine that slept,
/// a database opened after a long pause); a single reading far ahead of its neighbours is a
/// misreading and is dropped in favour of the next one.
pub const MAX_UNCONFIRMED_LEAP_MS: i64 = 60_000;

/// The error for a clock reading that is not a plausible time.
fn implausible(ms: i64) -> Error {
    let shown = if ms == i64::MIN || ms == i64::MAX {
        alloc::string::String::from("a value that is not a finite number of ms")
    } else {
        alloc::format!("{ms}")
    };
    Error::invalid(alloc::format!(
        "the clock read {shown}, which is not a plausible time (ms since the Unix epoch, \
         0 to {MAX_PLAUSIBLE_MS}); the reading was not used"
    ))
}

/// `ms` if it is a plausible time (see [`MAX_PLAUSIBLE_MS`]).
pub fn plausible(ms: i64) -> Result<i64> {
    if (0..=MAX_PLAUSIBLE_MS).contains(&ms) {
        Ok(ms)
    } else {
        Err(implausible(ms))
    }
}

/// A clock that never goes backwards: each reading is at least the previous one and at least the
/// seed (the highest timestamp ever issued, kept in the manifest, so time does not go backwards
/// across a reopen either). Readings that are not plausible never become its time: see
/// [`MonotonicClock::now`].
pub struct MonotonicClock {
    source: Rc<dyn Clock>,
    last: Cell<i64>,
}

impl MonotonicClock {
    /// Wrap `source`; no reading will be lower than `seed_ms`.
    pub fn new(source: Rc<dyn Clock>, seed_ms: i64) -> Self {
        MonotonicClock {
            source,
            last: Cell::new(seed_ms),
        }
    }

    /// One plausible reading of the source, not yet compared with the time handed out.
    pub fn read_source(&self) -> Result<i64> {
        plausible(self.source.now_ms())
    }

    /// The current time: `max(source, every earlier reading, seed)`.
    ///
    /// A reading outside `0..=`[`MAX_PLAUSIBLE_MS`] is an `InvalidArgument` error and changes
    /// nothing. A reading more than [`MAX_UNCONFIRMED_LEAP_MS`] ahead of the time last handed
    /// out is checked against a second reading, and the earlier of the two is used: a single
    /// misreading far ahead never becomes the time.
    pub fn now(&self) -> Result<i64> {
        let last = self.last.get();
        let mut t = self.read_source()?;
        if t > last.saturating_add(MAX_UNCONFIRMED_LEAP_MS) && last >= 0 {
            // The earlier of two readings: a misreading is either one of them, not both.
            t = t.min(self.read_source()?);
        }
        let t = t.max(last);
        self.last.set(t);
        Ok(t)
    }

    /// The highest time handed out so far (what the manifest stores as the clock seed).
    pub fn last_issued(&self) -> i64 {
        self.last.get()
    }

    /// Raise the floor to at least `ms` (used while recovering timestamps from the WAL).
    pub fn observe(&self, ms: i64) {
        if ms > self.last.get() {
            self.last.set(ms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_never_goes_backwards_when_the_source_does() {
        let fake = FakeClock::new(1_000);
        let clock = MonotonicClock::new(Rc::new(fake.clone()), 0);
        assert_eq!(clock.now().unwrap(), 1_000);
        fake.set(500);
        assert_eq!(clock.now().unwrap(), 1_000);
        fake.set(2_000);
        assert_eq!(clock.now().unwrap(), 2_000);
    }

    #[test]
    fn monotonic_clock_starts_at_the_seed() {
        let fake = FakeClock::new(10);
        let clock = MonotonicClock::new(Rc::new(fake), 99);
        assert_eq!(clock.now().unwrap(), 99);
        clock.observe(150);
        assert_eq!(clock.last_issued(), 150);
    }

    /// A clock that reads the values of a list, one per reading, then the last for good.
    struct Readings(core::cell::RefCell<alloc::vec::Vec<i64>>);

    impl Clock for Readings {
        fn now_ms(&self) -> i64 {
            let mut r = self.0.borrow_mut();
            if r.len() > 1 {
                r.remove(0)
            } else {
                r[0]
            }
        }
    }

    fn readings(list: &[i64]) -> Rc<Readings> {
        Rc::new(Readings(core::cell::RefCell::new(list.to_vec())))
    }

    #[test]
    fn a_single_reading_far_ahead_is_dropped_for_the_next_one() {
        let century = 100 * 365 * 86_400_000;
        let clock = MonotonicClock::new(readings(&[1_000, 1_000 + century, 1_010]), 0);
        assert_eq!(clock.now().unwrap(), 1_000);
        assert_eq!(clock.now().unwrap(), 1_010);
        assert_eq!(clock.last_issued(), 1_010);
    }

    #[test]
    fn a_leap_ahead_that_the_next_reading_confirms_is_taken() {
        let day = 86_400_000;
        let clock = MonotonicClock::new(readings(&[1_000, 1_000 + day, 1_001 + day]), 0);
        assert_eq!(clock.now().unwrap(), 1_000);
        assert_eq!(clock.now().unwrap(), 1_000 + day);
    }

    #[test]
    fn readings_that_are_no_plausible_time_are_errors_and_change_nothing() {
        for bad in [i64::MAX, i64::MIN, MAX_PLAUSIBLE_MS + 1, -1] {
            let clock = MonotonicClock::new(readings(&[bad]), 500);
            let e = clock.now().unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{bad}");
            assert_eq!(clock.last_issued(), 500);
        }
    }

    #[cfg(feature = "std")]
    #[test]
    fn system_clock_reads_a_plausible_time() {
        // 2020-01-01 in ms: any real machine is later than that.
        assert!(SystemClock.now_ms() > 1_577_836_800_000);
    }
}
