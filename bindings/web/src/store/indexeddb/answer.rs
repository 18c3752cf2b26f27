//! An IndexedDB request's answer as a `Promise` (`mod.rs`): of its result, or rejected with its
//! error. Every request the store awaits goes through it: a commit's check (a count, which aborts
//! the transaction itself when it is not the one wanted), a commit slice's last request, the
//! manifest read, a listing of pages, and the reads of many pages (every request issued at once,
//! its handlers attached as it is issued, so no answer can come before them). In JS because
//! idb's futures over a request attach Rust closures to it, which a future dropped before the
//! answer (a caller's `select!`, a commit that returned early, a read of many pages whose first
//! failed) drops too, and the answer then calls them: an uncaught "closure invoked recursively or
//! after being dropped". A `Promise` settled from the request's `success` is delivered while its
//! transaction is still active, as idb's own futures are.

use js_sys::Promise;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
export function answerOf(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}
export function getEach(store, keys) {
  // A get that throws (the transaction no longer active) rejects its own answer rather than
  // getEach: Promise.all then listens to every answer, none left unhandled.
  return Promise.all(keys.map((key) => new Promise((resolve) => resolve(answerOf(store.get(key))))));
}
export function countOf(source, key, wanted, commitIfWanted) {
  const request = source.count(key);
  request.addEventListener("success", () => {
    if (request.result !== wanted) request.transaction.abort();
    else if (commitIfWanted) request.transaction.commit?.();
  });
  return answerOf(request);
}
"#)]
extern "C" {
    /// `request`'s (an `IDBRequest`'s) result once it succeeds, or its error.
    #[wasm_bindgen(js_name = answerOf)]
    pub(super) fn answer_of(request: &JsValue) -> Promise;

    /// `store.get(key)` of each of `keys` (`store` an `IDBObjectStore`), all issued now: a
    /// `Promise` of their results in order (`undefined` for a key with no record), or of the first
    /// error (a request's, or the `get` that threw: the transaction no longer active).
    #[wasm_bindgen(js_name = getEach)]
    pub(super) fn get_each(store: &JsValue, keys: &js_sys::Array) -> Promise;

    /// `source.count(key)` (an `IDBObjectStore` or `IDBIndex`): the number of records under
    /// `key`, or the request's error; throws as `count` throws (a transaction no longer active).
    /// A count other than `wanted` aborts the transaction in the answer's own handler, before
    /// anything else runs: a commit's check holds whether or not its future is polled then. The
    /// count wanted, with `commit_if_wanted`, calls the transaction's `commit()` there (where the
    /// browser has it), so it commits once its requests are done instead of a turn after them.
    #[wasm_bindgen(js_name = countOf, catch)]
    pub(super) fn count_of(
        source: &JsValue,
        key: &JsValue,
        wanted: u32,
        commit_if_wanted: bool,
    ) -> Result<Promise, JsValue>;
}
