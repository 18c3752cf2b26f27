//! The wasm-bindgen API the npm package's JS core drives (`bindings/js/core.js`, through
//! `engine.js`). It works on
//! bytes: the JS entry owns key and value types (string / Uint8Array / JSON) and option parsing;
//! this layer checks every number it is handed and maps every error to a `TtlKvError`. An async
//! method answers at once when nothing had to wait (see `promise.rs`): it returns the answer
//! the docs below name; otherwise (and for a failure) it returns a Promise of it. Each async
//! method clones the database handle into its future, so any number of calls can be in flight
//! on one database (nothing here holds a borrow across an await).

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Function, Object, Reflect, Uint8Array};
use ttlkv::store::MemoryStore;
use ttlkv::{
    Db, DbOptions, Durability, Entry, ExpireCondition, ExpiredEntry, GetExOptions,
    NamespaceOptions, PutCondition, PutOptions, Replacement, ScanOptions, Snapshot, Ttl,
};
use wasm_bindgen::prelude::*;

use crate::clock::JsClock;
use crate::error::to_js_error;
use crate::promise::settle;
use crate::store::{IndexedDbStore, JsAdapterStore};

thread_local! {
    /// In-memory databases by name: the same name reopens the same data until `destroy`. A
    /// process holds a handful, so a list (a map type here would add its own code to the module).
    static MEMORY: RefCell<Vec<(String, MemoryStore)>> = const { RefCell::new(Vec::new()) };
}

mod packed_batch;

type JsResult<T> = Result<T, JsValue>;

fn fail(e: ttlkv::Error) -> JsValue {
    to_js_error(&e)
}

fn invalid(message: &str) -> JsValue {
    fail(ttlkv::Error::invalid(message))
}

/// A JS number that must be a finite integer in i64 range.
fn int(x: f64, what: &str) -> JsResult<i64> {
    if !x.is_finite() || x.fract() != 0.0 || x.abs() > 9.007_199_254_740_991e15 {
        return Err(invalid(&format!("{what} must be a finite integer")));
    }
    Ok(x as i64)
}

/// A JS number that must be an integer > 0 (a TTL in ms).
fn positive(x: f64, what: &str) -> JsResult<u64> {
    let n = int(x, what)?;
    if n <= 0 {
        return Err(invalid(&format!("{what} must be greater than 0")));
    }
    Ok(n as u64)
}

fn ttl_of(kind: u8, arg: f64) -> JsResult<Ttl> {
    Ok(match kind {
        0 => Ttl::Default,
        1 => Ttl::NoExpiry,
        2 => Ttl::ExpireAfter(positive(arg, "ttlMs")?),
        3 => Ttl::ExpireAt(int(arg, "expireAt")?),
        4 => Ttl::Keep,
        _ => return Err(invalid("unknown TTL kind")),
    })
}

fn condition_of(c: u8) -> JsResult<PutCondition> {
    Ok(match c {
        0 => PutCondition::Always,
        1 => PutCondition::IfAbsent,
        2 => PutCondition::IfPresent,
        _ => return Err(invalid("unknown put condition")),
    })
}

fn expire_condition_of(bits: u8) -> ExpireCondition {
    ExpireCondition {
        nx: bits & 1 != 0,
        xx: bits & 2 != 0,
        gt: bits & 4 != 0,
        lt: bits & 8 != 0,
    }
}

fn set(target: &Object, key: &str, value: &JsValue) {
    // Setting an own property of a fresh plain object cannot fail.
    let _ = Reflect::set(target, &JsValue::from_str(key), value);
}

fn bytes(b: &[u8]) -> JsValue {
    Uint8Array::from(b).into()
}

/// The JS codec's value tags (`bindings/js/codec.js`): the tag byte in front of every value,
/// whose top bit says whether the key was a string.
const TAG_STRING: u8 = 0;
const TAG_JSON: u8 = 2;
const TAG_MASK: u8 = 0x7f;

/// A value as `get` hands it to the JS entry. Text (a string, or JSON) is decoded here, straight
/// from this module's memory, so no Uint8Array is made for it: the answer is the caller's string,
/// or the parsed JSON value. Anything else (bytes, or text that does not decode) comes back raw,
/// tag byte and all, as a Uint8Array for the JS codec to decode.
fn value_js(v: &[u8]) -> JsValue {
    if let Some((tag, payload)) = v.split_first() {
        let text = || core::str::from_utf8(payload).ok();
        match tag & TAG_MASK {
            TAG_STRING => {
                if let Some(text) = text() {
                    return JsValue::from_str(text);
                }
            }
            TAG_JSON => {
                if let Some(parsed) = text().and_then(|t| js_sys::JSON::parse(t).ok()) {
                    return parsed;
                }
            }
            _ => {}
        }
    }
    bytes(v)
}

fn time(t: Option<i64>) -> JsValue {
    t.map_or(JsValue::NULL, |t| JsValue::from_f64(t as f64))
}

fn entry_array(e: &Entry) -> JsValue {
    Array::of3(&bytes(&e.key), &bytes(&e.value), &time(e.expire_at)).into()
}

fn expired_array(list: &[ExpiredEntry]) -> Array {
    list.iter()
        .map(|e| {
            let a = Array::of3(
                &JsValue::from_str(&e.namespace),
                &bytes(&e.key),
                &bytes(&e.value),
            );
            a.push(&JsValue::from_f64(e.expire_at as f64));
            JsValue::from(a)
        })
        .collect()
}

fn promise<F, T>(future: F) -> JsValue
where
    F: core::future::Future<Output = JsResult<T>> + 'static,
    T: Into<JsValue>,
{
    settle(Box::pin(async move { future.await.map(Into::into) }))
}

fn scan_options(
    prefix: Option<Vec<u8>>,
    start: Option<Vec<u8>>,
    end: Option<Vec<u8>>,
    limit: f64,
    reverse: bool,
) -> JsResult<ScanOptions> {
    let limit = if limit < 0.0 {
        None
    } else {
        Some(int(limit, "limit")? as usize)
    };
    Ok(ScanOptions {
        prefix,
        start,
        end,
        limit,
        reverse,
    })
}

/// Open (or create) database `name` on `storage` ("indexeddb", "memory" or an adapter object) with
/// `options` `{ defaultTtlMs, durability, clock, resetClock }` (already checked by the JS entry).
#[wasm_bindgen(js_name = openDb)]
pub fn open_db(name: String, storage: JsValue, options: JsValue) -> JsValue {
    console_error_panic_hook::set_once();
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
        let kind = storage.as_string();
        let options = DbOptions {
            default_ttl_ms,
            durability,
            // The JS entry's codec puts a one-byte type tag in front of every value.
            value_header_bytes: 1,
            page_cache_bytes: page_cache_bytes(kind.as_deref()),
            page_size: page_size(kind.as_deref()),
            // Memory storage keeps its pages in this instance's own memory: only this engine
            // ever wrote them, so reading one back needs no checksum or row-by-row check.
            verify_data_pages: kind.as_deref() != Some("memory"),
            reset_clock,
            ..DbOptions::default()
        };
        let (db, indexeddb) = match kind.as_deref() {
            Some("memory") => {
                let store = memory_store(name);
                (Db::open(store, clock, options).await.map_err(fail)?, None)
            }
            Some("indexeddb") => {
                let store = Rc::new(IndexedDbStore::open(&name).await.map_err(fail)?);
                let db = Db::open(store.clone(), clock, options).await.map_err(|e| {
                    store.close();
                    fail(e)
                })?;
                (db, Some(store))
            }
            Some(_) => {
                return Err(invalid(
                    "storage must be \"indexeddb\", \"memory\" or an adapter object",
                ))
            }
            None => {
                let target = storage.dyn_into::<Object>().map_err(|_| {
                    invalid("storage must be \"indexeddb\", \"memory\" or an adapter object")
                })?;
                let store = JsAdapterStore::new(target).map_err(fail)?;
                (Db::open(store, clock, options).await.map_err(fail)?, None)
            }
        };
        Ok(WasmDb { db, indexeddb })
    })
}

/// The page cache for a storage kind. A page read from IndexedDB or an adapter costs a
/// round trip to storage, so 32 MiB of decoded pages are kept: a working set of about 200,000
/// sessions of 100 bytes is served from memory once warm. Memory storage already holds its
/// pages in memory, so its cache only spares a copy of the page, and stays at the engine's
/// default (8 MiB).
fn page_cache_bytes(storage: Option<&str>) -> usize {
    match storage {
        Some("memory") => DbOptions::default().page_cache_bytes,
        _ => 32 * 1024 * 1024,
    }
}

/// The data page size for a storage kind. A page read from IndexedDB or an adapter costs a round
/// trip, so those keep the engine's default (16 KiB). A page of memory storage costs only its
/// copy into the page cache on a miss: 4 KiB pages copy a quarter as much, and the same cache
/// bytes hold four times as many pages, so more of a hot set scattered over the key space stays
/// cached (a Zipf-distributed get over 100,000 sessions: 4.5 µs with 16 KiB pages, 4.0 µs).
fn page_size(storage: Option<&str>) -> usize {
    match storage {
        Some("memory") => 4 * 1024,
        _ => DbOptions::default().page_size,
    }
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

/// One open database (or one namespace of it).
#[wasm_bindgen]
pub struct WasmDb {
    db: Db,
    /// The IndexedDB connection of a root handle on IndexedDB, closed by `close()` so that
    /// `destroy()` and schema upgrades are not blocked by it.
    indexeddb: Option<Rc<IndexedDbStore>>,
}

#[wasm_bindgen]
impl WasmDb {
    /// `put(key, value, ttlKind, ttlArg, condition)` → `boolean`.
    pub fn put(
        &self,
        key: Vec<u8>,
        value: Vec<u8>,
        ttl_kind: u8,
        ttl_arg: f64,
        condition: u8,
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

    /// `get(key)` → the value as `value_js` gives it, or `undefined`.
    pub fn get(&self, key: Vec<u8>) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            let v = db.get(&key).await.map_err(fail)?;
            Ok(v.map_or(JsValue::UNDEFINED, |v| value_js(&v)))
        })
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
    pub fn expire(&self, key: Vec<u8>, ttl_ms: f64, condition: u8) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            let ms = int(ttl_ms, "ttlMs")?.max(0) as u64;
            let ok = db
                .expire(&key, ms, expire_condition_of(condition))
                .await
                .map_err(fail)?;
            Ok(JsValue::from_bool(ok))
        })
    }

    /// `expireAt(key, atMs, conditionBits)` → `boolean`.
    #[wasm_bindgen(js_name = expireAt)]
    pub fn expire_at(&self, key: Vec<u8>, at_ms: f64, condition: u8) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            let at = int(at_ms, "atMs")?;
            let ok = db
                .expire_at(&key, at, expire_condition_of(condition))
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

    /// `getEx(key, kind, arg)` → the value as `value_js` gives it, or `undefined` (kind:
    /// 0 ttlMs, 1 expireAt, 2 persist).
    #[wasm_bindgen(js_name = getEx)]
    pub fn get_ex(&self, key: Vec<u8>, kind: u8, arg: f64) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            let options = match kind {
                0 => GetExOptions::ExpireAfter(positive(arg, "ttlMs")?),
                1 => GetExOptions::ExpireAt(int(arg, "expireAt")?),
                2 => GetExOptions::Persist,
                _ => return Err(invalid("unknown getEx option")),
            };
            let v = db.get_ex(&key, options).await.map_err(fail)?;
            Ok(v.map_or(JsValue::UNDEFINED, |v| value_js(&v)))
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
        Ok(WasmDb {
            db,
            indexeddb: None,
        })
    }

    /// `recordedCall(callId)` → `[applied, value]` if a write made through `recording(callId)` took effect
    /// (`value`: what `getEx` read, as `value_js` gives it, or `undefined`), else `undefined`.
    #[wasm_bindgen(js_name = recordedCall)]
    pub fn recorded_call(&self, call: String) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            let record = db.recorded_call(call.as_bytes()).await.map_err(fail)?;
            Ok(record.map_or(JsValue::UNDEFINED, |r| {
                let value = r.value.as_deref().map_or(JsValue::UNDEFINED, value_js);
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
            let optional = |x: f64, what| {
                if x.is_nan() {
                    Ok(None)
                } else {
                    positive(x, what).map(Some)
                }
            };
            let options = if has_options {
                Some(NamespaceOptions {
                    default_ttl_ms: optional(default_ttl_ms, "defaultTtlMs")?,
                    max_ttl_ms: optional(max_ttl_ms, "maxTtlMs")?,
                })
            } else {
                None
            };
            let db = db.namespace(&name, options).await.map_err(fail)?;
            Ok(WasmDb {
                db,
                indexeddb: None,
            })
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
        let snapshot = self.db.snapshot().map_err(fail)?;
        Ok(WasmSnapshot {
            snapshot: Rc::new(snapshot),
        })
    }

    /// `purgeExpired(limit, withExpired)` → `{ removed, rewritten, stale, moreDue, expired:
    /// [namespace, key, value, expireAt][], hookErrors: Error[] }` (`expired` empty unless
    /// `withExpired`).
    #[wasm_bindgen(js_name = purgeExpired)]
    pub fn purge_expired(&self, limit: f64, with_expired: bool) -> JsValue {
        let db = self.db.clone();
        promise(async move {
            let limit = positive(limit, "limit")? as usize;
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
                let kind = out.get(1).as_f64()? as u8;
                let ttl = ttl_of(kind, out.get(2).as_f64().unwrap_or(f64::NAN)).ok()?;
                Some(Replacement { value, ttl })
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
        let s = self.db.stats();
        let o = Object::new();
        set(
            &o,
            "memtableBytes",
            &JsValue::from_f64(s.memtable_bytes as f64),
        );
        set(&o, "walBytes", &JsValue::from_f64(s.wal_bytes as f64));
        set(&o, "cacheBytes", &JsValue::from_f64(s.cache_bytes as f64));
        let levels: Array = s
            .levels
            .iter()
            .map(|l| {
                let lo = Object::new();
                set(&lo, "level", &JsValue::from_f64(l.level as f64));
                let ssts: Array = l
                    .ssts
                    .iter()
                    .map(|t| {
                        let so = Object::new();
                        set(&so, "id", &JsValue::from_f64(t.id as f64));
                        set(&so, "bytes", &JsValue::from_f64(t.bytes as f64));
                        set(&so, "rows", &JsValue::from_f64(t.rows as f64));
                        set(&so, "minExpireAt", &time(t.min_expire_at));
                        set(&so, "maxExpireAt", &time(t.max_expire_at));
                        let p = match t.expiry_percentiles {
                            Some(p) => p
                                .iter()
                                .map(|x| JsValue::from_f64(*x as f64))
                                .collect::<Array>()
                                .into(),
                            None => JsValue::NULL,
                        };
                        set(&so, "expiryPercentiles", &p);
                        JsValue::from(so)
                    })
                    .collect();
                set(&lo, "ssts", &ssts);
                JsValue::from(lo)
            })
            .collect();
        set(&o, "levels", &levels);
        o.into()
    }
}

/// A purge report for JS. Its `expired` list (a key, a value and more for every key purged) is
/// built only `with_expired`: only expire listeners need it, and for a purge of thousands of
/// keys it cost a fifth of the purge.
fn purge_object(r: &ttlkv::PurgeReport, with_expired: bool) -> Object {
    let o = Object::new();
    set(&o, "removed", &JsValue::from_f64(r.removed as f64));
    set(&o, "rewritten", &JsValue::from_f64(r.rewritten as f64));
    set(&o, "stale", &JsValue::from_f64(r.stale as f64));
    set(&o, "moreDue", &JsValue::from_bool(r.more_due));
    let expired = if with_expired {
        expired_array(&r.expired)
    } else {
        Array::new()
    };
    set(&o, "expired", &expired);
    let errors: Array = r.hook_errors.iter().map(to_js_error).collect();
    set(&o, "hookErrors", &errors);
    o
}

/// A snapshot: reads as of the moment it was taken, expiry included.
#[wasm_bindgen]
pub struct WasmSnapshot {
    snapshot: Rc<Snapshot>,
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
