//! Core errors as JavaScript errors, and JavaScript errors as the sources of core errors.
//!
//! - [`JsCause`]: a JS value a page store was given as its failure (a `DOMException`, an
//!   adapter's rejection), kept as the [`source`](ttlkv::Error::with_source) of the core error
//!   made from it. The core is `no_std` and wants `Send + Sync` sources (so that native users can
//!   hand its errors to any error library), which a `JsValue` is not: the value itself waits in
//!   this module's table, and the cause holds its slot, freed when the cause is dropped.
//! - [`to_js_error`]: the `TtlKvError` a rejected call carries, created with the package's own
//!   class (handed over once by [`use_error_class`], so `instanceof TtlKvError` holds), with the
//!   kind's stable code and, when the error has a JS source, that value as its `cause`. Before a
//!   class is handed over (a bare wasm test), it is a plain `Error` with the same name and code.

use std::cell::RefCell;
use std::fmt;

use js_sys::{Array, Error as JsError, Function, Object, Reflect};
use wasm_bindgen::prelude::*;

thread_local! {
    /// The JS values of the live [`JsCause`]s, by slot (`None`: a free slot).
    static CAUSES: RefCell<Vec<Option<JsValue>>> = const { RefCell::new(Vec::new()) };
    /// The package's `TtlKvError` class (`use_error_class`).
    static ERROR_CLASS: RefCell<Option<Function>> = const { RefCell::new(None) };
}

/// A JS value that caused a core error: see the module docs.
pub struct JsCause {
    slot: usize,
    /// `name: message` of the value, read once when it was caught.
    text: String,
}

impl JsCause {
    /// Keep `value` as a cause; `text` describes it.
    pub fn new(value: JsValue, text: String) -> JsCause {
        let slot = CAUSES.with(|c| {
            let mut causes = c.borrow_mut();
            match causes.iter().position(Option::is_none) {
                Some(free) => {
                    causes[free] = Some(value);
                    free
                }
                None => {
                    causes.push(Some(value));
                    causes.len() - 1
                }
            }
        });
        JsCause { slot, text }
    }

    /// The JS value itself.
    pub fn value(&self) -> JsValue {
        CAUSES.with(|c| c.borrow()[self.slot].clone().unwrap_or_default())
    }
}

impl Drop for JsCause {
    fn drop(&mut self) {
        CAUSES.with(|c| c.borrow_mut()[self.slot] = None);
    }
}

impl fmt::Display for JsCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for JsCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for JsCause {}

/// `useErrorClass(TtlKvError)`: the class every error from here is made with from now on
/// (`new TtlKvError(code, message, { cause })`). The package's loader hands it over once the
/// engine is instantiated.
#[wasm_bindgen(js_name = useErrorClass)]
pub fn use_error_class(class: Function) {
    ERROR_CLASS.with(|c| *c.borrow_mut() = Some(class));
}

/// The JS value a rejected promise carries for `error`.
pub fn to_js_error(error: &ttlkv::Error) -> JsValue {
    let code = JsValue::from_str(error.kind().code());
    let cause = error
        .cause()
        .map(|source| match source.downcast_ref::<JsCause>() {
            Some(js) => js.value(),
            None => JsError::new(&source.to_string()).into(),
        });
    let class = ERROR_CLASS.with(|c| c.borrow().clone());
    if let Some(class) = class {
        let options = Object::new();
        if let Some(cause) = &cause {
            let _ = Reflect::set(&options, &JsValue::from_str("cause"), cause);
        }
        let args = Array::of3(&code, &JsValue::from_str(error.message()), &options);
        if let Ok(made) = Reflect::construct(&class, &args) {
            return made;
        }
    }
    let js = JsError::new(error.message());
    js.set_name("TtlKvError");
    // Setting a property on a fresh Error object cannot fail.
    let _ = Reflect::set(&js, &JsValue::from_str("code"), &code);
    if let Some(cause) = cause {
        let _ = Reflect::set(&js, &JsValue::from_str("cause"), &cause);
    }
    js.into()
}
