//! The IndexedDB page store: where a browser tab or web worker keeps a database.
//!
//! One IndexedDB database per ttlkv database, named `ttlkv:<name>`, with two object stores:
//!
//! - `pages`: every WAL page, SST metadata page and SST data page, keyed by the string of
//!   [`page_key`] (fixed-width hex, so one kind's keys sort like the ids) with the page's bytes
//!   as a `Uint8Array`. Pages, not per-key records: a point read loads one page.
//! - `meta`: one record, `manifest` → `{ version, bytes }`, and an index of its `version`
//!   (`version`, since schema version 2; a database of schema 1 gains it when it is opened).
//!
//! A [`Commit`] is one `readwrite` transaction over both stores: first a count of the manifest
//! records of the version the commit expects, in the index (one, or none where it expects no
//! manifest), so the check never reads the manifest's bytes, which grow with the database (every
//! namespace is named in them), then the page puts, the deletes and the new manifest, none of
//! them waiting for the count. The count's own handler aborts the transaction when the count is not
//! the one wanted (`answer.rs`), while the transaction is still active and before anything of it
//! can commit, so the check and the writes are one atomic step: a writer that lost its role is
//! fenced, nothing of it lands. A commit of more than one write is left to commit by itself once
//! every request has succeeded (a transaction told to `commit()` does not abort when a later
//! request fails, as the specification has it and Firefox does, and would land the others); a
//! commit of one write (a WAL page, a manifest alone) is told to `commit()` by the count's handler
//! once the check passed, since its one write failing alone still lands nothing. The store waits
//! for the transaction's end (`watch.rs`, which takes a completion after a failed request for a
//! failure). IndexedDB's only conditional write, a put that breaks a unique index, would let a
//! commit go without waiting for an answer only if such a put aborted a transaction already told
//! to `commit()`; in Firefox it does not when another request follows it (`bench/fence-probe.mjs`).
//! A big commit issues its puts in slices of about 1 MiB, waiting for the last request of each
//! slice before the next, so no single task holds the page for long; its deletes (one request per
//! run of adjacent pages) and the manifest follow in one task (`order.rs`). Nothing but IndexedDB
//! requests is awaited while the transaction is open, so it never commits by itself half-way
//! while the commit runs; a commit that returns early, or whose future is dropped, before its
//! check passed with every request issued aborts the transaction. A sliced commit whose future is
//! polled once and then kept without being polled or dropped lets its transaction commit the
//! slices issued so far: only puts, which for the engine's commits are pages of new SSTs no
//! stored manifest names, found and deleted by the next open's recovery (`order.rs`); polled
//! again, the commit fails, unless nothing was left to issue. A transaction that aborts leaves
//! the database as it was; the cause is read from `IDBTransaction.error` (which
//! `watch.rs` makes answer the error of the first request that failed) and mapped:
//! `QuotaExceededError` → `QUOTA_EXCEEDED`, anything else → `STORAGE`.
//!
//! When another context deletes or upgrades the database (`destroy()` in another tab, "clear site
//! data"), this connection closes itself at once instead of blocking it, and every later call
//! fails with a `STORAGE` error that says so; the next open starts from an empty store.
//!
//! Why `idb` and not `rexie`: rexie (a thin wrapper over idb) keeps the `IDBTransaction` private,
//! and Chromium reports a commit that ran out of quota only on that object: every request of the
//! transaction succeeds, then the transaction aborts with `error.name == "QuotaExceededError"`
//! and no request or transaction `error` event (seen in Chromium 156 with a 1 MiB quota set over
//! the DevTools protocol). Through rexie that abort has no cause and could not be told apart from
//! any other storage failure.
//!
//! `convert.rs` turns idb's and IndexedDB's failures and values into the store's (errors, the
//! manifest record, page-kind key ranges); `answer.rs` makes a request's answer a `Promise` (and
//! asks the check's count, and reads many pages in one transaction); `order.rs` puts a commit's
//! requests in order; `watch.rs` makes a commit's transaction keep the error of its first failed
//! request and answers how it ended; this file owns the database, its schema, its connection and
//! the commit.

use std::cell::Cell;
use std::rc::Rc;

use idb::{Database, Factory, ObjectStoreParams, TransactionMode};
use js_sys::{Array, Uint8Array};
use ttlkv::store::{Commit, ManifestRecord, PageId, PageKind, PageStore, StoreFuture, YieldFuture};
use ttlkv::{Error, ErrorKind, Result};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::IdbKeyRange;

use crate::error::JsCause;

use super::event_loop_turn::event_loop_turn;
use super::page_key::{check_manifest_version, page_ids_of_kind, page_key};

mod answer;
mod convert;
mod order;
mod watch;
use answer::{answer_of, count_of, get_each};
use convert::{idb_error, js_error, kind_range, manifest_of, manifest_record, VERSION_FIELD};
use order::{delete_runs, puts_in_order};
use watch::watch_transaction;

/// The schema version of the IndexedDB database (its object stores and index), not of the page
/// format. 1: the two stores; 2: [`VERSION_INDEX`] too. A database of schema 2 cannot be opened
/// by a build that knows only schema 1 (IndexedDB refuses to open a database at a lower version).
const SCHEMA_VERSION: u32 = 2;
/// The object store of pages.
const PAGES: &str = "pages";
/// The object store of the manifest record.
const META: &str = "meta";
/// The manifest record's key in [`META`].
const MANIFEST_KEY: &str = "manifest";
/// The index of [`META`] over the manifest record's version, which a commit's check counts in.
/// The manifest is the only record of [`META`], so the only one the index holds: a record added to
/// `meta` must not have a `version` field, or the check would count it too.
const VERSION_INDEX: &str = "version";
/// A commit issues its requests in slices of about this many bytes of pages, one task each.
const COMMIT_SLICE_BYTES: usize = 1024 * 1024;

/// The IndexedDB database name of ttlkv database `name`.
pub fn database_name(name: &str) -> String {
    format!("ttlkv:{name}")
}

/// A page store on one IndexedDB database.
pub struct IndexedDbStore {
    db: Database,
    /// Set when another context deleted or upgraded the database: this connection closed itself
    /// so that could proceed, and every later call fails with a `STORAGE` error saying so.
    taken_away: Rc<Cell<bool>>,
}

impl IndexedDbStore {
    /// Open (creating it on first use) the IndexedDB database of ttlkv database `name`.
    /// Where there is no IndexedDB the error is [`ErrorKind::Unsupported`].
    pub async fn open(name: &str) -> Result<IndexedDbStore> {
        let factory = Factory::new()
            .map_err(|_| Error::new(ErrorKind::Unsupported, "there is no IndexedDB here"))?;
        let mut request = factory
            .open(&database_name(name), Some(SCHEMA_VERSION))
            .map_err(|e| idb_error("opening IndexedDB", e))?;
        request.on_upgrade_needed(|event| {
            // A store or index that cannot be created shows up as a clear STORAGE error on first
            // use. A new database gains both stores and the index; one of schema 1, the index.
            if let Ok(db) = idb::DatabaseEvent::database(&event) {
                let existing = db.store_names();
                for store in [PAGES, META] {
                    if !existing.iter().any(|s| s == store) {
                        let _ = db.create_object_store(store, ObjectStoreParams::new());
                    }
                }
            }
            // The upgrade's transaction, from the open request the event is dispatched at (web-sys
            // directly: idb's typed way there costs the browser's engine about 100 bytes more).
            let event: web_sys::IdbVersionChangeEvent = event.into();
            let upgrade = event.target().and_then(|t| {
                t.unchecked_into::<web_sys::IdbOpenDbRequest>()
                    .transaction()
            });
            if let Some(meta) = upgrade.and_then(|tx| tx.object_store(META).ok()) {
                let _ = meta.create_index_with_str(VERSION_INDEX, VERSION_FIELD);
            }
        });
        let mut db = request
            .await
            .map_err(|e| idb_error("opening IndexedDB", e))?;
        // Another context deleting the database (destroy(), clearing site data) or upgrading it
        // waits for this connection to close: close at once instead of blocking it.
        let taken_away = Rc::new(Cell::new(false));
        let flag = taken_away.clone();
        db.on_version_change(move |event| {
            flag.set(true);
            if let Ok(db) = idb::DatabaseEvent::database(&event) {
                db.close();
            }
        });
        Ok(IndexedDbStore { db, taken_away })
    }

    /// Delete the IndexedDB database of ttlkv database `name` (`destroy(name)`). It completes
    /// once every connection to it, in any tab, is closed.
    pub async fn destroy(name: &str) -> Result<()> {
        let factory = Factory::new()
            .map_err(|_| Error::new(ErrorKind::Unsupported, "there is no IndexedDB here"))?;
        factory
            .delete(&database_name(name))
            .map_err(|e| idb_error("deleting IndexedDB database", e))?
            .await
            .map_err(|e| idb_error("deleting IndexedDB database", e))
    }

    /// Close the connection; later calls fail with a `STORAGE` error. Closing twice is fine.
    pub fn close(&self) {
        self.db.close();
    }

    fn transaction(&self, stores: &[&str], mode: TransactionMode) -> Result<idb::Transaction> {
        if self.taken_away.get() {
            return Err(Error::storage(
                "the IndexedDB database was deleted or upgraded by another context; open it again",
            ));
        }
        self.db
            .transaction(stores, mode)
            .map_err(|e| idb_error("starting an IndexedDB transaction", e))
    }

    async fn apply(&self, commit: Commit) -> Result<()> {
        let tx = self.transaction(&[PAGES, META], TransactionMode::ReadWrite)?;
        let meta = tx.object_store(META).map_err(|e| idb_error("commit", e))?;
        let pages = tx.object_store(PAGES).map_err(|e| idb_error("commit", e))?;
        // A second handle on the same transaction, to read its `error` (that of its first request
        // that failed, where one did) after it ended, and how it ended (`watch.rs`: JS listeners,
        // which nothing here has to outlive).
        let observer = meta.transaction();
        let ended = JsFuture::from(watch_transaction(&JsValue::from(meta.transaction())));
        // The transaction commits by itself once no request is left, whether or not this future
        // is still polled: until every request is issued and the check has passed, a return or a
        // drop of this future (a caller's `select!`, a timeout) aborts it, so a commit dropped
        // half-way never lands a part of itself, nor lands unchecked.
        let unchecked = AbortOnDrop(Some(web_sys::IdbTransaction::from(meta.transaction())));
        let meta = web_sys::IdbObjectStore::from(meta);
        let pages = web_sys::IdbObjectStore::from(pages);

        // The manifest's version is counted by the transaction's first request, so the check
        // never reads the manifest's bytes; the writes are issued without waiting for it, and
        // are not committed before the check, which runs while the transaction is still active,
        // in the count's own handler (`answer.rs`): a mismatch aborts them all (a writer that
        // lost its role is fenced, nothing of it lands). One round trip, not two. Expecting no
        // manifest, the check counts the record itself (by its key). A transaction told to
        // `commit()` does not abort when one of its requests fails, as the specification has it
        // and Firefox does (a page over the quota fails its own request there): its other
        // requests land, a manifest naming a page that did not (`tests/e2e/package.test.mjs`, "a
        // flush over the quota lands nothing"). So only a commit of one write is told to.
        let expected = commit.expected_manifest_version;
        let checking = "commit: checking the manifest's version";
        // A commit of one write (a WAL page: every durable put's; or a manifest alone) is told to
        // `commit()` as soon as its check passes. A request that fails after `commit()` may fail
        // alone (Firefox, a page over the quota) while the transaction completes: with one write
        // that still lands nothing, and the commit reports the failure (`watch.rs`). A commit of
        // more writes is left to commit by itself, so a failed request aborts all of it.
        let writes =
            commit.deletes.len() + commit.puts.len() + usize::from(commit.manifest.is_some());
        let early = writes <= 1;
        let counted = if expected == 0 {
            count_of(&meta, &JsValue::from_str(MANIFEST_KEY), 0, early)
        } else {
            meta.index(VERSION_INDEX)
                .and_then(|index| count_of(&index, &JsValue::from_f64(expected as f64), 1, early))
        };
        let current = JsFuture::from(counted.map_err(|e| js_error(checking, Some(e)))?);

        // Requests run in the order issued: the count, the puts, the deletes (one per run of
        // adjacent pages), the manifest (`order.rs` says why). The puts go out in slices of about
        // COMMIT_SLICE_BYTES, each slice's last request awaited, so a big commit is issued over
        // several tasks, the transaction kept active by issuing the next slice from that
        // request's success; the rest follows in one task. A failed request aborts the
        // transaction, which ends the loop; the transaction's outcome is the commit's.
        let issued = async {
            let mut slice = 0usize;
            for (id, bytes) in puts_in_order(&commit.puts) {
                let key = JsValue::from_str(&page_key(*id));
                let request = pages.put_with_key(&Uint8Array::from(bytes.as_slice()), &key)?;
                slice += bytes.len();
                if slice >= COMMIT_SLICE_BYTES {
                    slice = 0;
                    JsFuture::from(answer_of(&request)).await?;
                }
            }
            for (first, last) in delete_runs(&commit.deletes, &commit.puts) {
                let first_key = JsValue::from_str(&page_key(first));
                if first == last {
                    pages.delete(&first_key)?;
                } else {
                    let run = IdbKeyRange::bound(&first_key, &JsValue::from_str(&page_key(last)))?;
                    pages.delete(&run)?;
                }
            }
            if let Some(m) = &commit.manifest {
                meta.put_with_key(&manifest_record(m), &JsValue::from_str(MANIFEST_KEY))?;
            }
            Ok::<(), JsValue>(())
        };
        let issued = issued.await;
        // The count is the first request, so it has answered by the time a later one fails or
        // the last is issued. A fenced commit is told so, also when the count's handler aborted
        // it while a slice was still being issued (its awaited request then fails `AbortError`).
        let counted = current.await.map_err(|e| js_error(checking, Some(e)));
        if let Ok(counted) = &counted {
            check_version(expected, counted)?;
        }
        if let Err(e) = issued {
            // A request that failed before the one awaited (a page over the quota, in Firefox and
            // WebKit) aborted the transaction: its error is the cause (`QUOTA_EXCEEDED` for a
            // quota), not the `AbortError` the awaited one got. A `put` that threw has none.
            return Err(match observer.error() {
                Some(_) => aborted(&observer),
                None => js_error("commit", Some(e)),
            });
        }
        counted?;
        // Checked, with every request issued: the commit lands whole now, awaited or not.
        unchecked.disarm();
        match ended.await {
            Ok(committed) if committed.is_truthy() => Ok(()),
            _ => Err(aborted(&observer)),
        }
    }
}

/// The check of a commit that expects manifest version `expected` (0: none), given the count
/// its transaction's first request answered: `FENCED` if the store holds another.
fn check_version(expected: u64, counted: &JsValue) -> Result<()> {
    // One record at most is counted: the manifest is the only record of META. Anything but 0 or
    // 1 is no answer IndexedDB gives: a storage failure, not a fence.
    let stored = match counted.as_f64() {
        Some(n) if n == 0.0 || n == 1.0 => n == 1.0,
        _ => {
            return Err(Error::storage(
                "commit: checking the manifest's version: no count of 0 or 1",
            ))
        }
    };
    match (expected, stored) {
        (0, true) => Err(Error::new(
            ErrorKind::Fenced,
            "a manifest is stored, this writer expected none",
        )),
        (1.., false) => Err(Error::new(
            ErrorKind::Fenced,
            format!("the stored manifest is not version {expected}, which this writer expected"),
        )),
        _ => Ok(()),
    }
}

/// A commit's transaction, aborted when this is dropped armed (`apply`): a commit that returns
/// early, or whose future is dropped, before its check passed with every request issued.
struct AbortOnDrop(Option<web_sys::IdbTransaction>);

impl AbortOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(transaction) = self.0.take() {
            // It may have ended already (aborted by a failed request): nothing to undo then.
            let _ = transaction.abort();
        }
    }
}

/// The error of a commit whose transaction IndexedDB aborted: `QUOTA_EXCEEDED` or `STORAGE`, its
/// cause the transaction's error (that of its first request that failed, `watch.rs`).
fn aborted(observer: &idb::Transaction) -> Error {
    let exception = observer.error();
    let cause = match &exception {
        Some(d) => format!("{}: {}", d.name(), d.message()),
        None => "the transaction was aborted".into(),
    };
    let kind = if cause.starts_with("QuotaExceededError") {
        ErrorKind::QuotaExceeded
    } else {
        ErrorKind::Storage
    };
    let error = Error::new(
        kind,
        format!("commit: IndexedDB aborted it, nothing was written ({cause})"),
    );
    match exception {
        Some(d) => error.with_source(JsCause::new(d.into(), cause)),
        None => error,
    }
}

impl Drop for IndexedDbStore {
    fn drop(&mut self) {
        self.db.close();
    }
}

impl PageStore for IndexedDbStore {
    fn read_manifest(&self) -> StoreFuture<'_, Option<ManifestRecord>> {
        Box::pin(async move {
            let tx = self.transaction(&[META], TransactionMode::ReadOnly)?;
            let meta = tx
                .object_store(META)
                .map_err(|e| idb_error("readManifest", e))?;
            let request = web_sys::IdbObjectStore::from(meta)
                .get(&JsValue::from_str(MANIFEST_KEY))
                .map_err(|e| js_error("readManifest", Some(e)))?;
            let record = JsFuture::from(answer_of(&request))
                .await
                .map_err(|e| js_error("readManifest", Some(e)))?;
            (!record.is_undefined())
                .then(|| manifest_of(&record))
                .transpose()
        })
    }

    fn get_page(&self, id: PageId) -> StoreFuture<'_, Option<Vec<u8>>> {
        Box::pin(async move { Ok(self.get_pages(vec![id]).await?.pop().flatten()) })
    }

    fn get_pages(&self, ids: Vec<PageId>) -> StoreFuture<'_, Vec<Option<Vec<u8>>>> {
        Box::pin(async move {
            // One transaction: every request is issued at once, before any answer (`answer.rs`).
            let tx = self.transaction(&[PAGES], TransactionMode::ReadOnly)?;
            let pages = tx
                .object_store(PAGES)
                .map_err(|e| idb_error("getPages", e))?;
            let keys: Array = ids
                .iter()
                .map(|id| JsValue::from_str(&page_key(*id)))
                .collect();
            let raw = web_sys::IdbObjectStore::from(pages);
            let answers = JsFuture::from(get_each(&raw, &keys))
                .await
                .map_err(|e| js_error("getPages", Some(e)))?;
            ids.iter()
                .zip(Array::from(&answers).iter())
                .map(|(id, page)| {
                    if page.is_undefined() {
                        return Ok(None);
                    }
                    page.dyn_into::<Uint8Array>()
                        .map(|b| Some(b.to_vec()))
                        .map_err(|_| {
                            Error::corruption(format!("IndexedDB: {id} is not a Uint8Array"))
                        })
                })
                .collect()
        })
    }

    fn list_pages(&self, kind: PageKind) -> StoreFuture<'_, Vec<PageId>> {
        Box::pin(async move {
            let tx = self.transaction(&[PAGES], TransactionMode::ReadOnly)?;
            let pages = tx
                .object_store(PAGES)
                .map_err(|e| idb_error("listPages", e))?;
            let request = web_sys::IdbObjectStore::from(pages)
                .get_all_keys_with_key(&kind_range(kind)?.into())
                .map_err(|e| js_error("listPages", Some(e)))?;
            let keys = JsFuture::from(answer_of(&request))
                .await
                .map_err(|e| js_error("listPages", Some(e)))?;
            page_ids_of_kind(&mut Array::from(&keys).iter().map(|k| k.as_string()), kind)
                .ok_or_else(|| Error::corruption("IndexedDB: a page key of no known form"))
        })
    }

    fn commit(&self, commit: Commit) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            check_manifest_version(&commit)?;
            self.apply(commit).await
        })
    }

    /// A browser tab runs the engine on its only thread: long work lets it handle input and
    /// rendering in between.
    fn yield_now(&self) -> YieldFuture<'_> {
        Box::pin(event_loop_turn())
    }
}
