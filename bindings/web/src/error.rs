//! Core errors as JavaScript errors: a `js_sys::Error` whose `name` is `"TtlKvError"` and whose
//! `code` is the stable code of the error's kind (`API.md`, "Errors").

use js_sys::{Error as JsError, Reflect};
use wasm_bindgen::JsValue;

/// The JS value a rejected promise carries for `error`.
pub fn to_js_error(error: &ttlkv::Error) -> JsValue {
    let js = JsError::new(error.message());
    js.set_name("TtlKvError");
    // Setting a property on a fresh Error object cannot fail.
    let _ = Reflect::set(
        &js,
        &JsValue::from_str("code"),
        &JsValue::from_str(error.kind().code()),
    );
    js.into()
}
