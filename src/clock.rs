//! Time, injected: the [`Clock`] trait, the system clock, a fake clock for tests, and the
//! [`MonotonicClock`] wrapper the engine reads through.
//!
//! This is the only module allowed to read the system time (`clippy.toml` bans it elsewhere).
//! Times are milliseconds since the Unix epoch as `i64`.

use alloc::rc::Rc;
use core::cell::Cell;

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

/// A clock that never goes backwards: each reading is at least the previous one and at least the
/// seed (the highest timestamp ever issued, kept in the manifest, so time does not go backwards
/// across a reopen either).
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

    /// The current time: `max(source, every earlier reading, seed)`.
    pub fn now(&self) -> i64 {
        let t = self.source.now_ms().max(self.last.get());
        self.last.set(t);
        t
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
        assert_eq!(clock.now(), 1_000);
        fake.set(500);
        assert_eq!(clock.now(), 1_000);
        fake.set(2_000);
        assert_eq!(clock.now(), 2_000);
    }

    #[test]
    fn monotonic_clock_starts_at_the_seed() {
        let fake = FakeClock::new(10);
        let clock = MonotonicClock::new(Rc::new(fake), 99);
        assert_eq!(clock.now(), 99);
        clock.observe(150);
        assert_eq!(clock.last_issued(), 150);
    }

    #[cfg(feature = "std")]
    #[test]
    fn system_clock_reads_a_plausible_time() {
        // 2020-01-01 in ms: any real machine is later than that.
        assert!(SystemClock.now_ms() > 1_577_836_800_000);
    }
}
