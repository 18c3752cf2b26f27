//! Counting the records under one key of an object store or index, as a `Promise` of the count:
//! what a commit's check asks for (`mod.rs`). In JS: idb's typed way to the same request cost the
//! browser's engine about 500 bytes more, and a `Promise` resolved from the request's `success` is
//! delivered while its transaction is still active, as idb's own futures are.

use js_sys::Promise;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
export function countOf(source, key) {
  const request = source.count(key);
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}
"#)]
extern "C" {
    /// `source.count(key)` (an `IDBObjectStore` or `IDBIndex`): the number of records under
    /// `key`, or the request's error; throws as `count` throws (a transaction no longer active).
    #[wasm_bindgen(js_name = countOf, catch)]
    pub(super) fn count_of(source: &JsValue, key: &JsValue) -> Result<Promise, JsValue>;
}
