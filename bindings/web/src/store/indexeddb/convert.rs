//! Between IndexedDB's values and the store's: idb's and IndexedDB's failures as core errors (the
//! browser's own error kept as the source), the manifest record, and the key range of one page
//! kind.

use idb::{KeyRange, Query};
use js_sys::{Object, Reflect, Uint8Array};
use ttlkv::store::{ManifestRecord, PageKind, MAX_MANIFEST_VERSION};
use ttlkv::{Error, ErrorKind, Result};
use wasm_bindgen::{JsCast, JsValue};

use crate::error::JsCause;

use super::super::page_key::kind_prefix;

/// The error an idb failure stands for: the browser's own error (a `DOMException`, or the value
/// a failed request gave) is kept as its `cause`, and its name and message go into the message;
/// a `QuotaExceededError` becomes [`ErrorKind::QuotaExceeded`]. (idb's own `Display` is not used:
/// its forty messages cost more than a kilobyte of the module, and say less than the cause.)
pub(super) fn idb_error(context: &str, e: idb::Error) -> Error {
    js_error(context, js_cause(&e))
}

/// The error of a failed IndexedDB call whose own error (a `DOMException`) is `cause`, as
/// [`idb_error`] makes it.
pub(super) fn js_error(context: &str, cause: Option<JsValue>) -> Error {
    let text = |name: &str| cause.as_ref().and_then(|c| field(c, name).as_string());
    let message = match (text("name"), text("message")) {
        (Some(name), Some(message)) => format!("{name}: {message}"),
        (Some(name), None) => name,
        (None, Some(message)) => message,
        (None, None) => String::from("the IndexedDB request failed"),
    };
    // A byte-window search: `str::contains` would bring a string-search engine into the module.
    let quota = b"QuotaExceededError";
    let kind = if message.as_bytes().windows(quota.len()).any(|w| w == quota) {
        ErrorKind::QuotaExceeded
    } else {
        ErrorKind::Storage
    };
    let error = Error::new(kind, format!("{context}: {message}"));
    match cause {
        Some(cause) => error.with_source(JsCause::new(cause, message)),
        None => error,
    }
}

/// The JS value an idb failure carries, if it carries one.
fn js_cause(e: &idb::Error) -> Option<JsValue> {
    use idb::Error::*;
    match e {
        DomException(d) => Some(d.clone().into()),
        AddFailed(v)
        | ClearFailed(v)
        | CountFailed(v)
        | CursorAdvanceFailed(v)
        | CursorContinueFailed(v)
        | CursorKeyNotFound(v)
        | CursorPrimaryKeyNotFound(v)
        | CursorValueNotFound(v)
        | DeleteFailed(v)
        | GetAllFailed(v)
        | GetAllKeysFailed(v)
        | GetFailed(v)
        | GetKeyFailed(v)
        | IndexCreateFailed(v)
        | IndexDeleteFailed(v)
        | IndexedDbDeleteFailed(v)
        | IndexedDbNotFound(v)
        | IndexedDbOpenFailed(v)
        | IndexNotFound(v)
        | KeyPathNotFound(v)
        | KeyRangeBoundNotFound(v)
        | KeyRangeCreateFailed(v)
        | KeyRangeIncludesFailed(v)
        | ObjectStoreCreateFailed(v)
        | ObjectStoreDeleteFailed(v)
        | ObjectStoreNotFound(v)
        | OpenCursorFailed(v)
        | OpenKeyCursorFailed(v)
        | RequestErrorNotFound(v)
        | RequestResultNotFound(v)
        | TransactionAbortError(v)
        | TransactionCommitError(v)
        | TransactionModeNotFound(v)
        | TransactionOpenFailed(v)
        | UnexpectedJsType(_, v)
        | UpdateFailed(v) => Some(v.clone()),
        _ => None,
    }
}

fn field(target: &JsValue, name: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(name)).unwrap_or_default()
}

/// Decode the manifest record as stored in [`META`].
pub(super) fn manifest_of(record: &JsValue) -> Result<ManifestRecord> {
    let version = field(record, VERSION_FIELD)
        .as_f64()
        .filter(|v| (1.0..=MAX_MANIFEST_VERSION as f64).contains(v) && v.fract() == 0.0)
        .ok_or_else(|| Error::corruption("IndexedDB manifest record: bad version"))?;
    let bytes = field(record, "bytes")
        .dyn_into::<Uint8Array>()
        .map_err(|_| Error::corruption("IndexedDB manifest record: bytes is not a Uint8Array"))?;
    Ok(ManifestRecord {
        version: version as u64,
        bytes: bytes.to_vec(),
    })
}

/// The field of the manifest record that holds its version: what `meta`'s index of versions
/// (`VERSION_INDEX`) indexes, so a commit's check counts versions without reading the record.
pub(super) const VERSION_FIELD: &str = "version";

pub(super) fn manifest_record(m: &ManifestRecord) -> JsValue {
    let record = Object::new();
    // Setting an own property of a fresh plain object cannot fail.
    let _ = Reflect::set(
        &record,
        &VERSION_FIELD.into(),
        &JsValue::from_f64(m.version as f64),
    );
    let _ = Reflect::set(
        &record,
        &"bytes".into(),
        &Uint8Array::from(m.bytes.as_slice()),
    );
    record.into()
}

/// The keys of one page kind: `[prefix, prefix with its last byte + 1)`.
pub(super) fn kind_range(kind: PageKind) -> Result<Query> {
    let prefix = kind_prefix(kind);
    // Every prefix is a letter and '/'; '0' is the character after '/'.
    let upper = prefix.replace('/', "0");
    KeyRange::bound(
        &JsValue::from_str(prefix),
        &JsValue::from_str(&upper),
        Some(false),
        Some(true),
    )
    .map(Query::KeyRange)
    .map_err(|e| idb_error("listPages", e))
}
