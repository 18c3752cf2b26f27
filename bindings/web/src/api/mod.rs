//! The wasm-bindgen API the npm package's JS core drives (through `bindings/js/engine.js`). It
//! works on bytes: the JS entry owns key and value types (string / Uint8Array / JSON) and option
//! parsing; this layer checks every number it is handed and maps every error to a `TtlKvError`.
//! An async method answers at once when nothing had to wait (see `promise.rs`): it returns the
//! answer its docs name; otherwise (and for a failure) it returns a Promise of it.
//!
//! One job per file: `open` (storage kinds, open and destroy), `db` and `snapshot` (the two
//! classes), `args` (decoding a call's arguments), `packed_batch` (a batch in one buffer),
//! `answers` (JS values for the answers), `call` (results, errors and promises every call shares).

mod answers;
mod args;
mod call;
mod db;
mod open;
mod packed_batch;
mod snapshot;

pub use db::WasmDb;
pub use open::{destroy_indexeddb, destroy_memory, open_db};
pub use snapshot::WasmSnapshot;
