//! The core's page-store conformance suite, callable from JavaScript (feature `conformance`, a
//! test build): a runtime's own test hands each behaviour a fresh adapter object (Durable Object
//! storage in workerd, Deno KV in Deno, files in Node) and learns which behaviour broke.

use js_sys::{Array, Object};
use ttlkv::store::conformance;
use wasm_bindgen::prelude::*;

use crate::store::JsAdapterStore;

/// The names of the suite's behaviours, in the order the suite runs them.
#[wasm_bindgen(js_name = pageStoreBehaviours)]
pub fn page_store_behaviours() -> Array {
    conformance::BEHAVIOURS
        .iter()
        .map(|name| JsValue::from_str(name))
        .collect()
}

/// Check behaviour `name` on `adapter` (an empty page store). Resolves when it holds. A behaviour
/// that does not hold panics with a message naming what broke, printed to the console; the
/// instance then traps (an uncaught `RuntimeError` in the runtime, the call never settles) and is
/// unusable, so a harness watches for that error and checks what is left in a fresh instance.
#[wasm_bindgen(js_name = checkPageStore)]
pub async fn check_page_store(name: String, adapter: Object) -> Result<(), JsValue> {
    console_error_panic_hook::set_once();
    let store = JsAdapterStore::new(adapter).map_err(|e| JsValue::from_str(e.message()))?;
    if conformance::run_named(&name, &store).await {
        Ok(())
    } else {
        Err(JsValue::from_str(&format!(
            "no page-store behaviour is named {name}"
        )))
    }
}
