//! What every call of the API shares: its result type, how a core error becomes the JS error
//! it rejects with, and how an async call answers (at once when nothing had to wait, see
//! `promise.rs`, else with a Promise).

use wasm_bindgen::JsValue;

use crate::error::to_js_error;
#[cfg(feature = "row-cache")]
pub(super) use crate::promise::at_once;
use crate::promise::settle;

/// A call's result: the error is the `TtlKvError` to throw or reject with.
pub(super) type JsResult<T> = Result<T, JsValue>;

/// The JS error for core error `e`.
pub(super) fn fail(e: ttlkv::Error) -> JsValue {
    to_js_error(&e)
}

/// An `INVALID_ARGUMENT` error.
pub(super) fn invalid(message: &str) -> JsValue {
    fail(ttlkv::Error::invalid(message))
}

/// The answer of an async call: its value at once if `future` is ready on its first poll, else a
/// Promise of it. The future gives the JS value itself: a wrapper future converting its answer
/// would be one more state machine per method in the module.
pub(super) fn promise<F>(future: F) -> JsValue
where
    F: core::future::Future<Output = JsResult<JsValue>> + 'static,
{
    settle(Box::pin(future))
}
