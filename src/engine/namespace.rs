//! Namespaces: separate keyspaces (SNKV's column families, Milvus's collections), each with an
//! optional default and maximum TTL, recorded in the manifest, and the TTL rules themselves:
//! [`TtlPolicy`] (a keyspace's default and maximum TTL, as every write and the purge apply them),
//! [`MAX_TTL_MS`] and the checks and arithmetic of TTLs.
//!
//! Ids are never reused, so dropping a namespace is one atomic manifest change: its id moves to
//! the dropped list, handles on it stop working, and compaction removes its rows (and their
//! expiry-index entries) later, whatever level they are in.
//!
//! Clearing a keyspace (the default one or a namespace) is the same move without the goodbye: its
//! rows' id is dropped and the keyspace gets a fresh, empty id, recorded in the manifest's moved
//! keyspaces. Handles keep the id the keyspace was created with (its *handle id*) and find the
//! current one at each call ([`State::keyspace_id`]), so a clear costs one manifest commit,
//! whatever the number of keys.
//!
//! Owns the `Inner` methods [`ensure_namespace`](Inner::ensure_namespace),
//! [`drop_namespace`](Inner::drop_namespace), [`clear_keyspace`](Inner::clear_keyspace),
//! [`namespaces`](Inner::namespaces) and the private `change_manifest`, and the `State` lookups
//! [`keyspace_id`](State::keyspace_id), [`policy_of`](State::policy_of) and
//! [`namespace_name`](State::namespace_name); of the state, the manifest's namespaces, dropped
//! namespaces and moved keyspaces (committed through `commit.rs`).

use alloc::string::String;
use alloc::vec::Vec;

use super::commit::{install_manifest, manifest_commit};
use super::keys::{CALL_RECORD_NS, DEFAULT_NAMESPACE};
use super::memtable::MemVersion;
use super::options::{NamespaceOptions, Ttl};
use super::state::{Inner, State};
use crate::clock::MAX_PLAUSIBLE_MS;
use crate::error::{Error, ErrorKind, Result};
use crate::format::{Manifest, MovedKeyspace, NamespaceEntry};

/// The longest namespace name, in bytes.
const MAX_NAMESPACE_NAME: usize = 256;

/// The TTL rules of the keyspace a write goes to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TtlPolicy {
    /// TTL applied by `Ttl::Default`.
    pub default_ttl_ms: Option<u64>,
    /// Longer or missing TTLs are clamped to this.
    pub max_ttl_ms: Option<u64>,
}

/// The longest TTL: added to any plausible time it stays within `i64`, so no write with it can
/// overflow (a default or maximum TTL is stored with a namespace, and an overflowing one would
/// fail every later put there).
pub const MAX_TTL_MS: u64 = (i64::MAX - MAX_PLAUSIBLE_MS) as u64;

/// Check a `Ttl` given by a caller.
pub(crate) fn validate_ttl(ttl: Ttl) -> Result<()> {
    match ttl {
        Ttl::ExpireAfter(0) => Err(Error::invalid("a TTL must be greater than 0 ms")),
        Ttl::ExpireAfter(ms) if ms > MAX_TTL_MS => Err(Error::invalid(alloc::format!(
            "a TTL must be at most {MAX_TTL_MS} ms"
        ))),
        _ => Ok(()),
    }
}

fn ms_to_i64(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// The time `ms` after `now`: an error, never a saturated time, if it is past the range of
/// times (a saturated expiry would read as "now", and the write would become a delete).
pub(crate) fn expiry_after(now: i64, ms: u64) -> Result<i64> {
    i64::try_from(ms)
        .ok()
        .and_then(|ms| now.checked_add(ms))
        .ok_or_else(|| {
            Error::invalid(alloc::format!(
                "an expiry {ms} ms after {now} is beyond the range of times"
            ))
        })
}

impl TtlPolicy {
    /// Clamp an expiry to the policy's maximum TTL (a missing expiry becomes the maximum).
    pub(crate) fn clamp(&self, expire_at: Option<i64>, now: i64) -> Option<i64> {
        match self.max_ttl_ms {
            Some(max) => {
                let cap = now.saturating_add(ms_to_i64(max));
                Some(expire_at.map_or(cap, |at| at.min(cap)))
            }
            None => expire_at,
        }
    }

    /// The expiry a write with `ttl` gives its key (clamped to the maximum TTL); an error if it
    /// is past the range of times.
    pub(crate) fn expiry(
        &self,
        ttl: Ttl,
        now: i64,
        current: Option<&MemVersion>,
    ) -> Result<Option<i64>> {
        let raw = match ttl {
            Ttl::Default => self
                .default_ttl_ms
                .map(|ms| expiry_after(now, ms))
                .transpose()?,
            Ttl::NoExpiry => None,
            Ttl::ExpireAfter(ms) => Some(expiry_after(now, ms)?),
            Ttl::ExpireAt(at) => Some(at),
            Ttl::Keep => current.and_then(|c| c.expire_at),
        };
        Ok(self.clamp(raw, now))
    }
}

impl State {
    /// The namespace id the rows of the keyspace with handle id `handle` are stored under now
    /// (they differ once the keyspace was cleared).
    pub(crate) fn keyspace_id(&self, handle: u32) -> u32 {
        moved_to(&self.manifest, handle)
    }

    /// Whether namespace id `ns` holds the default keyspace's rows.
    fn is_default(&self, ns: u32) -> bool {
        ns == self.keyspace_id(DEFAULT_NAMESPACE)
    }

    /// The TTL rules of namespace `ns` (a namespace without its own default TTL uses the
    /// database's), or `Closed` if it was dropped.
    pub(crate) fn policy_of(&self, ns: u32, default_ttl_ms: Option<u64>) -> Result<TtlPolicy> {
        if self.is_default(ns) {
            return Ok(TtlPolicy {
                default_ttl_ms,
                max_ttl_ms: None,
            });
        }
        self.namespace_entry(ns)
            .map(|n| TtlPolicy {
                default_ttl_ms: n.default_ttl_ms.or(default_ttl_ms),
                max_ttl_ms: n.max_ttl_ms,
            })
            .ok_or_else(|| Error::new(ErrorKind::Closed, "the namespace was dropped"))
    }

    /// The name of namespace `ns` (`""` for the default one), if it exists.
    pub(crate) fn namespace_name(&self, ns: u32) -> Option<String> {
        if self.is_default(ns) {
            return Some(String::new());
        }
        self.namespace_entry(ns).map(|n| n.name.clone())
    }

    /// The manifest's entry of namespace `ns`. Every call looks its namespace up, so by binary
    /// search: entries are in id order (ids are handed out in increasing order and appended;
    /// recovery sorts them), however many namespaces there are.
    fn namespace_entry(&self, ns: u32) -> Option<&NamespaceEntry> {
        let list = &self.manifest.namespaces;
        list.binary_search_by_key(&ns, |n| n.id)
            .ok()
            .and_then(|i| list.get(i))
    }
}

/// Where the keyspace with handle id `handle` is stored in `manifest` (see [`MovedKeyspace`]).
fn moved_to(manifest: &Manifest, handle: u32) -> u32 {
    let moved = &manifest.moved_keyspaces;
    moved
        .binary_search_by_key(&handle, |m| m.handle)
        .map_or(handle, |i| moved[i].id)
}

/// The handle id of the keyspace stored under `id`: the id it was created with.
fn handle_of(manifest: &Manifest, id: u32) -> u32 {
    manifest
        .moved_keyspaces
        .iter()
        .find(|m| m.id == id)
        .map_or(id, |m| m.handle)
}

/// A fresh namespace id from `manifest`, or an error once they are used up.
fn next_id(manifest: &mut Manifest) -> Result<u32> {
    let id = manifest.next_namespace_id.max(1);
    if id >= CALL_RECORD_NS {
        return Err(Error::invalid("no namespace ids left"));
    }
    manifest.next_namespace_id = id + 1;
    Ok(id)
}

/// Put `id` in the dropped list, kept in id order (compaction looks ids up by binary search).
fn drop_id(manifest: &mut Manifest, id: u32) {
    let dropped = &mut manifest.dropped_namespaces;
    let at = dropped.binary_search(&id).unwrap_or_else(|i| i);
    dropped.insert(at, id);
}

fn validate_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > MAX_NAMESPACE_NAME {
        return Err(Error::invalid(alloc::format!(
            "a namespace name is 1 to {MAX_NAMESPACE_NAME} bytes"
        )));
    }
    Ok(())
}

fn validate_options(o: &NamespaceOptions) -> Result<()> {
    for ms in [o.default_ttl_ms, o.max_ttl_ms].into_iter().flatten() {
        validate_ttl(Ttl::ExpireAfter(ms))?;
    }
    Ok(())
}

impl Inner {
    /// Commit the manifest `change` makes of the current one (`None`: nothing to change) and
    /// install it; `true` if it was committed. The namespace changes all go through here, so
    /// that the commit path exists once in the wasm module.
    async fn change_manifest(
        &self,
        change: &dyn Fn(&State) -> Result<Option<Manifest>>,
    ) -> Result<bool> {
        let _guard = self.manifest_lock.lock().await;
        let changed = self
            .commit_gated(
                |st| {
                    Ok(change(st)?.map(|manifest| {
                        (
                            manifest_commit(st, &manifest, Vec::new(), Vec::new()),
                            manifest,
                        )
                    }))
                },
                install_manifest,
            )
            .await?;
        Ok(changed.is_some())
    }

    /// The handle id of namespace `name`, creating it (or changing its options, when `options` is
    /// given and differs) in one manifest commit.
    pub(crate) async fn ensure_namespace(
        &self,
        name: &str,
        options: Option<NamespaceOptions>,
    ) -> Result<u32> {
        validate_name(name)?;
        if let Some(o) = &options {
            validate_options(o)?;
        }
        {
            // Most calls name a namespace that exists as asked: answered without waiting for the
            // manifest lock or a commit in flight.
            let st = self.state.borrow();
            st.check_writable()?;
            let unchanged = st
                .manifest
                .namespaces
                .iter()
                .find(|n| n.name == name)
                .filter(|n| {
                    options.is_none_or(|o| {
                        o.default_ttl_ms == n.default_ttl_ms && o.max_ttl_ms == n.max_ttl_ms
                    })
                });
            if let Some(n) = unchanged {
                return Ok(handle_of(&st.manifest, n.id));
            }
        }
        self.change_manifest(&|st| {
            let mut manifest = st.manifest.clone();
            let o = options.unwrap_or_default();
            match manifest.namespaces.iter_mut().find(|n| n.name == name) {
                Some(_) if options.is_none() => return Ok(None),
                Some(n) if o.default_ttl_ms == n.default_ttl_ms && o.max_ttl_ms == n.max_ttl_ms => {
                    return Ok(None);
                }
                Some(n) => {
                    n.default_ttl_ms = o.default_ttl_ms;
                    n.max_ttl_ms = o.max_ttl_ms;
                }
                None => {
                    let id = next_id(&mut manifest)?;
                    manifest.namespaces.push(NamespaceEntry {
                        id,
                        name: String::from(name),
                        default_ttl_ms: o.default_ttl_ms,
                        max_ttl_ms: o.max_ttl_ms,
                    });
                }
            }
            Ok(Some(manifest))
        })
        .await?;
        let st = self.state.borrow();
        let manifest = &st.manifest;
        let entry = manifest.namespaces.iter().find(|n| n.name == name);
        entry
            .map(|n| handle_of(manifest, n.id))
            .ok_or_else(|| Error::new(ErrorKind::Closed, "the namespace was dropped meanwhile"))
    }

    /// Drop namespace `name`: `false` if there is none. Its keys are gone at once for every
    /// reader; compaction reclaims their space.
    pub(crate) async fn drop_namespace(&self, name: &str) -> Result<bool> {
        validate_name(name)?;
        self.change_manifest(&|st| {
            let mut manifest = st.manifest.clone();
            let Some(pos) = manifest.namespaces.iter().position(|n| n.name == name) else {
                return Ok(None);
            };
            let entry = manifest.namespaces.remove(pos);
            drop_id(&mut manifest, entry.id);
            // Its handles find no keyspace any more (their handle id is dropped too).
            manifest.moved_keyspaces.retain(|m| m.id != entry.id);
            Ok(Some(manifest))
        })
        .await
    }

    /// Remove every key of the keyspace with handle id `handle` in one manifest commit: its rows'
    /// namespace id is dropped (compaction reclaims them, as for a dropped namespace; the purge
    /// reports none of them) and the keyspace gets a fresh id. `false`, committing nothing, if an
    /// expiry may have come due (its event is owed: the caller purges, then tries again).
    /// `Closed` if the namespace was dropped.
    pub(crate) async fn clear_keyspace(&self, handle: u32) -> Result<bool> {
        self.change_manifest(&|st| {
            // The time read here, behind the commit gate: a key that expired while the clear
            // waited there is owed its event, which the purge gives before the clear drops it.
            if st.expiry_may_be_due(self.clock.now()?) {
                return Ok(None);
            }
            let mut manifest = st.manifest.clone();
            let old = moved_to(&manifest, handle);
            if handle != DEFAULT_NAMESPACE && manifest.namespaces.iter().all(|n| n.id != old) {
                return Err(Error::new(ErrorKind::Closed, "the namespace was dropped"));
            }
            let new = next_id(&mut manifest)?;
            if let Some(pos) = manifest.namespaces.iter().position(|n| n.id == old) {
                // The new id is the highest, so the list stays in id order.
                let mut entry = manifest.namespaces.remove(pos);
                entry.id = new;
                manifest.namespaces.push(entry);
            }
            drop_id(&mut manifest, old);
            let moved = &mut manifest.moved_keyspaces;
            match moved.binary_search_by_key(&handle, |m| m.handle) {
                Ok(i) => moved[i].id = new,
                Err(i) => moved.insert(i, MovedKeyspace { handle, id: new }),
            }
            Ok(Some(manifest))
        })
        .await
    }

    /// The namespaces that exist, with their options.
    pub(crate) fn namespaces(&self) -> Vec<(String, NamespaceOptions)> {
        let st = self.state.borrow();
        st.manifest
            .namespaces
            .iter()
            .map(|n| {
                (
                    n.name.clone(),
                    NamespaceOptions {
                        default_ttl_ms: n.default_ttl_ms,
                        max_ttl_ms: n.max_ttl_ms,
                    },
                )
            })
            .collect()
    }
}
