//! The JS clock adapter: the `clock` option of `open()` (default `Date.now`) as a core
//! [`ttlkv::Clock`]. The engine wraps it in its monotonic clock, so a JS clock that jumps
//! backwards (or returns garbage) can never make a key come back to life.

use js_sys::Function;
use wasm_bindgen::JsValue;

/// A clock read from JavaScript.
#[derive(Clone, Debug)]
pub enum JsClock {
    /// `Date.now()`.
    DateNow,
    /// A function the app supplied, called with no arguments; it must return ms since the Unix
    /// epoch. A throw or a non-finite result reads as "no time passed" (the monotonic wrapper
    /// then keeps the last time), never as a panic.
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
