//! The JS clock adapter: the `clock` option of `open()` (default `Date.now`) as a core
//! [`ttlkv::Clock`]. The engine wraps it in its monotonic clock, so a JS clock that jumps
//! backwards can never make a key come back to life, and a reading that is no plausible time
//! (garbage) is an error for the call that read it, never stored.

use js_sys::Function;
use wasm_bindgen::JsValue;

/// A clock read from JavaScript.
#[derive(Clone, Debug)]
pub enum JsClock {
    /// `Date.now()`.
    DateNow,
    /// A function the app supplied, called with no arguments; it must return ms since the Unix
    /// epoch. A throw or a non-finite result reads as `i64::MIN`, and a value past `i64`'s range
    /// saturates: both are no plausible time, so the engine rejects the reading with
    /// `INVALID_ARGUMENT` (never a panic, never stored).
    Function(Function),
}

impl ttlkv::Clock for JsClock {
    #[allow(
        clippy::disallowed_methods,
        reason = "the JS clock adapter is where Date.now is read"
    )]
    fn now_ms(&self) -> i64 {
        let ms = match self {
            JsClock::DateNow => js_sys::Date::now(),
            JsClock::Function(f) => f
                .call0(&JsValue::UNDEFINED)
                .ok()
                .and_then(|v| v.as_f64())
                .unwrap_or(f64::NAN),
        };
        if ms.is_finite() {
            // Saturating float-to-int conversion; fractions of a ms are dropped.
            ms as i64
        } else {
            i64::MIN
        }
    }
}
