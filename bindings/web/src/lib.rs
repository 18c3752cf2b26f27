//! # ttlkv-web
//!
//! The bridge between the ttlkv core and JavaScript: the wasm-bindgen API ([`api`]) the npm
//! package's JS entry drives, page stores on the JS side ([`store`]), the JS clock adapter
//! ([`clock`]) and the mapping of core errors onto `TtlKvError` objects with a stable `code`
//! ([`error`]). The core knows nothing of browsers; this crate knows nothing of SST bytes.
#![warn(missing_docs)]

pub mod api;
pub mod clock;
pub mod error;
mod promise;
pub mod store;

pub use clock::JsClock;
pub use error::to_js_error;

/// The module's allocator: talc rather than the default dlmalloc, for a smaller module (the
/// package's size budget) and faster allocation. Single-threaded wasm only.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
