//! A commit's transaction made to keep the error of its first request that failed, as its
//! `error`: what a commit reports as the cause of its abort (`mod.rs`). The transaction's own
//! `error` does not always say: after `commit()`, when one request fails (a put that breaks a
//! key's uniqueness, a `ConstraintError`), Firefox aborts with an `AbortError` and WebKit with
//! none, and every browser sets it only once the request's `error` event has been dispatched,
//! after idb's future ended the wait. In JS, as `count.rs` is: a listener in Rust would be a
//! closure kept alive for the transaction, and a getter of the error one more import.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
export function watchRequests(transaction) {
  let first;
  transaction.addEventListener("error", (event) => {
    first ??= event.target?.error;
  });
  const own = Object.getOwnPropertyDescriptor(IDBTransaction.prototype, "error").get;
  Object.defineProperty(transaction, "error", { get: () => first ?? own.call(transaction) });
}
"#)]
extern "C" {
    /// Watch `transaction` (an `IDBTransaction`) from now on for requests that fail: its `error`
    /// then answers the first one's error where there is one, else its own.
    #[wasm_bindgen(js_name = watchRequests)]
    pub(super) fn watch_requests(transaction: &JsValue);
}
