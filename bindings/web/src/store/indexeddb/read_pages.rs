//! Reading many pages in one transaction, in JS (`mod.rs`, `get_pages`): every request issued at
//! once, its handlers attached as it is issued (so no answer can come before them, whatever order
//! a browser dispatches in), the answers one `Promise` of an array, rejected with the first
//! failure. idb's futures over the requests, awaited in turn, left Rust closures on each request:
//! a read that failed returned early and dropped the closures of the rest, whose answers (their
//! errors, once the transaction aborted) each threw an uncaught "closure invoked recursively or
//! after being dropped".

use js_sys::{Array, Promise};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
export function getEach(store, keys) {
  return Promise.all(
    keys.map(
      (key) =>
        new Promise((resolve, reject) => {
          const request = store.get(key);
          request.onsuccess = () => resolve(request.result);
          request.onerror = () => reject(request.error);
        }),
    ),
  );
}
"#)]
extern "C" {
    /// `store.get(key)` of each of `keys` (`store` an `IDBObjectStore`), all issued now: a
    /// `Promise` of their results in order (`undefined` for a key with no record), or of the first
    /// error (a request's, or the `get` that threw: the transaction no longer active).
    #[wasm_bindgen(js_name = getEach)]
    pub(super) fn get_each(store: &JsValue, keys: &Array) -> Promise;
}
