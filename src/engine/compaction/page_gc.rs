//! Page garbage collection: the pages of SSTs a compaction replaced are deleted once no reader
//! holds them any more, in the next flush or compaction commit or in a commit of their own.
//!
//! Owns the `Inner` methods [`reclaimable`](Inner::reclaimable),
//! [`any_reclaimable`](Inner::any_reclaimable),
//! [`forget_reclaimed`](Inner::forget_reclaimed) and
//! [`reclaim_obsolete`](Inner::reclaim_obsolete) (and its `_locked` form); of the state, `State::obsolete` (filled by
//! `run.rs`) and the page cache entries of deleted pages.

use alloc::rc::Rc;
use alloc::vec::Vec;

use crate::engine::state::{Inner, State};
use crate::engine::version::{sst_pages, SstHandle};
use crate::error::Result;
use crate::store::{Commit, PageId};

/// Whether no reader holds `sst` any more: the one reference left is the obsolete list's own.
fn unheld(sst: &Rc<SstHandle>) -> bool {
    Rc::strong_count(sst) == 1
}

impl Inner {
    /// The pages of obsolete SSTs that no reader holds any more (safe to delete now).
    pub(crate) fn reclaimable(&self, st: &State) -> Vec<PageId> {
        let mut pages = Vec::new();
        for sst in &st.obsolete {
            if unheld(sst) {
                pages.extend(sst_pages(&sst.meta));
            }
        }
        pages
    }

    /// Whether [`reclaimable`](Self::reclaimable) would name any page (without listing them).
    pub(crate) fn any_reclaimable(&self, st: &State) -> bool {
        st.obsolete.iter().any(unheld)
    }

    /// After a commit that deleted `reclaimed`, drop those SSTs from the obsolete list and cache.
    pub(crate) fn forget_reclaimed(&self, st: &mut State, reclaimed: &[PageId]) {
        if reclaimed.is_empty() {
            return;
        }
        st.obsolete
            .retain(|s| !reclaimed.contains(&PageId::sst_meta(s.id())));
        for id in reclaimed {
            st.cache.remove(*id);
        }
    }

    /// Delete the pages of obsolete SSTs nobody reads any more, in a commit of their own.
    pub(crate) async fn reclaim_obsolete(&self) -> Result<usize> {
        let _guard = self.manifest_lock.lock().await;
        self.reclaim_obsolete_locked().await
    }

    /// [`Inner::reclaim_obsolete`], for a caller that holds the manifest lock.
    pub(crate) async fn reclaim_obsolete_locked(&self) -> Result<usize> {
        let reclaimed = self
            .commit_gated(
                |st| {
                    let deletes = self.reclaimable(st);
                    if deletes.is_empty() {
                        return Ok(None);
                    }
                    let commit = Commit {
                        expected_manifest_version: st.manifest_version,
                        manifest: None,
                        puts: Vec::new(),
                        deletes: deletes.clone(),
                    };
                    Ok(Some((commit, deletes)))
                },
                |st, deletes| {
                    self.forget_reclaimed(st, &deletes);
                    deletes.len()
                },
            )
            .await?;
        Ok(reclaimed.unwrap_or(0))
    }
}
