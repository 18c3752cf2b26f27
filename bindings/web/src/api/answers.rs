//! The answers of calls as JS values: values (decoded to the caller's string or JSON right here
//! when they are text, see [`value_js`]), entries, purge reports with their expire events, and
//! stats. Built by hand with `Reflect::set` on plain objects: see `docs/design.md` ("Objects
//! that cross into JavaScript") for the measurements against `serde-wasm-bindgen`.

use js_sys::{Array, Object, Reflect, Uint8Array};
use ttlkv::{Entry, ExpiredEntry, PurgeReport, Stats};
use wasm_bindgen::prelude::*;

use crate::error::to_js_error;
use crate::protocol::{VALUE_JSON, VALUE_STRING, VALUE_TAG_MASK};

/// Set an own property of a fresh plain object (which cannot fail).
pub(super) fn set(target: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(target, &JsValue::from_str(key), value);
}

/// Bytes as a `Uint8Array` (a copy out of this module's memory).
pub(super) fn bytes(b: &[u8]) -> JsValue {
    Uint8Array::from(b).into()
}

// One inline JS module for both builds, whatever their features: the builds' glue then names
// the same modules, and the engine of another entry's build fails to link with a `LinkError`
// (`bindings/js/load.js` names that cause). An import a build does not use is left out of its
// glue, and the bundler drops its code.
#[wasm_bindgen(inline_js = r#"
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
export function textOf(bytes, json) {
  try {
    const text = decoder.decode(bytes);
    return json ? JSON.parse(text) : text;
  } catch {
    return undefined;
  }
}
let memory;
let whole;
export function asciiSlices(m) {
  memory = m;
  return typeof Buffer === "function" && typeof Buffer.prototype.latin1Slice === "function";
}
export function asciiOf(at, length, json) {
  if (whole === undefined || whole.byteLength === 0) whole = Buffer.from(memory.buffer);
  const text = whole.latin1Slice(at, at + length);
  if (!json) return text;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
"#)]
extern "C" {
    /// `bytes` (a view of this module's memory, not a copy) decoded as UTF-8, and parsed if
    /// `json`; `undefined` if they are not UTF-8 or not JSON (no JSON text parses to
    /// `undefined`). The decoder's one check is the only one: a `str::from_utf8` first would
    /// read the text a second time (for a 1 KiB session, about as long as the decoding).
    #[wasm_bindgen(js_name = textOf)]
    fn text_of(bytes: &[u8], json: bool) -> JsValue;

    /// Whether the host has Node's `Buffer` (Node and Deno do, as a global), whose `latin1Slice`
    /// makes a string straight from a range of `memory` (this module's memory, kept for
    /// [`ascii_of`]).
    #[cfg(feature = "ascii-answers")]
    #[wasm_bindgen(js_name = asciiSlices)]
    fn ascii_slices(memory: &JsValue) -> bool;

    /// The text of the `length` bytes at `at` in this module's memory, all of them ASCII (so
    /// their Latin-1 reading is their UTF-8 one), parsed if `json`; `undefined` if they are not
    /// JSON. A view of the whole memory is kept, and made again once the memory has grown (the
    /// old buffer is detached then, its length 0).
    #[cfg(feature = "ascii-answers")]
    #[wasm_bindgen(js_name = asciiOf)]
    fn ascii_of(at: u32, length: u32, json: bool) -> JsValue;
}

#[cfg(feature = "ascii-answers")]
std::thread_local! {
    /// [`ascii_slices`], asked once.
    static ASCII_SLICES: bool = ascii_slices(&wasm_bindgen::memory());
}

/// `payload`'s text through [`ascii_of`] where the host can slice this module's memory and the
/// text is all ASCII (most keys' values: sessions, tokens, JSON of ASCII strings): no view of
/// the memory is made for it and nothing decodes it (a 100-byte value's view and `TextDecoder`
/// decode cost about twice the slice in Node, seven times in Deno). `None` where that path does
/// not apply.
#[cfg(feature = "ascii-answers")]
fn ascii_text(payload: &[u8], json: bool) -> Option<JsValue> {
    // The host first: where it cannot slice, no read pays for the scan.
    if !ASCII_SLICES.with(|on| *on) || !all_ascii(payload) {
        return None;
    }
    // Addresses and lengths in a wasm32 module's memory fit in 32 bits.
    let text = ascii_of(payload.as_ptr() as u32, payload.len() as u32, json);
    // A string's slice is never `undefined`: only JSON that does not parse asks (the check is a
    // call out to JS).
    (!json || !text.is_undefined()).then_some(text)
}

/// Whether every byte of `bytes` is ASCII: the high bits of 32 bytes at a time gathered in one
/// word and tested once. `[u8]::is_ascii` reads four bytes at a time in wasm32 and tests each
/// word: in a profile of the JSON session mix (1 KiB values) `value_js`, where the scan runs,
/// took 5.5 % of the time with it and 3.3 % with this.
#[cfg(feature = "ascii-answers")]
fn all_ascii(bytes: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let word = |eight: &[u8]| {
        let mut w = [0u8; 8];
        w.copy_from_slice(eight);
        u64::from_ne_bytes(w)
    };
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        let (a, rest) = block.split_at(8);
        let (b, rest) = rest.split_at(8);
        let (c, d) = rest.split_at(8);
        if (word(a) | word(b) | word(c) | word(d)) & HIGH != 0 {
            return false;
        }
    }
    blocks.remainder().is_ascii()
}

#[cfg(not(feature = "ascii-answers"))]
fn ascii_text(_payload: &[u8], _json: bool) -> Option<JsValue> {
    None
}

/// A value as `get` hands it to the JS entry. Text (a string, or JSON) is decoded here, straight
/// from this module's memory, so no Uint8Array is made for it: the answer is the caller's string,
/// or the parsed JSON value (text that is all ASCII sliced from the memory where the host can,
/// see [`ascii_text`]). Anything else (bytes, or text that does not decode) comes back raw, tag
/// byte and all, as a Uint8Array for the JS codec to decode.
pub(super) fn value_js(v: &[u8]) -> JsValue {
    if let Some((tag, payload)) = v.split_first() {
        let json = match tag & VALUE_TAG_MASK {
            VALUE_STRING => Some(false),
            VALUE_JSON => Some(true),
            _ => None,
        };
        if let Some(json) = json {
            if let Some(text) = ascii_text(payload, json) {
                return text;
            }
            let text = text_of(payload, json);
            if !text.is_undefined() {
                return text;
            }
        }
    }
    bytes(v)
}

/// `get`'s answer: the value as [`value_js`] gives it, or `undefined` where there is none.
pub(super) fn value_or_undefined(v: Option<&[u8]>) -> JsValue {
    v.map_or(JsValue::UNDEFINED, value_js)
}

/// A time in ms since the epoch, or `null`.
pub(super) fn time(t: Option<i64>) -> JsValue {
    t.map_or(JsValue::NULL, |t| JsValue::from_f64(t as f64))
}

/// `[key, value, expireAt | null]`.
pub(super) fn entry_array(e: &Entry) -> JsValue {
    Array::of3(&bytes(&e.key), &bytes(&e.value), &time(e.expire_at)).into()
}

/// `[namespace, key, value, expireAt][]`.
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

/// A purge report for JS: `{ removed, rewritten, stale, moreDue, expired, hookErrors }`. Its
/// `expired` list (a key, a value and more for every key purged) is built only `with_expired`:
/// only expire listeners need it, and for a purge of thousands of keys it cost a fifth of the
/// purge.
pub(super) fn purge_object(r: &PurgeReport, with_expired: bool) -> Object {
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

/// Sizes and shapes (`Stats` in `bindings/js/index.d.ts`).
pub(super) fn stats_object(s: &Stats) -> JsValue {
    let o = Object::new();
    set(
        &o,
        "memtableBytes",
        &JsValue::from_f64(s.memtable_bytes as f64),
    );
    set(&o, "walBytes", &JsValue::from_f64(s.wal_bytes as f64));
    set(&o, "cacheBytes", &JsValue::from_f64(s.cache_bytes as f64));
    set(
        &o,
        "rowCacheBytes",
        &JsValue::from_f64(s.row_cache_bytes as f64),
    );
    set(
        &o,
        "rowCacheHits",
        &JsValue::from_f64(s.row_cache_hits as f64),
    );
    set(
        &o,
        "rowCacheMisses",
        &JsValue::from_f64(s.row_cache_misses as f64),
    );
    set(
        &o,
        "pointIndexBytes",
        &JsValue::from_f64(s.point_index_bytes as f64),
    );
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
