//! Manifest-changing commits through the commit gate.
//!
//! Flush, compaction, page reclamation and the clock seed all change the store the same way:
//! inside the gate (so no WAL commit is in flight and the manifest version is current), build the
//! commit from the state, send it, and on success apply its effect to the state *before* leaving
//! the gate, so the next commit's precondition names the version this one installed.
//!
//! Owns the `Inner` methods [`commit_gated`](Inner::commit_gated),
//! [`commit_manifest_change`](Inner::commit_manifest_change) and
//! [`persist_clock_seed`](Inner::persist_clock_seed), and the helpers every manifest change
//! uses, [`manifest_commit`] and [`install_manifest`]; of the state, `State::manifest`,
//! `State::manifest_version`, and `State::halted` when a commit finds another writer in charge or
//! its outcome is unknown.

use alloc::vec::Vec;

use super::state::{Inner, State};
use crate::error::{Error, Result};
use crate::format::Manifest;
use crate::store::{Commit, ManifestRecord, PageId};

impl Inner {
    /// Build a commit with `make` (returning `None` means nothing to do), send it, and on success
    /// run `apply` with what `make` returned — all inside the commit gate.
    pub(crate) async fn commit_gated<T, R>(
        &self,
        make: impl FnOnce(&State) -> Result<Option<(Commit, T)>>,
        apply: impl FnOnce(&mut State, T) -> R,
    ) -> Result<Option<R>> {
        let _gate = self.commit_gate.lock().await;
        let prepared = {
            let st = self.state.borrow();
            st.check_open()?;
            if let Some(e) = &st.halted {
                return Err(e.clone());
            }
            make(&st)?
        };
        let Some((commit, extra)) = prepared else {
            return Ok(None);
        };
        let mut abandoned = AbandonedManifestCommit {
            inner: self,
            armed: commit.manifest.is_some(),
        };
        let result = self.store_commit(commit).await;
        abandoned.armed = false;
        let mut st = self.state.borrow_mut();
        match result {
            Ok(()) => Ok(Some(apply(&mut st, extra))),
            Err(e) => {
                st.note_failure(&e, false);
                Err(e)
            }
        }
    }

    /// Commit the current manifest with `change` applied and nothing else, unless `change`
    /// returns false (nothing to change).
    pub(crate) async fn commit_manifest_change(
        &self,
        change: impl FnOnce(&mut Manifest) -> bool,
    ) -> Result<()> {
        self.commit_gated(
            |st| {
                let mut manifest = st.manifest.clone();
                if !change(&mut manifest) {
                    return Ok(None);
                }
                let commit = manifest_commit(st, &manifest, Vec::new(), Vec::new());
                Ok(Some((commit, manifest)))
            },
            install_manifest,
        )
        .await
        .map(|_| ())
    }

    /// Commit a manifest whose clock seed is the highest time handed out, if it is not already.
    pub(crate) async fn persist_clock_seed(&self) -> Result<()> {
        let _guard = self.manifest_lock.lock().await;
        let seed = self.clock.last_issued();
        self.commit_manifest_change(|manifest| {
            let behind = manifest.clock_seed < seed;
            manifest.clock_seed = manifest.clock_seed.max(seed);
            behind
        })
        .await
    }
}

/// A commit that installs `manifest` as the next version, with `puts` and `deletes`.
pub(crate) fn manifest_commit(
    st: &State,
    manifest: &Manifest,
    puts: Vec<(PageId, Vec<u8>)>,
    deletes: Vec<PageId>,
) -> Commit {
    Commit {
        expected_manifest_version: st.manifest_version,
        manifest: Some(ManifestRecord {
            version: st.manifest_version + 1,
            bytes: manifest.encode(),
        }),
        puts,
        deletes,
    }
}

/// Record that `manifest` was committed as the next version.
pub(crate) fn install_manifest(st: &mut State, manifest: Manifest) {
    st.manifest = manifest;
    st.manifest_version += 1;
}

/// If a manifest commit's future is dropped before it finishes, nobody knows whether the store
/// took it, so this handle can no longer name the current manifest version: it stops writing
/// (reopening recovers whatever the store holds).
struct AbandonedManifestCommit<'a> {
    inner: &'a Inner,
    armed: bool,
}

impl Drop for AbandonedManifestCommit<'_> {
    fn drop(&mut self) {
        if self.armed {
            if let Ok(mut st) = self.inner.state.try_borrow_mut() {
                let e = Error::storage(
                    "a manifest commit was abandoned before it finished; reopen the database",
                );
                st.note_failure(&e, true);
            }
        }
    }
}
