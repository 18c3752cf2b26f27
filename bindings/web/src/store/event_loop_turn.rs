//! Giving the browser's event loop a turn in the middle of long engine work (the IndexedDB
//! store's [`PageStore::yield_now`](ttlkv::store::PageStore::yield_now)): `scheduler.yield()`
//! where the host has it (Chromium; the rest of the work then runs before other queued tasks of
//! lower priority), else a `setTimeout` of 0.

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Resolves after the host ran whatever else was waiting for the thread.
pub async fn event_loop_turn() {
    let global = js_sys::global();
    let promise = scheduler_yield(&global).unwrap_or_else(|| timeout_zero(&global));
    // Neither can reject; were one to, the work simply goes on.
    let _ = JsFuture::from(promise).await;
}

/// `scheduler.yield()`, if the host has it.
fn scheduler_yield(global: &JsValue) -> Option<Promise> {
    let scheduler = Reflect::get(global, &JsValue::from_str("scheduler")).ok()?;
    let yield_fn = Reflect::get(&scheduler, &JsValue::from_str("yield"))
        .ok()?
        .dyn_into::<Function>()
        .ok()?;
    yield_fn.call0(&scheduler).ok()?.dyn_into::<Promise>().ok()
}

/// A promise resolved by `setTimeout(resolve, 0)`; one already resolved if there is no
/// `setTimeout` (then the turn is only a microtask).
fn timeout_zero(global: &JsValue) -> Promise {
    let set_timeout = Reflect::get(global, &JsValue::from_str("setTimeout"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok());
    match set_timeout {
        Some(set_timeout) => Promise::new(&mut |resolve, _reject| {
            let _ = set_timeout.call2(global, &resolve, &JsValue::from_f64(0.0));
        }),
        None => Promise::resolve(&JsValue::UNDEFINED),
    }
}
