//! Flush: a memtable becomes an L0 SST. The SST's pages, the new manifest and the deletion of
//! the WAL pages it makes redundant go to the store in **one** commit, so a crash leaves either
//! the memtable's data in the WAL or in the SST, never neither and never half.
//!
//! Owns the `Inner` methods [`flush`](Inner::flush), [`flush_locked`](Inner::flush_locked) and the
//! private `flush_one`; of the state, it freezes `State::active` into `State::frozen`, adds the L0
//! SST to `State::version`, and removes the WAL segments the flush made redundant from
//! `State::wal`. Its commit goes through `commit.rs`.

use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::RefCell;

use super::commit::{install_manifest, manifest_commit};
use super::memtable::Memtable;
use super::retention::needed_between;
use super::sst_writer::{BuiltSst, SstWriter};
use super::state::{Frozen, Inner};
use super::version::{SstHandle, Version};
use super::work_slices::WorkSlices;
use crate::error::Result;
use crate::store::PageId;

impl Inner {
    /// Flush every memtable to L0 (the active one is frozen first).
    pub(crate) async fn flush(&self) -> Result<()> {
        let _guard = self.manifest_lock.lock().await;
        self.flush_locked().await
    }

    /// [`Inner::flush`] for a caller that already holds the manifest lock.
    pub(crate) async fn flush_locked(&self) -> Result<()> {
        // Everything in the memtable must be in the WAL first: then the rollback of a failed WAL
        // commit never touches a frozen memtable.
        self.drain_wal().await?;
        {
            let mut st = self.state.borrow_mut();
            st.check_writable()?;
            if !st.active.borrow().is_empty() {
                let next = Memtable::following(&st.active.borrow());
                let table = core::mem::replace(&mut st.active, Rc::new(RefCell::new(next)));
                let max_seq = st.last_seq;
                st.frozen.push(Frozen { table, max_seq });
            }
        }
        loop {
            let next = {
                let st = self.state.borrow();
                st.frozen.first().map(|f| (f.table.clone(), f.max_seq))
            };
            let Some((table, max_seq)) = next else {
                return Ok(());
            };
            self.flush_one(&table, max_seq).await?;
        }
    }

    /// Write the oldest frozen memtable as an L0 SST and commit it.
    async fn flush_one(&self, table: &Rc<RefCell<Memtable>>, max_seq: u64) -> Result<()> {
        // The memtable is frozen and the SST id is ours under the manifest lock. Snapshots taken
        // from here on read at a seq at or above every version in the table, so the newest
        // version of each key (always kept) is all they need of it.
        let (id, mut points) = {
            let st = self.state.borrow();
            (st.next_sst_id(), st.snapshot_seqs())
        };
        points.push(u64::MAX);
        let mut writer = SstWriter::new(
            id,
            table.borrow().min_expire_at().is_some(),
            self.options.page_size,
            self.clock.now()?,
        );
        // Built in slices, giving the host a turn in between (no borrow of the table is held
        // then); each slice resumes after the last key of the one before.
        let mut slices = WorkSlices::new(self.options.work_slice_bytes);
        let mut resume_after: Option<Vec<u8>> = None;
        loop {
            let mut finished = true;
            {
                let memtable = table.borrow();
                for (key, versions) in memtable.iter_after(resume_after.as_deref()) {
                    // Newest first: each version's next newer one is the one before it.
                    let mut newer = None;
                    for v in versions {
                        if needed_between(v.seq, newer, points.iter().copied()) {
                            writer.add(&v.row(key))?;
                        }
                        newer = Some(v.seq);
                    }
                    if slices.turn_due(writer.bytes()) {
                        resume_after = Some(key.to_vec());
                        finished = false;
                        break;
                    }
                }
            }
            if finished {
                break;
            }
            self.yield_to_host().await;
        }
        // The pages move into the commit: an SST is never held twice in memory.
        let (meta, puts) = match writer.finish() {
            Some(BuiltSst { meta, pages }) => (Some(meta), pages),
            None => (None, Vec::new()),
        };
        let seed = self.clock.last_issued();
        self.commit_gated(
            |st| {
                let mut manifest = st.manifest.clone();
                if let Some(meta) = &meta {
                    if manifest.levels.is_empty() {
                        manifest.levels.push(Vec::new());
                    }
                    if let Some(l0) = manifest.levels.first_mut() {
                        l0.insert(0, meta.id);
                    }
                    manifest.next_sst_id = meta.id + 1;
                }
                manifest.flushed_seq = manifest.flushed_seq.max(max_seq);
                manifest.clock_seed = manifest.clock_seed.max(seed);
                // Inside the gate no WAL commit is in flight: `segments` is complete. (In segment
                // order, so `wal_deleted` is ascending.)
                let wal_deleted: Vec<u64> = st
                    .wal
                    .segments
                    .iter()
                    .filter(|s| s.max_seq <= max_seq)
                    .map(|s| s.segment)
                    .collect();
                manifest.wal_first = st
                    .wal
                    .segments
                    .iter()
                    .map(|s| s.segment)
                    .find(|s| wal_deleted.binary_search(s).is_err())
                    .unwrap_or(st.wal.next_segment);
                let reclaimed = self.reclaimable(st);
                let mut deletes: Vec<PageId> =
                    wal_deleted.iter().map(|s| PageId::wal(*s)).collect();
                deletes.extend(reclaimed.iter().copied());
                let commit = manifest_commit(st, &manifest, puts, deletes);
                Ok(Some((commit, (manifest, meta, wal_deleted, reclaimed))))
            },
            |st, (manifest, meta, wal_deleted, reclaimed)| {
                install_manifest(st, manifest);
                if let Some(meta) = meta {
                    let mut version: Version = (*st.version).clone();
                    if version.levels.is_empty() {
                        version.levels.push(Vec::new());
                    }
                    if let Some(l0) = version.levels.first_mut() {
                        l0.insert(0, Rc::new(SstHandle::new(meta)));
                    }
                    st.version = Rc::new(version);
                }
                st.frozen.retain(|f| !Rc::ptr_eq(&f.table, table));
                st.wal.segments.remove_all(&wal_deleted);
                self.forget_reclaimed(st, &reclaimed);
            },
        )
        .await
        .map(|_| ())
    }
}
