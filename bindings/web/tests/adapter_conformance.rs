//! The page-store conformance suite of the core, run in Node on the JS page-store adapter over two
//! adapters written in JavaScript: one over a Map, one over files with `node:fs`
//! (`tests/support/fs_adapter.mjs`). Run with
//! `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
//!  cargo test -p ttlkv-web --target wasm32-unknown-unknown`.
#![cfg(target_arch = "wasm32")]

use js_sys::Object;
use ttlkv::store::conformance;
use ttlkv_web::store::JsAdapterStore;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

#[wasm_bindgen(inline_js = r#"
export function mapAdapter() {
  const pages = new Map();
  let manifest = null;
  return {
    async readManifest() { return manifest && { version: manifest.version, bytes: manifest.bytes.slice() }; },
    async getPage(key) { const p = pages.get(key); return p && p.slice(); },
    async listPages(prefix) { return [...pages.keys()].filter((k) => k.startsWith(prefix)).sort(); },
    async commit({ expectedVersion, manifest: next, puts, deletes }) {
      const current = manifest ? manifest.version : 0;
      if (current !== expectedVersion) {
        throw Object.assign(new Error("stale manifest version"), { code: "FENCED" });
      }
      if (next && next.version <= expectedVersion) {
        throw Object.assign(new Error("manifest version must grow"), { code: "INVALID" });
      }
      for (const k of deletes) pages.delete(k);
      for (const [k, bytes] of puts) pages.set(k, bytes.slice());
      if (next) manifest = { version: next.version, bytes: next.bytes.slice() };
    },
  };
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = mapAdapter)]
    fn map_adapter() -> Object;
}

#[wasm_bindgen(module = "/tests/support/fs_adapter.mjs")]
extern "C" {
    #[wasm_bindgen(js_name = fsAdapter)]
    fn fs_adapter(dir: &str) -> Object;
}

#[wasm_bindgen(inline_js = r#"
export function scratchDir() {
  const fs = process.getBuiltinModule("node:fs");
  const os = process.getBuiltinModule("node:os");
  const path = process.getBuiltinModule("node:path");
  return fs.mkdtempSync(path.join(os.tmpdir(), "ttlkv-fs-adapter-"));
}
export function removeDir(dir) {
  process.getBuiltinModule("node:fs").rmSync(dir, { recursive: true, force: true });
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = scratchDir)]
    fn scratch_dir() -> String;
    #[wasm_bindgen(js_name = removeDir)]
    fn remove_dir(dir: &str);
}

#[wasm_bindgen_test]
async fn a_file_adapter_with_node_fs_passes_the_page_store_conformance_suite() {
    // One scratch directory for the run, a store directory in it per behaviour, all removed
    // after the run.
    let scratch = scratch_dir();
    let stores = std::cell::Cell::new(0u32);
    let ran = conformance::run_all(|| {
        stores.set(stores.get() + 1);
        let dir = format!("{scratch}/store-{}", stores.get());
        JsAdapterStore::new(fs_adapter(&dir)).expect("adapter")
    })
    .await;
    remove_dir(&scratch);
    assert_eq!(ran, conformance::BEHAVIOURS.len());
}

#[wasm_bindgen_test]
async fn the_js_adapter_passes_the_page_store_conformance_suite() {
    let ran = conformance::run_all(|| JsAdapterStore::new(map_adapter()).expect("adapter")).await;
    assert_eq!(ran, conformance::BEHAVIOURS.len());
}

#[wasm_bindgen_test]
fn an_adapter_missing_a_function_is_a_clear_error() {
    let incomplete = Object::new();
    let e = JsAdapterStore::new(incomplete).err().expect("rejected");
    assert_eq!(e.kind(), ttlkv::ErrorKind::InvalidArgument);
    assert!(e.message().contains("readManifest"));
}
