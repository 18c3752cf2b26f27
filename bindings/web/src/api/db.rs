//! `WasmDb`: one open database, or one namespace of it, as the JS entry's `LocalEndpoint`
//! (`bindings/js/engine.js`) calls it. Each method decodes its arguments (`args.rs`), runs the
//! core call and hands back its answer (`answers.rs`). An async method clones the database
//! handle into its future, so any number of calls can be in flight on one database (nothing here
//! holds a borrow across an await).

use std::rc::Rc;

use js_sys::{Array, Function, Object, Uint8Array};
#[cfg(feature = "row-cache")]
use ttlkv::Lookup;
use ttlkv::{Db, ExpiredEntry, PurgeReport, PutOptions, Replacement};
use wasm_bindgen::prelude::*;

use super::answers::{
    bytes, entry_array, purge_object, set, stats_object, time, value_or_undefined,
};
use super::args::{
    condition_of, count, expire_condition_of, get_ex_of, int, namespace_options, positive, ttl_of,
};
#[cfg(feature = "row-cache")]
use super::call::at_once;
use super::call::{fail, promise, JsResult};
use super::packed_batch;
use super::snapshot::WasmSnapshot;
use crate::store::IndexedDbStore;

/// One open database (or one namespace of it).
#[wasm_bindgen]
pub struct WasmDb {
    db: Db,
    /// The IndexedDB connection of a root handle on IndexedDB, closed by `close()` so that
    /// `destroy()` and schema upgrades are not blocked by it.
    indexeddb: Option<Rc<IndexedDbStore>>,
}

impl WasmDb {
    pub(super) fn new(db: Db, indexeddb: Option<Rc<IndexedDbStore>>) -> WasmDb {
        WasmDb { db, indexeddb }
    }

    /// `get` and `getStr`: see `get`.
    fn get_bytes(&self, key: Vec<u8>) -> JsValue {
        #[cfg(feature = "row-cache")]
        match at_once(|| self.db.get_with(&key, value_or_undefined)) {
            Some(Ok(Lookup::Now(value))) => return value,
            Some(Ok(Lookup::Later(search))) => {
                return promise(async move { search.await.map_err(fail) })
            }
            Some(Err(e)) => return js_sys::Promise::reject(&fail(e)).into(),
            None => {}
        }
        let db = self.db.clone();
        promise(async move {
            let v = db.get(&key).await.map_err(fail)?;
            Ok(value_or_undefined(v.as_deref()))
        })
    }
}

#[wasm_bindgen]
impl WasmDb {
    /// `put(key, value, ttlKind, ttlArg, condition)` → `boolean`.
    pub fn put(
        &self,
        key: Vec<u8>,
        value: Vec<u8>,
        ttl_kind: f64,
        ttl_arg: f64,
        condition: f64,
    ) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            let options = PutOptions {
                ttl: ttl_of(ttl_kind, ttl_arg)?,
                condition: condition_of(condition)?,
            };
            let ok = db
                .put_with_options(&key, &value, options)
                .await
                .map_err(fail)?;
            Ok(JsValue::from_bool(ok))
        })
    }

    /// `get(key)` → the value as `value_js` gives it, or `undefined`. Where the row cache holds
    /// the key (a feature of the server's engine), answered from it in place (`Db::get_with`):
    /// no future, no copy of the value.
    pub fn get(&self, key: Vec<u8>) -> JsValue {
        self.get_bytes(key)
    }

    /// `get` of a string key, its UTF-8 encoded by the glue straight into this module's memory:
    /// the JS entry makes no Uint8Array for it. The entry checks the key's length first (not
    /// empty, and too short to pass the longest key's bytes).
    #[wasm_bindgen(js_name = getStr)]
    pub fn get_str(&self, key: String) -> JsValue {
        self.get_bytes(key.into_bytes())
    }

    /// `getEntry(key)` → `[key, value, expireAt | null] | undefined`.
    #[wasm_bindgen(js_name = getEntry)]
    pub fn get_entry(&self, key: Vec<u8>) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            let e = db.get_entry(&key).await.map_err(fail)?;
            Ok(e.as_ref().map_or(JsValue::UNDEFINED, entry_array))
        })
    }

    /// `has(key)` → `boolean`.
    pub fn has(&self, key: Vec<u8>) -> JsValue {
        let db = self.db.clone();
        promise(async move { Ok(JsValue::from_bool(db.has(&key).await.map_err(fail)?)) })
    }

    /// `delete(key)` → `boolean`.
    pub fn delete(&self, key: Vec<u8>) -> JsValue {
        let db = self.db.clone();
        promise(async move { Ok(JsValue::from_bool(db.delete(&key).await.map_err(fail)?)) })
    }

    /// `ttl(key)` → `number` (−1 no expiry, −2 absent).
    pub fn ttl(&self, key: Vec<u8>) -> JsValue {
        let db = self.db.clone();
        promise(async move { Ok(JsValue::from_f64(db.ttl(&key).await.map_err(fail)? as f64)) })
    }

    /// `expire(key, ttlMs, conditionBits)` → `boolean` (bits: nx 1, xx 2, gt 4, lt 8). A
    /// `ttlMs` of 0 or less deletes the key, as Redis `PEXPIRE` does.
    pub fn expire(&self, key: Vec<u8>, ttl_ms: f64, condition: f64) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            let ms = int(ttl_ms, "ttlMs")?.max(0) as u64;
            let ok = db
                .expire(&key, ms, expire_condition_of(condition)?)
                .await
                .map_err(fail)?;
            Ok(JsValue::from_bool(ok))
        })
    }

    /// `expireAt(key, atMs, conditionBits)` → `boolean`.
    #[wasm_bindgen(js_name = expireAt)]
    pub fn expire_at(&self, key: Vec<u8>, at_ms: f64, condition: f64) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            let at = int(at_ms, "atMs")?;
            let ok = db
                .expire_at(&key, at, expire_condition_of(condition)?)
                .await
                .map_err(fail)?;
            Ok(JsValue::from_bool(ok))
        })
    }

    /// `persist(key)` → `boolean`.
    pub fn persist(&self, key: Vec<u8>) -> JsValue {
        let db = self.db.clone();
        promise(async move { Ok(JsValue::from_bool(db.persist(&key).await.map_err(fail)?)) })
    }

    /// `getEx(key, kind, arg)` → the value as `value_js` gives it, or `undefined` (kind: `TTL_AFTER_MS`,
    /// `TTL_AT` or `TTL_NO_EXPIRY` for persist).
    #[wasm_bindgen(js_name = getEx)]
    pub fn get_ex(&self, key: Vec<u8>, kind: f64, arg: f64) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            let options = get_ex_of(kind, arg)?;
            let v = db.get_ex(&key, options).await.map_err(fail)?;
            Ok(value_or_undefined(v.as_deref()))
        })
    }

    /// `batch(bytes, ops)` → `boolean`: a batch in its packed form (one buffer of key
    /// and value bytes, six numbers per op: `api/packed_batch.rs`). `false`: a condition failed
    /// and nothing was written.
    pub fn batch(&self, bytes: &[u8], ops: &[f64]) -> JsValue {
        let db = self.db.clone();
        let batch = packed_batch::unpack(bytes, ops);
        promise(async move { Ok(JsValue::from_bool(db.write(batch?).await.map_err(fail)?)) })
    }

    /// `recording(callId)` → a handle on the same keyspace whose writes record their outcome
    /// under `callId`, in the same batch as their effect (see `recordedCall`); `free()` it after
    /// the call.
    pub fn recording(&self, call: String) -> Result<WasmDb, JsValue> {
        let db = self.db.recording_call(call.as_bytes()).map_err(fail)?;
        Ok(WasmDb::new(db, None))
    }

    /// `recordedCall(callId)` → `[applied, value]` if a write made through `recording(callId)` took effect
    /// (`value`: what `getEx` read, as `value_js` gives it, or `undefined`), else `undefined`.
    #[wasm_bindgen(js_name = recordedCall)]
    pub fn recorded_call(&self, call: String) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            let record = db.recorded_call(call.as_bytes()).await.map_err(fail)?;
            Ok(record.map_or(JsValue::UNDEFINED, |r| {
                let value = value_or_undefined(r.value.as_deref());
                Array::of2(&JsValue::from_bool(r.applied), &value).into()
            }))
        })
    }

    /// `namespace(name, hasOptions, defaultTtlMs (NaN = none), maxTtlMs (NaN = none))` →
    /// `WasmDb`.
    pub fn namespace(
        &self,
        name: String,
        has_options: bool,
        default_ttl_ms: f64,
        max_ttl_ms: f64,
    ) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            let options = namespace_options(has_options, default_ttl_ms, max_ttl_ms)?;
            let db = db.namespace(&name, options).await.map_err(fail)?;
            Ok(WasmDb::new(db, None).into())
        })
    }

    /// `dropNamespace(name)` → `boolean`.
    #[wasm_bindgen(js_name = dropNamespace)]
    pub fn drop_namespace(&self, name: String) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            Ok(JsValue::from_bool(
                db.drop_namespace(&name).await.map_err(fail)?,
            ))
        })
    }

    /// `clear(withExpired)` → the purge report of `purgeExpired` for the keys that were due
    /// before the clear (it purges them first); every key of this keyspace is then gone in one
    /// commit.
    pub fn clear(&self, with_expired: bool) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            let r = db.clear().await.map_err(fail)?;
            Ok(JsValue::from(purge_object(&r, with_expired)))
        })
    }

    /// A snapshot of this namespace now.
    pub fn snapshot(&self) -> JsResult<WasmSnapshot> {
        Ok(WasmSnapshot::new(self.db.snapshot().map_err(fail)?))
    }

    /// `purgeExpired(limit, withExpired)` → `{ removed, rewritten, stale, moreDue, expired:
    /// [namespace, key, value, expireAt][], hookErrors: Error[] }` (`expired` empty unless
    /// `withExpired`).
    #[wasm_bindgen(js_name = purgeExpired)]
    pub fn purge_expired(&self, limit: f64, with_expired: bool) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            let limit = count(positive(limit, "limit")?);
            let r = db.purge_expired(limit).await.map_err(fail)?;
            Ok(JsValue::from(purge_object(&r, with_expired)))
        })
    }

    /// `maintenance(withExpired)` → `{ nextWakeupMs: number | null, purge }`: one bounded slice of
    /// due work (the automatic maintenance timer calls this).
    pub fn maintenance(&self, with_expired: bool) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            let m = db.maintenance_step().await.map_err(fail)?;
            let o = Object::new();
            set(&o, "nextWakeupMs", &time(m.next_wakeup_ms));
            set(&o, "purge", &purge_object(&m.purge, with_expired));
            Ok(JsValue::from(o))
        })
    }

    /// When maintenance is next due (ms since the epoch), or `null`.
    #[wasm_bindgen(js_name = nextWakeupMs)]
    pub fn next_wakeup_ms(&self) -> JsValue {
        time(self.db.next_wakeup_ms())
    }

    /// The current time on the database's monotonic clock; after a clock reading that is no
    /// plausible time, the last good one (the scheduler must not fail because of it: the calls
    /// that need the time report it).
    pub fn now(&self) -> f64 {
        self.db.now().unwrap_or_else(|_| self.db.last_time()) as f64
    }

    /// `setExpireHook(fn | null)`: `fn(namespace, key, value, expireAt)` may return
    /// `[value, ttlKind, ttlArg]` to rewrite the key instead of letting it expire. A hook that
    /// throws or returns anything else lets the key expire.
    #[wasm_bindgen(js_name = setExpireHook)]
    pub fn set_expire_hook(&self, hook: JsValue) {
        let Ok(f) = hook.dyn_into::<Function>() else {
            self.db.set_expire_hook(None);
            return;
        };
        self.db
            .set_expire_hook(Some(Rc::new(move |e: &ExpiredEntry| {
                let args = Array::of4(
                    &JsValue::from_str(&e.namespace),
                    &bytes(&e.key),
                    &bytes(&e.value),
                    &JsValue::from_f64(e.expire_at as f64),
                );
                let out = f.apply(&JsValue::UNDEFINED, &args).ok()?;
                let out: Array = out.dyn_into().ok()?;
                let value = out.get(0).dyn_into::<Uint8Array>().ok()?.to_vec();
                let kind = out.get(1).as_f64()?;
                let ttl = ttl_of(kind, out.get(2).as_f64().unwrap_or(f64::NAN)).ok()?;
                Some(Replacement { value, ttl })
            })));
    }

    /// `setReclaimListener(fn | null)`: `fn(report)` gets the purge report (with its `expired`
    /// list) of each reclaim the engine runs when a write finds storage full, before it tries
    /// the write again.
    #[wasm_bindgen(js_name = setReclaimListener)]
    pub fn set_reclaim_listener(&self, listener: JsValue) {
        let Ok(f) = listener.dyn_into::<Function>() else {
            self.db.set_reclaim_listener(None);
            return;
        };
        self.db
            .set_reclaim_listener(Some(Rc::new(move |report: &PurgeReport| {
                // A listener that throws loses nothing here: the events were its to publish.
                let _ = f.call1(&JsValue::UNDEFINED, &purge_object(report, true));
            })));
    }

    /// `flush()` → `void`.
    pub fn flush(&self) -> JsValue {
        let db = self.db.clone();
        promise(async move { db.flush().await.map(|_| JsValue::UNDEFINED).map_err(fail) })
    }

    /// `compact()` → `void`.
    pub fn compact(&self) -> JsValue {
        let db = self.db.clone();
        promise(async move { db.compact().await.map(|_| JsValue::UNDEFINED).map_err(fail) })
    }

    /// `close()` → `void`.
    pub fn close(&self) -> JsValue {
        let db = self.db.clone();
        let indexeddb = self.indexeddb.clone();
        promise(async move {
            let closed = db.close().await;
            if let Some(store) = indexeddb {
                store.close();
            }
            closed.map(|_| JsValue::UNDEFINED).map_err(fail)
        })
    }

    /// Sizes and shapes (see `Stats` in `bindings/js/index.d.ts`).
    pub fn stats(&self) -> JsValue {
        stats_object(&self.db.stats())
    }
}
