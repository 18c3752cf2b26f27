//! Core errors as JavaScript errors: a `js_sys::Error` whose `name` is `"TtlKvError"`, whose
//! `code` is the stable code of the error's kind (`CODES` in `bindings/js/index.d.ts`) and, for a failure of the
//! storage underneath, whose `cause` is the JavaScript error that storage threw.
//!
//! The core's errors are plain data (it is `no_std` and knows nothing of JavaScript), so the page
//! stores on the JS side remember each underlying JS error next to the message of the core error
//! they made from it ([`remember_cause`]); [`to_js_error`] finds it again by that message. Only
//! the last few are kept: a cause is wanted for the error being reported now.

use std::cell::RefCell;

use js_sys::{Error as JsError, Reflect};
use wasm_bindgen::JsValue;

/// How many underlying errors are remembered.
const REMEMBERED: usize = 16;

thread_local! {
    static CAUSES: RefCell<Vec<(String, JsValue)>> = const { RefCell::new(Vec::new()) };
}

/// Remember `cause` as the JS error behind the core error whose message is `message`.
pub fn remember_cause(message: &str, cause: JsValue) {
    CAUSES.with(|c| {
        let mut causes = c.borrow_mut();
        if causes.len() == REMEMBERED {
            causes.remove(0);
        }
        causes.push((message.to_owned(), cause));
    });
}

/// The remembered cause of an error with this message (the core may have added context in front).
fn cause_of(message: &str) -> Option<JsValue> {
    CAUSES.with(|c| {
        c.borrow()
            .iter()
            .rev()
            .find(|(m, _)| message.ends_with(m.as_str()))
            .map(|(_, cause)| cause.clone())
    })
}

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
    if let Some(cause) = cause_of(error.message()) {
        let _ = Reflect::set(&js, &JsValue::from_str("cause"), &cause);
    }
    js.into()
}
