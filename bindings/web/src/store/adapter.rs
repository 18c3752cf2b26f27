//! The JS page-store adapter: a [`PageStore`] whose operations are async functions of an object
//! the app supplies (`open(name, { storage: adapter })`), e.g. over an edge platform's KV or blob
//! storage, or files in Node. The contract (also in docs/runtimes.md):
//!
//! ```text
//! readManifest(): Promise<{ version: number, bytes: Uint8Array } | null>
//! getPage(key: string): Promise<Uint8Array | null | undefined>
//! listPages(prefix: "w/" | "m/" | "d/"): Promise<string[]>          // keys with that prefix
//! commit({ expectedVersion: number,
//!          manifest: { version: number, bytes: Uint8Array } | null,
//!          puts: [key: string, bytes: Uint8Array][],
//!          deletes: string[] }): Promise<void>
//! ```
//!
//! `commit` must be atomic (all of it or none of it, also across a crash) and must check, inside
//! that atomic step, that the stored manifest version (0 when there is none) equals
//! `expectedVersion`; otherwise it throws an error whose `code` is `"FENCED"` and writes nothing.
//! A store out of room throws `code: "QUOTA_EXCEEDED"` and writes nothing. Deletes apply before
//! puts. Any other throw is a `STORAGE` error.

use js_sys::{Array, Function, Object, Reflect, Uint8Array};
use ttlkv::store::{
    Commit, ManifestRecord, PageId, PageKind, PageStore, StoreFuture, MAX_MANIFEST_VERSION,
};
use ttlkv::{Error, ErrorKind, Result};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::error::JsCause;

use super::page_key::{check_manifest_version, kind_prefix, page_ids_of_kind, page_key};

/// A page store implemented by JavaScript functions.
pub struct JsAdapterStore {
    target: Object,
    read_manifest: Function,
    get_page: Function,
    list_pages: Function,
    commit: Function,
}

fn method(target: &Object, name: &str) -> Result<Function> {
    Reflect::get(target, &JsValue::from_str(name))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .ok_or_else(|| Error::invalid(format!("the storage adapter has no function `{name}`")))
}

/// The error a JS rejection stands for: its `code` if it names one of ours, else `STORAGE`.
pub fn js_error(context: &str, e: &JsValue) -> Error {
    let code = Reflect::get(e, &JsValue::from_str("code"))
        .ok()
        .and_then(|c| c.as_string());
    let message = Reflect::get(e, &JsValue::from_str("message"))
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "unknown error".into());
    let name = Reflect::get(e, &JsValue::from_str("name"))
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_default();
    let kind = match code.as_deref().and_then(ErrorKind::from_code) {
        Some(kind) => kind,
        None if name == "QuotaExceededError" => ErrorKind::QuotaExceeded,
        None => ErrorKind::Storage,
    };
    let text = if name.is_empty() {
        message.clone()
    } else {
        format!("{name}: {message}")
    };
    Error::new(kind, format!("{context}: {message}")).with_source(JsCause::new(e.clone(), text))
}

async fn call(f: &Function, this: &Object, arg: &JsValue, what: &str) -> Result<JsValue> {
    let promise = f.call1(this, arg).map_err(|e| js_error(what, &e))?;
    JsFuture::from(js_sys::Promise::resolve(&promise))
        .await
        .map_err(|e| js_error(what, &e))
}

fn version_of(v: &JsValue, what: &str) -> Result<u64> {
    let n = v
        .as_f64()
        .filter(|n| (0.0..=MAX_MANIFEST_VERSION as f64).contains(n) && n.fract() == 0.0)
        .ok_or_else(|| Error::storage(format!("{what}: version is not a non-negative integer")))?;
    Ok(n as u64)
}

fn set(target: &Object, key: &str, value: &JsValue) {
    // Setting an own property of a fresh plain object cannot fail.
    let _ = Reflect::set(target, &JsValue::from_str(key), value);
}

impl JsAdapterStore {
    /// Wrap `target`, checking it has the four functions of the contract.
    pub fn new(target: Object) -> Result<Self> {
        Ok(JsAdapterStore {
            read_manifest: method(&target, "readManifest")?,
            get_page: method(&target, "getPage")?,
            list_pages: method(&target, "listPages")?,
            commit: method(&target, "commit")?,
            target,
        })
    }
}

impl PageStore for JsAdapterStore {
    fn read_manifest(&self) -> StoreFuture<'_, Option<ManifestRecord>> {
        Box::pin(async move {
            let v = call(
                &self.read_manifest,
                &self.target,
                &JsValue::UNDEFINED,
                "readManifest",
            )
            .await?;
            if v.is_null() || v.is_undefined() {
                return Ok(None);
            }
            let version = Reflect::get(&v, &"version".into()).unwrap_or_default();
            let version = version_of(&version, "readManifest")?;
            let bytes = Reflect::get(&v, &"bytes".into())
                .ok()
                .and_then(|b| b.dyn_into::<Uint8Array>().ok())
                .ok_or_else(|| Error::storage("readManifest: bytes is not a Uint8Array"))?;
            Ok(Some(ManifestRecord {
                version,
                bytes: bytes.to_vec(),
            }))
        })
    }

    fn get_page(&self, id: PageId) -> StoreFuture<'_, Option<Vec<u8>>> {
        Box::pin(async move {
            let key = JsValue::from_str(&page_key(id));
            let v = call(&self.get_page, &self.target, &key, "getPage").await?;
            if v.is_null() || v.is_undefined() {
                return Ok(None);
            }
            let bytes = v
                .dyn_into::<Uint8Array>()
                .map_err(|_| Error::storage("getPage: result is not a Uint8Array"))?;
            Ok(Some(bytes.to_vec()))
        })
    }

    fn list_pages(&self, kind: PageKind) -> StoreFuture<'_, Vec<PageId>> {
        Box::pin(async move {
            let prefix = JsValue::from_str(kind_prefix(kind));
            let v = call(&self.list_pages, &self.target, &prefix, "listPages").await?;
            let array = v
                .dyn_into::<Array>()
                .map_err(|_| Error::storage("listPages: result is not an array"))?;
            page_ids_of_kind(&mut array.iter().map(|k| k.as_string()), kind)
                .ok_or_else(|| Error::storage("listPages: a key is not a page key of that kind"))
        })
    }

    fn commit(&self, commit: Commit) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            check_manifest_version(&commit)?;
            let arg = Object::new();
            set(
                &arg,
                "expectedVersion",
                &JsValue::from_f64(commit.expected_manifest_version as f64),
            );
            let manifest = match &commit.manifest {
                Some(m) => {
                    let o = Object::new();
                    set(&o, "version", &JsValue::from_f64(m.version as f64));
                    set(&o, "bytes", &Uint8Array::from(m.bytes.as_slice()));
                    o.into()
                }
                None => JsValue::NULL,
            };
            set(&arg, "manifest", &manifest);
            let puts = Array::new();
            for (id, bytes) in &commit.puts {
                let key = JsValue::from_str(&page_key(*id));
                puts.push(&Array::of2(&key, &Uint8Array::from(bytes.as_slice())));
            }
            set(&arg, "puts", &puts);
            let deletes: Array = commit
                .deletes
                .iter()
                .map(|id| JsValue::from_str(&page_key(*id)))
                .collect();
            set(&arg, "deletes", &deletes);
            call(&self.commit, &self.target, &arg, "commit")
                .await
                .map(|_| ())
        })
    }
}
