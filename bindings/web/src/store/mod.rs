//! Page stores that live on the JavaScript side: the JS page-store adapter (an object of async
//! functions supplied by the app — the seam for edge storage). The IndexedDB store joins it here.

pub mod adapter;
pub mod page_key;

pub use adapter::JsAdapterStore;
