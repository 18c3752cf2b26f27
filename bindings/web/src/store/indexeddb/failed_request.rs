//! The error of the first request of a transaction that failed: what a commit reports as the
//! cause of its abort (`mod.rs`). The transaction's own `error` does not always say: after
//! `commit()`, Firefox aborts with an `AbortError` and WebKit with none when one request fails
//! (a put that breaks a key's uniqueness, as a `ConstraintError`), and every browser sets it only
//! once the failed request's `error` event has been dispatched. In JS, as `count.rs` is: the same
//! in Rust would need a closure kept alive for the transaction.

use wasm_bindgen::prelude::*;
use web_sys::DomException;

#[wasm_bindgen(inline_js = r#"
export function watchRequests(transaction) {
  const seen = { error: null };
  transaction.addEventListener("error", (event) => {
    seen.error ??= event.target?.error ?? null;
  });
  return seen;
}
"#)]
extern "C" {
    /// What a transaction's failed requests left: the error of the first.
    pub(super) type FailedRequest;

    /// Watch `transaction` (an `IDBTransaction`) from now on for requests that fail.
    #[wasm_bindgen(js_name = watchRequests)]
    pub(super) fn watch_requests(transaction: &JsValue) -> FailedRequest;

    /// The first failed request's error, once one failed.
    #[wasm_bindgen(method, getter)]
    pub(super) fn error(this: &FailedRequest) -> Option<DomException>;
}
