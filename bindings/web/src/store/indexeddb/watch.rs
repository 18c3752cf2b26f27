//! A commit's transaction watched from JS (`mod.rs`): made to keep the error of its first request
//! that failed, as its `error`, and how it ended, as a `Promise`.
//!
//! The error: the transaction's own `error` does not always say what aborted it. Browsers set it
//! only once the failed request's `error` event has been dispatched, after a wait for the end may
//! have seen the abort, and a request awaited after the one that failed gets an `AbortError` that
//! hides the first cause (a page over the quota, whose `QUOTA_EXCEEDED` a caller must see).
//!
//! The end: a `Promise` settled when the transaction ends, never rejected: true if it completed
//! with no request failed, false if it aborted or a request failed. (With no `commit()` called, a
//! failed request aborts the transaction in every browser; a transaction told to `commit()` could
//! complete without a failed request's write, so a completion after a failure is a failure too.)
//! Listeners of JS's own, where idb's future over the transaction left Rust closures attached to
//! it: a commit that returned early (a failed check, a request that failed) dropped them, and the
//! abort and the requests' errors that followed called them, each an uncaught "closure invoked
//! recursively or after being dropped". A JS listener is also one import where a Rust closure kept
//! alive for the transaction would be more.

use js_sys::Promise;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
export function watchTransaction(transaction) {
  let failed = false;
  let first;
  transaction.addEventListener("error", (event) => {
    failed = true;
    first ??= event.target?.error;
  });
  const own = Object.getOwnPropertyDescriptor(IDBTransaction.prototype, "error").get;
  Object.defineProperty(transaction, "error", { get: () => first ?? own.call(transaction), configurable: true });
  return new Promise((resolve) => {
    transaction.addEventListener("complete", () => resolve(!failed));
    transaction.addEventListener("abort", () => resolve(false));
  });
}
"#)]
extern "C" {
    /// Watch `transaction` (an `IDBTransaction`) from now on: its `error` then answers the first
    /// failed request's error where there is one, else its own; the `Promise` answers whether
    /// it committed with every request done (`true`) or not (`false`).
    #[wasm_bindgen(js_name = watchTransaction)]
    pub(super) fn watch_transaction(transaction: &JsValue) -> Promise;
}
