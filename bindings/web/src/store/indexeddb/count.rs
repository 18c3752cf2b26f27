//! The commit's check, in JS (`mod.rs`): counting the records under one key of an object store or
//! index, as a `Promise` of the count, and committing the transaction from the count's `success`
//! handler when the count is the one the check wants. The engine checks the count again when its
//! future is polled (a microtask and a poll of the whole call later) and aborts the transaction
//! on a mismatch; committing from the handler saves that turn on every commit. A commit issues
//! every request before its count can answer, so nothing is issued after `commit()`. In JS: idb's
//! typed way to the same request cost the browser's engine about 500 bytes more, and a `Promise`
//! resolved from the request's `success` is delivered while its transaction is still active, as
//! idb's own futures are.

use js_sys::Promise;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
export function countOf(source, key, want) {
  const request = source.count(key);
  return new Promise((resolve, reject) => {
    request.onsuccess = () => {
      resolve(request.result);
      if (request.result === want) request.transaction.commit?.();
    };
    request.onerror = () => reject(request.error);
  });
}
"#)]
extern "C" {
    /// `source.count(key)` (an `IDBObjectStore` or `IDBIndex`): the number of records under
    /// `key`, or the request's error; throws as `count` throws (a transaction no longer active).
    /// A count of `want` commits the transaction as it arrives: the caller issues every request
    /// of the transaction before the count can answer (in the same task).
    #[wasm_bindgen(js_name = countOf, catch)]
    pub(super) fn count_of(source: &JsValue, key: &JsValue, want: f64) -> Result<Promise, JsValue>;
}
