//! `WasmSnapshot`: reads as of one moment, expiry included. The JS entry scans a database
//! through one, so every page of a scan reads the same moment.

use std::rc::Rc;

use js_sys::Array;
use ttlkv::Snapshot;
use wasm_bindgen::prelude::*;

use super::answers::{entry_array, value_js};
use super::args::scan_options;
use super::call::{fail, promise};

/// A snapshot: reads as of the moment it was taken, expiry included.
#[wasm_bindgen]
pub struct WasmSnapshot {
    snapshot: Rc<Snapshot>,
}

impl WasmSnapshot {
    pub(super) fn new(snapshot: Snapshot) -> WasmSnapshot {
        WasmSnapshot {
            snapshot: Rc::new(snapshot),
        }
    }
}

#[wasm_bindgen]
impl WasmSnapshot {
    /// `get(key)` → the value as `value_js` gives it, or `undefined`.
    pub fn get(&self, key: Vec<u8>) -> JsValue {
        let s = self.snapshot.clone();
        promise(async move {
            let v = s.get(&key).await.map_err(fail)?;
            Ok(v.map_or(JsValue::UNDEFINED, |v| value_js(&v)))
        })
    }

    /// `getEntry(key)` → `[key, value, expireAt | null] | undefined`.
    #[wasm_bindgen(js_name = getEntry)]
    pub fn get_entry(&self, key: Vec<u8>) -> JsValue {
        let s = self.snapshot.clone();
        promise(async move {
            let e = s.get_entry(&key).await.map_err(fail)?;
            Ok(e.as_ref().map_or(JsValue::UNDEFINED, entry_array))
        })
    }

    /// `has(key)` → `boolean`.
    pub fn has(&self, key: Vec<u8>) -> JsValue {
        let s = self.snapshot.clone();
        promise(async move { Ok(JsValue::from_bool(s.has(&key).await.map_err(fail)?)) })
    }

    /// `ttl(key)` → `number` at the snapshot's time.
    pub fn ttl(&self, key: Vec<u8>) -> JsValue {
        let s = self.snapshot.clone();
        promise(async move { Ok(JsValue::from_f64(s.ttl(&key).await.map_err(fail)? as f64)) })
    }

    /// `scan(prefix?, start?, end?, limit (−1 = none), reverse)` → `[key, value,
    /// expireAt][]` as of the snapshot (the JS entry scans a database through a snapshot, so
    /// every page of one scan reads the same moment).
    pub fn scan(
        &self,
        prefix: Option<Vec<u8>>,
        start: Option<Vec<u8>>,
        end: Option<Vec<u8>>,
        limit: f64,
        reverse: bool,
    ) -> JsValue {
        let s = self.snapshot.clone();
        promise(async move {
            let options = scan_options(prefix, start, end, limit, reverse)?;
            let entries = s.scan(&options).await.map_err(fail)?;
            Ok(JsValue::from(
                entries.iter().map(entry_array).collect::<Array>(),
            ))
        })
    }

    /// Let the snapshot go; later calls reject with `CLOSED`.
    pub fn release(&self) {
        self.snapshot.release();
    }
}
