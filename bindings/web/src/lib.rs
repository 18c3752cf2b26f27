//! # ttlkv-web
//!
//! The bridge between the ttlkv core and JavaScript: the JS clock adapter ([`clock`]) and the
//! mapping of core errors onto `TtlKvError` objects with a stable `code` ([`error`]). The core
//! knows nothing of browsers; this crate knows nothing of SST bytes.
#![warn(missing_docs)]

pub mod clock;
pub mod error;

pub use clock::JsClock;
pub use error::to_js_error;
