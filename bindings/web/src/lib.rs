//! # ttlkv-web
//!
//! The bridge between the ttlkv core and JavaScript: the wasm-bindgen API ([`api`]) the npm
//! package's JS entry drives, page stores on the JS side ([`store`]), the JS clock adapter
//! ([`clock`]), the mapping of core errors onto `TtlKvError` objects with a stable `code`
//! ([`error`]), and the one definition of the numbers both sides agree on ([`protocol`]). The core knows nothing of browsers; this crate knows nothing of SST bytes.
#![warn(missing_docs)]

pub mod api;
pub mod clock;
#[cfg(any(test, target_arch = "wasm32"))]
mod compare;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod error;
// In every build, though only the `host-crc32` feature uses it: its inline JS module then
// numbers the others alike in every build (see host_crc32.rs).
mod host_crc32;
mod promise;
pub mod protocol;
pub mod store;

pub use clock::JsClock;
pub use error::{to_js_error, JsCause};
