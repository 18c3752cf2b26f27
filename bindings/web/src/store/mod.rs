//! Page stores that live on the JavaScript side: the IndexedDB store (browsers and web workers)
//! and the JS page-store adapter (an object of async functions supplied by the app — the seam for
//! edge storage). Both key pages by the strings of [`page_key`].

pub mod adapter;
mod event_loop_turn;
pub mod indexeddb;
pub mod page_key;

pub use adapter::JsAdapterStore;
pub use indexeddb::IndexedDbStore;
