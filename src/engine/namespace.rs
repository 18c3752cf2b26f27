//! Namespaces: separate keyspaces (SNKV's column families, Milvus's collections), each with an
//! optional default and maximum TTL, recorded in the manifest.
//!
//! Ids are never reused, so dropping a namespace is one atomic manifest change: its id moves to
//! the dropped list, handles on it stop working, and compaction removes its rows (and their
//! expiry-index entries) later, whatever level they are in.

use alloc::string::String;
use alloc::vec::Vec;

use super::flush::{install_manifest, manifest_commit};
use super::keys::{CALL_RECORD_NS, DEFAULT_NAMESPACE};
use super::options::NamespaceOptions;
use super::state::{Inner, State};
use super::write::TtlPolicy;
use crate::error::{Error, ErrorKind, Result};
use crate::format::NamespaceEntry;

/// The longest namespace name, in bytes.
const MAX_NAMESPACE_NAME: usize = 256;

impl State {
    /// The TTL rules of namespace `ns` (a namespace without its own default TTL uses the
    /// database's), or `Closed` if it was dropped.
    pub(crate) fn policy_of(&self, ns: u32, default_ttl_ms: Option<u64>) -> Result<TtlPolicy> {
        if ns == DEFAULT_NAMESPACE {
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
        if ns == DEFAULT_NAMESPACE {
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
        super::write::validate_ttl(super::options::Ttl::ExpireAfter(ms))?;
    }
    Ok(())
}

impl Inner {
    /// The id of namespace `name`, creating it (or changing its options, when `options` is
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
        let _guard = self.manifest_lock.lock().await;
        let existing = {
            let st = self.state.borrow();
            st.check_writable()?;
            st.manifest
                .namespaces
                .iter()
                .find(|n| n.name == name)
                .cloned()
        };
        if let Some(n) = &existing {
            let unchanged = options.is_none_or(|o| {
                o.default_ttl_ms == n.default_ttl_ms && o.max_ttl_ms == n.max_ttl_ms
            });
            if unchanged {
                return Ok(n.id);
            }
        }
        let id = self
            .commit_gated(
                |st| {
                    let mut manifest = st.manifest.clone();
                    let o = options.unwrap_or_default();
                    let id = match manifest.namespaces.iter_mut().find(|n| n.name == name) {
                        Some(n) => {
                            n.default_ttl_ms = o.default_ttl_ms;
                            n.max_ttl_ms = o.max_ttl_ms;
                            n.id
                        }
                        None => {
                            let id = manifest.next_namespace_id.max(1);
                            if id >= CALL_RECORD_NS {
                                return Err(Error::invalid("no namespace ids left"));
                            }
                            manifest.next_namespace_id = id + 1;
                            manifest.namespaces.push(NamespaceEntry {
                                id,
                                name: String::from(name),
                                default_ttl_ms: o.default_ttl_ms,
                                max_ttl_ms: o.max_ttl_ms,
                            });
                            id
                        }
                    };
                    let commit = manifest_commit(st, &manifest, Vec::new(), Vec::new());
                    Ok(Some((commit, (manifest, id))))
                },
                |st, (manifest, id)| {
                    install_manifest(st, manifest);
                    id
                },
            )
            .await?;
        id.ok_or_else(|| Error::storage("namespace commit did nothing"))
    }

    /// Drop namespace `name`: `false` if there is none. Its keys are gone at once for every
    /// reader; compaction reclaims their space.
    pub(crate) async fn drop_namespace(&self, name: &str) -> Result<bool> {
        validate_name(name)?;
        let _guard = self.manifest_lock.lock().await;
        let dropped = self
            .commit_gated(
                |st| {
                    let mut manifest = st.manifest.clone();
                    let Some(pos) = manifest.namespaces.iter().position(|n| n.name == name) else {
                        return Ok(None);
                    };
                    let entry = manifest.namespaces.remove(pos);
                    // In id order: compaction looks ids up by binary search.
                    let dropped = &mut manifest.dropped_namespaces;
                    let at = dropped.binary_search(&entry.id).unwrap_or_else(|i| i);
                    dropped.insert(at, entry.id);
                    let commit = manifest_commit(st, &manifest, Vec::new(), Vec::new());
                    Ok(Some((commit, manifest)))
                },
                install_manifest,
            )
            .await?;
        Ok(dropped.is_some())
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
