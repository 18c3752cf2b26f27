//! Opening a database: take the writer role first, by committing the manifest back with a higher
//! `writer_epoch` (which fences any previous writer) and the clock seed; then load every SST's
//! metadata and replay the WAL pages not yet flushed into a memtable. Pages a crash left
//! unreferenced are deleted in one more commit, made only when there are some.
//!
//! So an open that fails after taking the role (a damaged metadata page, a storage error) leaves
//! the previous writer fenced and no writer at all: the next open takes the role again. Nothing
//! acknowledged is lost either way.
//!
//! A metadata page that fails its check is read and decoded again before the open reports it.
//!
//! Owns the `Inner` method [`open`](Inner::open), which builds the [`State`] every other file then
//! works on.

use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use super::lock::AsyncLock;
use super::memtable::{MemVersion, Memtable};
use super::memtable_filter::MemtableFilter;
use super::options::{DbOptions, PurgeReport, MAX_SEED_LEAD_MS};
use super::page_cache::PageCache;
use super::row_cache::RowCache;
use super::state::{Inner, State};
use super::version::{sst_pages, SstHandle, Version};
use super::wal::{WalSegments, WalState};
use crate::clock::{plausible, Clock, MonotonicClock};
use crate::error::{Error, ErrorKind, Result};
use crate::format::{decode_wal_page, Manifest, SstMeta};
use crate::join::join;
use crate::small_sort::insertion_sort_by;
use crate::store::{Commit, ManifestRecord, PageId, PageKind, PageStore, MAX_MANIFEST_VERSION};

/// How often an open reads the manifest again after another writer's commit beat its own.
const ROLE_ATTEMPTS: u32 = 8;

/// The manifest as committed by [`take_writer_role`], its version, and the clock reading the
/// stored times were checked against.
struct Role {
    manifest: Manifest,
    version: u64,
    reading: i64,
}

/// The error of an open that finds a stored time (`stored`) more than [`MAX_SEED_LEAD_MS`]
/// ahead of the clock's `reading`, or no plausible time at all: time would stand still there.
fn time_ahead_of_clock(stored: i64, reading: i64) -> Option<Error> {
    let ahead = plausible(stored).is_err() || stored > reading.saturating_add(MAX_SEED_LEAD_MS);
    ahead.then(|| {
        Error::invalid(alloc::format!(
            "the database's time ({stored} ms) is ahead of the clock ({reading} ms) by more than \
             a day (a bad reading was stored, or the clock was set back); if the clock is right, \
             open once with reset_clock (resetClock in JavaScript)"
        ))
    })
}

/// `decode`'s answer once two decodes in a row give the same one (at most three decodes), else
/// the last one's error, or `Corruption` if they all decoded but none alike. For the manifest,
/// which the open commits back, re-encoded, before anything checks it: in WebKit a decode of a
/// metadata page once read a field wrong from bytes that were right, and right the second time
/// (docs/performance.md, "A fault this probe found"); a manifest field read so (an SST id,
/// `wal_first`, `next_sst_id`) would be stored for good. The manifest is small: a second decode
/// costs little beside the open's round trips.
fn decoded_alike<T: PartialEq>(decode: impl Fn() -> Result<T>) -> Result<T> {
    let mut last = decode();
    for _ in 0..2 {
        let next = decode();
        if matches!((&last, &next), (Ok(a), Ok(b)) if a == b) {
            return next;
        }
        last = next;
    }
    last.and_then(|_| Err(Error::corruption("decoded differently each time")))
}

/// Take the writer role: commit the manifest back with a higher `writer_epoch` and the clock
/// seed. From that commit on, every commit of an earlier writer fails with `Fenced`, so what the
/// open reads *after* it is everything any writer ever acknowledged. (Read before it, a WAL page
/// an earlier writer was still committing could be missed, and its acknowledged writes lost.)
/// If an earlier writer's manifest commit lands between the read and this commit, this commit
/// is the one fenced: read the manifest again and retry.
async fn take_writer_role(
    store: &dyn PageStore,
    clock: &MonotonicClock,
    reset_clock: bool,
) -> Result<Role> {
    let mut attempt = 1;
    loop {
        let record = store.read_manifest().await?;
        let (mut manifest, expected_version) = match &record {
            Some(r) if r.version >= MAX_MANIFEST_VERSION => {
                return Err(Error::corruption(alloc::format!(
                    "manifest version {} is past the highest a store keeps",
                    r.version
                )))
            }
            Some(r) => (
                decoded_alike(|| Manifest::decode(&r.bytes)).map_err(|e| e.context("manifest"))?,
                r.version,
            ),
            None => (
                Manifest {
                    levels: alloc::vec![Vec::new()],
                    next_sst_id: 1,
                    wal_first: 1,
                    next_namespace_id: 1,
                    ..Manifest::default()
                },
                0,
            ),
        };
        manifest.writer_epoch += 1;
        // The purge set purged_until at a time no earlier than purged_until - 1, and never looks
        // below it again: a clock that restarted earlier could give a new key an expiry there.
        let used = manifest
            .clock_seed
            .max(manifest.purged_until.saturating_sub(1));
        let reading = clock.read_source()?;
        if reset_clock {
            // The clock is right and the stored time is not: start from the clock's time.
            manifest.purged_until = manifest.purged_until.min(reading.saturating_add(1));
        } else if let Some(e) = time_ahead_of_clock(used, reading) {
            return Err(e);
        } else {
            clock.observe(used);
        }
        manifest.clock_seed = clock.now()?;
        let version = expected_version + 1;
        let committed = store
            .commit(Commit {
                expected_manifest_version: expected_version,
                manifest: Some(ManifestRecord {
                    version,
                    bytes: manifest.encode(),
                }),
                puts: Vec::new(),
                deletes: Vec::new(),
            })
            .await;
        match committed {
            Ok(()) => {
                return Ok(Role {
                    manifest,
                    version,
                    reading,
                })
            }
            Err(e) if e.kind() == ErrorKind::Fenced && attempt < ROLE_ATTEMPTS => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

/// The metadata page of SST `id`, as `bytes` holds it: `Corruption` if it is missing, does not
/// decode, or names another SST.
fn sst_meta_of(id: u64, bytes: Option<&Vec<u8>>) -> Result<SstMeta> {
    let page = PageId::sst_meta(id);
    let bytes = bytes.ok_or_else(|| Error::corruption("missing").context(page))?;
    let meta = SstMeta::decode(bytes).map_err(|e| e.context(page))?;
    if meta.id != id {
        return Err(
            Error::corruption(alloc::format!("metadata names another SST ({})", meta.id))
                .context(page),
        );
    }
    Ok(meta)
}

impl Inner {
    /// Open (or create) the database in `store`.
    pub(crate) async fn open(
        store: Rc<dyn PageStore>,
        clock: Rc<dyn Clock>,
        options: DbOptions,
    ) -> Result<Inner> {
        let clock = MonotonicClock::new(clock, i64::MIN);
        let Role {
            mut manifest,
            version,
            reading,
        } = take_writer_role(&*store, &clock, options.reset_clock).await?;
        // Namespaces are looked up by id with a binary search (see `State::policy_of`), and so are
        // dropped ones (compaction). Both lists are kept in id order; a manifest written before
        // that was so for the first (ids are handed out in order) and nearly so for the second.
        insertion_sort_by(&mut manifest.namespaces, |a, b| a.id < b.id);
        insertion_sort_by(&mut manifest.dropped_namespaces, |a, b| a < b);

        // Everything else is read at once: every SST's metadata page (one round trip), and the
        // listings of WAL pages and of SST metadata pages.
        let meta_ids: Vec<PageId> = manifest
            .levels
            .iter()
            .flatten()
            .map(|&id| PageId::sst_meta(id))
            .collect();
        let (metas, (wal_pages, meta_pages)) = join(
            store.get_pages(meta_ids),
            join(
                store.list_pages(PageKind::Wal),
                store.list_pages(PageKind::SstMeta),
            ),
        )
        .await;
        let mut metas = metas?.into_iter();
        let mut levels = Vec::with_capacity(manifest.levels.len());
        // SST ids in the manifest (tens to hundreds: a list is enough).
        let mut referenced = Vec::new();
        for ids in &manifest.levels {
            let mut level = Vec::with_capacity(ids.len());
            for &id in ids {
                let meta = match sst_meta_of(id, metas.next().flatten().as_ref()) {
                    // Read and decoded again, alone, before it is reported: in WebKit about one
                    // open in four thousand decoded a metadata page whose bytes and checksum
                    // were right to another SST's id, and the same bytes decoded again gave the
                    // right one (docs/performance.md, "A fault this probe found"). Stored damage
                    // fails twice; an open with none makes no extra round trip.
                    Err(_) => {
                        let again = store.get_pages(alloc::vec![PageId::sst_meta(id)]).await?;
                        sst_meta_of(id, again.first().and_then(Option::as_ref))?
                    }
                    Ok(meta) => meta,
                };
                referenced.push(id);
                level.push(Rc::new(SstHandle::new(meta)));
            }
            levels.push(level);
        }
        if levels.is_empty() {
            levels.push(Vec::new());
        }

        // The WAL: every page not flushed yet (read in one round trip), oldest first.
        let mut memtable = Memtable::default();
        let mut segments = WalSegments::default();
        let mut last_seq = manifest.flushed_seq;
        let mut next_segment = manifest.wal_first.max(1);
        let (stale_wal, live_wal): (Vec<PageId>, Vec<PageId>) = wal_pages?
            .into_iter()
            .partition(|page| page.file < manifest.wal_first);
        if let Some(last) = stale_wal.iter().chain(&live_wal).max_by_key(|p| p.file) {
            // A store that lists the last number a WAL page can have leaves none for the next:
            // no writer numbers a page that far, so the listing is damaged.
            let after = last.file.checked_add(1).ok_or_else(|| {
                Error::corruption("WAL page number leaves none after it").context(*last)
            })?;
            next_segment = next_segment.max(after);
        }
        // After a clean close nothing is left to replay, and an empty read still costs a round
        // trip on stores that open a transaction for it (IndexedDB).
        let wal_bytes = if live_wal.is_empty() {
            Vec::new()
        } else {
            store.get_pages(live_wal.clone()).await?
        };
        for (page, bytes) in live_wal.into_iter().zip(wal_bytes) {
            let bytes =
                bytes.ok_or_else(|| Error::corruption("listed but missing").context(page))?;
            let batches = decode_wal_page(&bytes).map_err(|e| e.context(page))?;
            let mut page_max_seq = 0;
            for batch in batches {
                for row in batch {
                    page_max_seq = page_max_seq.max(row.seq);
                    if !options.reset_clock {
                        // Times the WAL holds are held to the same rule as the stored seed (a
                        // writer killed before any manifest commit left its times only here).
                        if let Some(e) = time_ahead_of_clock(row.ts, reading) {
                            return Err(e);
                        }
                        clock.observe(row.ts);
                    }
                    if row.seq <= manifest.flushed_seq {
                        continue;
                    }
                    last_seq = last_seq.max(row.seq);
                    let version = MemVersion {
                        seq: row.seq,
                        ts: row.ts,
                        expire_at: row.expire_at,
                        value: row.value,
                    };
                    let hash = MemtableFilter::hash(&row.key);
                    memtable.insert(row.key.into(), hash, version, &[], row.seq);
                }
            }
            segments.insert(page.file, page_max_seq, bytes.len());
        }

        // SSTs nothing references (a crash between a compaction and the deletion of its inputs).
        // An SST's pages are written and deleted in one commit with its metadata page, so an
        // unreferenced SST always still has that page, which says how many data pages it has;
        // the data pages are listed (every one of them) only if such a page cannot be read.
        let mut orphans = stale_wal;
        let orphan_metas: Vec<PageId> = meta_pages?
            .into_iter()
            .filter(|page| !referenced.contains(&page.file))
            .collect();
        if !orphan_metas.is_empty() {
            let mut unreadable = false;
            for (page, bytes) in orphan_metas
                .iter()
                .zip(store.get_pages(orphan_metas.clone()).await?)
            {
                match bytes.as_deref().map(SstMeta::decode) {
                    Some(Ok(meta)) if meta.id == page.file => orphans.extend(sst_pages(&meta)),
                    _ => {
                        unreadable = true;
                        orphans.push(*page);
                    }
                }
            }
            if unreadable {
                let listed = store.list_pages(PageKind::SstData).await?;
                orphans.extend(listed.into_iter().filter(|p| !referenced.contains(&p.file)));
                PageId::sort(&mut orphans);
                orphans.dedup();
            }
        }
        // Usually there are none (a clean history leaves nothing behind): no commit then.
        if !orphans.is_empty() {
            store
                .commit(Commit {
                    expected_manifest_version: version,
                    manifest: None,
                    puts: Vec::new(),
                    deletes: orphans,
                })
                .await?;
        }

        let state = State {
            closed: false,
            closing: false,
            halted: None,
            last_seq,
            manifest,
            manifest_version: version,
            version: Rc::new(Version { levels }),
            active: Rc::new(RefCell::new(memtable)),
            frozen: Vec::new(),
            wal: WalState::recovered(last_seq, next_segment, segments),
            cache: PageCache::new(options.page_cache_bytes),
            rows: RowCache::new(options.row_cache_bytes),
            obsolete: Vec::new(),
            snapshots: Vec::new(),
            none_due: Cell::new(None),
            #[cfg(test)]
            none_due_plans: Cell::new(0),
            next_expiry: None,
            next_expiry_known: false,
            next_expiry_lookups: 0,
            purge_resume: None,
            purge_rows_walked: 0,
            #[cfg(feature = "threads")]
            ssts_reserved_until: 0,
        };
        Ok(Inner {
            store: Cell::new(Some(store)),
            clock,
            options,
            state: RefCell::new(state),
            manifest_lock: AsyncLock::default(),
            purge_lock: AsyncLock::default(),
            expire_hook: RefCell::new(None),
            reclaim_listener: RefCell::new(None),
            unreported: RefCell::new(PurgeReport::default()),
            reclaim_lock: AsyncLock::default(),
            reclaims: Cell::new(0),
            commit_gate: AsyncLock::default(),
            #[cfg(feature = "threads")]
            compaction_job: RefCell::new(None),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use core::cell::Cell;

    /// A decode that gives `answers` in turn (the last one from then on), counting its calls.
    fn decoding(answers: &[Result<u32>]) -> (impl Fn() -> Result<u32> + '_, Rc<Cell<usize>>) {
        let calls = Rc::new(Cell::new(0));
        let counted = calls.clone();
        let decode = move || {
            let i = counted.get();
            counted.set(i + 1);
            answers[i.min(answers.len() - 1)].clone()
        };
        (decode, calls)
    }

    #[test]
    fn two_decodes_that_agree_are_the_answer() {
        let answers = [Ok(5)];
        let (decode, calls) = decoding(&answers);
        assert_eq!(decoded_alike(decode).unwrap(), 5);
        assert_eq!(calls.get(), 2);
    }

    #[test]
    fn a_first_decode_that_reads_wrong_or_fails_is_outvoted_by_the_next_two() {
        for first in [Ok(1_179_670_597), Err(Error::corruption("checksum"))] {
            let answers = [first, Ok(5)];
            let (decode, calls) = decoding(&answers);
            assert_eq!(decoded_alike(decode).unwrap(), 5);
            assert_eq!(calls.get(), 3);
        }
    }

    #[test]
    fn decodes_that_never_agree_are_corruption_and_a_failing_one_keeps_its_error() {
        let answers = [Ok(1), Ok(2), Ok(3)];
        let (decode, calls) = decoding(&answers);
        let e = decoded_alike(decode).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);
        assert!(e.to_string().contains("decoded differently"), "{e}");
        assert_eq!(calls.get(), 3);
        let answers = [Err(Error::storage("stored damage"))];
        let (decode, calls) = decoding(&answers);
        let e = decoded_alike(decode).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Storage);
        assert_eq!(calls.get(), 3);
    }
}
