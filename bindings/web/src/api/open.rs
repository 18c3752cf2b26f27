//! Opening and destroying databases: which page store a `storage` option names, how the engine
//! is tuned for it, and the registry of in-memory databases by name.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Function, Object, Reflect};
use ttlkv::store::MemoryStore;
use ttlkv::{Db, DbOptions, Durability};
use wasm_bindgen::prelude::*;

use super::args::positive;
use super::call::{fail, invalid, promise, JsResult};
use super::db::WasmDb;
use crate::clock::JsClock;
use crate::protocol::VALUE_HEADER_BYTES;
use crate::store::{IndexedDbStore, JsAdapterStore};

thread_local! {
    /// In-memory databases by name: the same name reopens the same data until `destroy`. A
    /// process holds a handful, so a list (a map type here would add its own code to the module).
    static MEMORY: RefCell<Vec<(String, MemoryStore)>> = const { RefCell::new(Vec::new()) };
}

/// The page store a `storage` option names.
enum Storage {
    /// This instance's memory (`"memory"`).
    Memory,
    /// The browser's IndexedDB (`"indexeddb"`).
    IndexedDb,
    /// A page-store adapter object written in JS (`ttlkv/node-fs`, `ttlkv/durable-object`, …).
    Adapter(Object),
}

const UNKNOWN_STORAGE: &str = "storage must be \"indexeddb\", \"memory\" or an adapter object";

impl Storage {
    fn of(storage: JsValue) -> JsResult<Storage> {
        match storage.as_string().as_deref() {
            Some("memory") => Ok(Storage::Memory),
            Some("indexeddb") => Ok(Storage::IndexedDb),
            Some(_) => Err(invalid(UNKNOWN_STORAGE)),
            None => storage
                .dyn_into::<Object>()
                .map(Storage::Adapter)
                .map_err(|_| invalid(UNKNOWN_STORAGE)),
        }
    }

    /// The page cache. A page read from IndexedDB or an adapter costs a round trip to storage,
    /// so 32 MiB of decoded pages are kept: a working set of about 200,000 sessions of 100 bytes
    /// is served from memory once warm. Memory storage has none: its pages are read where they
    /// lie (`PageStore::shared_page`), and a cache would hold the same bytes twice.
    fn page_cache_bytes(&self) -> usize {
        match self {
            Storage::Memory => 0,
            _ => 32 * 1024 * 1024,
        }
    }
}

/// Open (or create) database `name` on `storage` ("indexeddb", "memory" or an adapter object) with
/// `options` `{ defaultTtlMs, durability, clock, resetClock }` (already checked by the JS entry).
#[wasm_bindgen(js_name = openDb)]
pub fn open_db(name: String, storage: JsValue, options: JsValue) -> JsValue {
    console_error_panic_hook::set_once();
    #[cfg(feature = "host-crc32")]
    crate::host_crc32::offer();
    promise(async move {
        let get = |k: &str| Reflect::get(&options, &JsValue::from_str(k)).unwrap_or_default();
        let default_ttl_ms = match get("defaultTtlMs").as_f64() {
            Some(ms) => Some(positive(ms, "defaultTtlMs")?),
            None => None,
        };
        let durability = match get("durability").as_string().as_deref() {
            None | Some("durable") => Durability::Durable,
            Some("relaxed") => Durability::Relaxed,
            Some(_) => return Err(invalid("durability must be \"durable\" or \"relaxed\"")),
        };
        let reset_clock = get("resetClock").is_truthy();
        let clock = match get("clock").dyn_into::<Function>() {
            Ok(f) => JsClock::Function(f),
            Err(_) => JsClock::DateNow,
        };
        let storage = Storage::of(storage)?;
        let options = DbOptions {
            default_ttl_ms,
            durability,
            value_header_bytes: VALUE_HEADER_BYTES,
            page_cache_bytes: storage.page_cache_bytes(),
            reset_clock,
            ..DbOptions::default()
        };
        match storage {
            Storage::Memory => {
                let db = Db::open(memory_store(name), clock, options).await;
                Ok(WasmDb::new(db.map_err(fail)?, None).into())
            }
            Storage::IndexedDb => {
                let store = Rc::new(IndexedDbStore::open(&name).await.map_err(fail)?);
                let db = Db::open(store.clone(), clock, options).await.map_err(|e| {
                    store.close();
                    fail(e)
                })?;
                Ok(WasmDb::new(db, Some(store)).into())
            }
            Storage::Adapter(target) => {
                let store = JsAdapterStore::new(target).map_err(fail)?;
                let db = Db::open(store, clock, options).await;
                Ok(WasmDb::new(db.map_err(fail)?, None).into())
            }
        }
    })
}

/// Delete the IndexedDB database of `name` (`destroy(name)` in a browser). Resolves once every
/// connection to it is closed.
#[wasm_bindgen(js_name = destroyIndexedDb)]
pub fn destroy_indexeddb(name: String) -> JsValue {
    promise(async move {
        IndexedDbStore::destroy(&name)
            .await
            .map(|_| JsValue::UNDEFINED)
            .map_err(fail)
    })
}

/// Forget the in-memory database `name` (`destroy(name)` for memory storage).
#[wasm_bindgen(js_name = destroyMemory)]
pub fn destroy_memory(name: &str) -> bool {
    MEMORY.with(|m| {
        let mut stores = m.borrow_mut();
        let before = stores.len();
        stores.retain(|(n, _)| n != name);
        stores.len() != before
    })
}

/// The in-memory store named `name`, created empty if there is none.
fn memory_store(name: String) -> MemoryStore {
    MEMORY.with(|m| {
        let mut stores = m.borrow_mut();
        if let Some((_, store)) = stores.iter().find(|(n, _)| *n == name) {
            return store.clone();
        }
        let store = MemoryStore::new();
        stores.push((name, store.clone()));
        store
    })
}
