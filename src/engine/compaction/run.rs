//! Running a compaction: merging a [`Plan`]'s inputs through the TTL compaction filter
//! (`retention::compaction_fates`) into new SSTs, and installing them with the new manifest in one
//! commit.
//!
//! Owns the `Inner` methods [`compact`](Inner::compact),
//! [`run_compaction`](Inner::run_compaction) and the private `install_compaction`; of the state,
//! it replaces `State::version` and the manifest's levels, forgets dropped namespaces nothing
//! holds any more, and moves the replaced SSTs to `State::obsolete` (for `page_gc.rs`).

use alloc::rc::Rc;
use alloc::vec::Vec;

use super::parts::{input_runs, MergeParams, Merged, Plan};
use super::plan::plan_in_place;
use crate::engine::commit::{install_manifest, manifest_commit};
use crate::engine::keys::{namespace_of, parse_expiry_index_key};
use crate::engine::memtable::MemVersion;
use crate::engine::merge::{MergeCursor, Next};
use crate::engine::retention::{compaction_fates, ExpiryCutoff, Fate, VersionInfo};
use crate::engine::sst_writer::{BuiltSst, SstWriter};
use crate::engine::state::Inner;
use crate::engine::version::{SstHandle, Version};
use crate::engine::work_slices::WorkSlices;
use crate::error::{Error, Result};
use crate::format::key_order::key_below;
use crate::format::RowRef;
use crate::small_sort::insertion_sort_by;

/// Whether `sst`'s key range reaches into namespace `ns` (it may hold rows of it).
fn may_hold_namespace(sst: &SstHandle, ns: u32) -> bool {
    in_namespace_range(
        (namespace_of(sst.first_key()), namespace_of(sst.last_key())),
        ns,
    )
}

/// Whether keys whose first and last namespaces are `range` may hold rows of `ns` (a key that
/// names none may be anything).
fn in_namespace_range(range: (Option<u32>, Option<u32>), ns: u32) -> bool {
    match range {
        (Some(first), Some(last)) => first <= ns && ns <= last,
        _ => true,
    }
}

impl Inner {
    /// Run compactions until the planner finds nothing to do, or (`force`) a full compaction:
    /// the steps of [`plan_full_step`](Inner::plan_full_step) until every SST is in one level,
    /// then each SST there that no step wrote as the bottom rewritten in place, so every row has
    /// been through the filter as the bottom. The pages of each step's inputs are deleted before
    /// the next step (when no reader holds them), so the store holds one step's inputs and
    /// outputs beside the data at most.
    pub(crate) async fn compact(&self, force: bool) -> Result<usize> {
        let _guard = self.manifest_lock.lock().await;
        let mut done = 0;
        // A compaction merging on its own thread goes in first: no other may be planned
        // beside it.
        #[cfg(feature = "threads")]
        if self.install_compaction_job(true).await? {
            done += 1;
        }
        // Of a full compaction: the SSTs its steps wrote as the bottom.
        let mut as_bottom: Vec<u64> = Vec::new();
        loop {
            let plan = {
                let st = self.state.borrow();
                st.check_writable()?;
                if force {
                    self.plan_full_step(&st).or_else(|| {
                        let deepest = st.version.deepest_nonempty()?;
                        let left = st
                            .version
                            .levels
                            .get(deepest)?
                            .iter()
                            .find(|s| !as_bottom.contains(&s.id()))?;
                        Some(plan_in_place(deepest, left.clone()))
                    })
                } else {
                    self.plan_compaction(&st)
                }
            };
            let Some(plan) = plan else {
                return Ok(done);
            };
            let bottommost = plan.bottommost;
            let outputs = self.run_compaction(plan).await?;
            done += 1;
            if force && bottommost {
                as_bottom.extend(outputs);
            }
            self.reclaim_obsolete_locked().await?;
        }
    }

    /// Run `plan` now, or (`DbOptions::background_compaction`) start merging it on a thread of
    /// its own (`job.rs`), for a later maintenance step to install; whether it ran now.
    #[cfg(feature = "threads")]
    pub(crate) async fn run_or_start_compaction(&self, plan: Plan) -> Result<bool> {
        if self.options.background_compaction && !plan.drop_whole {
            return self.start_compaction_job(plan).await;
        }
        self.run_compaction(plan).await?;
        Ok(true)
    }

    /// Whether a compaction merges on a thread of its own (never without `threads`).
    #[cfg(not(feature = "threads"))]
    pub(crate) fn compaction_job_running(&self) -> bool {
        false
    }

    /// Merge the plan's inputs through the TTL compaction filter and commit the result; the ids
    /// of the SSTs it wrote.
    pub(crate) async fn run_compaction(&self, plan: Plan) -> Result<Vec<u64>> {
        if plan.drop_whole {
            let nothing = Merged {
                outputs: Vec::new(),
                next_id: self.state.borrow().next_sst_id(),
                still_dropped: Vec::new(),
                #[cfg(feature = "threads")]
                dropped_seen: Vec::new(),
            };
            self.install_compaction(&plan, nothing).await?;
            return Ok(Vec::new());
        }
        let first_id = self.state.borrow().next_sst_id();
        let mut merge = Merge::new(self.merge_params(&plan, first_id)?);
        let mut cursor = MergeCursor::over_compaction_inputs(self, input_runs(&plan)).await?;
        let mut slices = WorkSlices::new(self.options.work_slice_bytes);
        while let Some(next) = cursor.next(self).await? {
            merge.add(next)?;
            if slices.turn_due(merge.written()) {
                self.yield_to_host().await;
            }
        }
        let merged = merge.finish();
        let ids = merged.outputs.iter().map(|o| o.meta.id).collect();
        self.install_compaction(&plan, merged).await?;
        Ok(ids)
    }

    /// What a merge of `plan`'s inputs needs besides them, as of now; its outputs are numbered
    /// from `first_id`.
    #[cfg_attr(not(feature = "threads"), inline(always))]
    pub(super) fn merge_params(&self, plan: &Plan, first_id: u64) -> Result<MergeParams> {
        let st = self.state.borrow();
        Ok(MergeParams {
            snapshots: st.snapshot_seqs(),
            cutoff: ExpiryCutoff {
                now: self.clock.now()?,
                purged_until: st.manifest.purged_until,
            },
            dropped: st.manifest.dropped_namespaces.clone(),
            first_id,
            with_expiry: plan
                .inputs
                .iter()
                .flat_map(|(_, l)| l.iter())
                .any(|s| s.meta.ttl_row_count > 0),
            bottommost: plan.bottommost,
            page_size: self.options.page_size,
            sst_target_bytes: self.options.sst_target_bytes,
        })
    }

    /// Install a compaction's outputs. Of the namespaces dropped when the merge started,
    /// `still_dropped` are those some output row belongs to; any other dropped namespace that no
    /// SST left untouched and no memtable can hold a row of is forgotten (its id is never
    /// reused, so nothing can ever need it again). One dropped since (while a job merged on its
    /// own thread) is kept if an output's key range reaches into it: the merge kept its rows.
    pub(super) async fn install_compaction(&self, plan: &Plan, merged: Merged) -> Result<()> {
        let Merged {
            outputs,
            next_id,
            still_dropped,
            #[cfg(feature = "threads")]
            dropped_seen,
        } = merged;
        // Only a merge on its own thread can see a namespace dropped after it began: an inline
        // one holds the manifest lock, which a drop takes.
        #[cfg(feature = "threads")]
        let output_namespaces: Vec<(Option<u32>, Option<u32>)> = outputs
            .iter()
            .map(|o| {
                let first = o.meta.first_key().and_then(namespace_of);
                let last = o.meta.last_key().and_then(namespace_of);
                (first, last)
            })
            .collect();
        #[cfg(feature = "threads")]
        let written_since_dropped = |ns: u32| {
            !dropped_seen.contains(&ns)
                && output_namespaces
                    .iter()
                    .any(|&range| in_namespace_range(range, ns))
        };
        #[cfg(not(feature = "threads"))]
        let written_since_dropped = |_: u32| false;
        let input_ids: Vec<u64> = plan
            .inputs
            .iter()
            .flat_map(|(_, l)| l.iter().map(|s| s.id()))
            .collect();
        let seed = self.clock.last_issued();
        self.commit_gated(
            |st| {
                // The plan must still describe the tree (plans are made under the manifest lock,
                // so this only fails if that rule is ever broken): never install over a change.
                let current = plan.inputs.iter().all(|(level, ssts)| {
                    let now_at = st.version.levels.get(*level).map_or(&[][..], Vec::as_slice);
                    ssts.iter().all(|s| now_at.iter().any(|t| Rc::ptr_eq(s, t)))
                });
                if !current {
                    return Err(Error::storage("compaction plan went stale; not installed"));
                }
                let mut version: Version = (*st.version).clone();
                for level in &mut version.levels {
                    level.retain(|s| !input_ids.contains(&s.id()));
                }
                while version.levels.len() <= plan.output_level {
                    version.levels.push(Vec::new());
                }
                // The output pages move into the commit: they are never held twice in memory.
                let mut puts = Vec::new();
                if let Some(out) = version.levels.get_mut(plan.output_level) {
                    for built in outputs {
                        puts.extend(built.pages);
                        out.push(Rc::new(SstHandle::new(built.meta)));
                    }
                    // Deeper levels are ordered by key; L0 stays newest first (only a whole
                    // drop has L0 as its output level, and it adds nothing there).
                    if plan.output_level > 0 {
                        insertion_sort_by(out, |a, b| key_below(a.first_key(), b.first_key()));
                    }
                }
                while version.levels.len() > 1 && version.levels.last().is_some_and(Vec::is_empty) {
                    version.levels.pop();
                }
                let mut manifest = st.manifest.clone();
                let untouched: Vec<&Rc<SstHandle>> = st
                    .version
                    .levels
                    .iter()
                    .flatten()
                    .filter(|s| !input_ids.contains(&s.id()))
                    .collect();
                let memtables = st.memtables_newest_first();
                manifest.dropped_namespaces.retain(|&ns| {
                    still_dropped.contains(&ns)
                        || written_since_dropped(ns)
                        || untouched.iter().any(|s| may_hold_namespace(s, ns))
                        || memtables
                            .iter()
                            .any(|t| t.borrow().holds_prefix(&ns.to_be_bytes()))
                });
                manifest.levels = version.level_ids();
                manifest.next_sst_id = manifest.next_sst_id.max(next_id);
                manifest.clock_seed = manifest.clock_seed.max(seed);
                let reclaimed = self.reclaimable(st);
                let commit = manifest_commit(st, &manifest, puts, reclaimed.clone());
                Ok(Some((commit, (version, manifest, reclaimed))))
            },
            |st, (version, manifest, reclaimed)| {
                install_manifest(st, manifest);
                st.version = Rc::new(version);
                for (_, ssts) in &plan.inputs {
                    st.obsolete.extend(ssts.iter().cloned());
                }
                self.forget_reclaimed(st, &reclaimed);
            },
        )
        .await
        .map(|_| ())
    }
}

/// A compaction's merge, one key at a time ([`Merge::add`]): the TTL compaction filter judges
/// each key's versions, and the kept ones go into new SSTs, cut at the target size between keys.
/// Fed by the merge of the inputs' runs: `run_compaction`'s here, or a job's on its own thread
/// (`job.rs`).
pub(super) struct Merge {
    p: MergeParams,
    next_id: u64,
    outputs: Vec<BuiltSst>,
    writer: Option<SstWriter>,
    finished_bytes: usize,
    still_dropped: Vec<u32>,
    // The facts and fates of one key's versions, in buffers every key reuses.
    infos: Vec<VersionInfo>,
    fates: Vec<Fate>,
}

impl Merge {
    #[cfg_attr(not(feature = "threads"), inline(always))]
    pub(super) fn new(p: MergeParams) -> Merge {
        Merge {
            next_id: p.first_id,
            p,
            outputs: Vec::new(),
            writer: None,
            finished_bytes: 0,
            still_dropped: Vec::new(),
            infos: Vec::new(),
            fates: Vec::new(),
        }
    }

    /// Bytes written so far (finished outputs and the current one): what a host's turns are
    /// counted by (the inputs may all be cached, so nothing else would ever wait).
    pub(super) fn written(&self) -> usize {
        self.finished_bytes + self.writer.as_ref().map_or(0, SstWriter::bytes)
    }

    /// Judge the next key's versions and write the kept ones.
    #[cfg_attr(not(feature = "threads"), inline(always))]
    pub(super) fn add(&mut self, next: Next) -> Result<()> {
        let p = &self.p;
        let cutoff = p.cutoff;
        // The key's versions, newest first. Most keys have one: a row read where it is in
        // its page (`lone`, with how its page encodes rows and its bytes there); else copies.
        let (lone, versions, key) = match &next {
            Next::Lone(held) => {
                let (row, bytes) = held.row_and_bytes()?;
                (Some((row, held.features(), bytes)), &[][..], row.key)
            }
            Next::Versions(key, versions) => (None, versions.as_slice(), key.as_slice()),
        };
        self.infos.clear();
        match lone {
            Some((row, ..)) => self.infos.push(VersionInfo::of_row(&row)),
            None => self.infos.extend(versions.iter().map(MemVersion::info)),
        }
        let index_entry = parse_expiry_index_key(key);
        let data_key = index_entry.map_or(key, |(_, k)| k);
        let doomed_ns = namespace_of(data_key).filter(|ns| p.dropped.binary_search(ns).is_ok());
        let doomed = doomed_ns.is_some();
        // Every version of an index entry has the entry's expiry time (it is in the key), and
        // an entry the purge has handled is never read again: all of them can go at any
        // level, as if this were the bottom.
        let handled_entry = index_entry.is_some_and(|(at, _)| cutoff.drops(at));
        compaction_fates(
            &self.infos,
            &p.snapshots,
            cutoff,
            p.bottommost || handled_entry,
            doomed,
            &mut self.fates,
        );
        for (i, fate) in self.fates.iter().copied().enumerate() {
            let (row, encoded) = match (lone, versions.get(i)) {
                (Some((row, features, bytes)), _) => (row, Some((features, bytes))),
                (None, Some(v)) => (v.row(key), None),
                (None, None) => continue,
            };
            let (row, encoded) = match fate {
                Fate::Keep => (row, encoded),
                Fate::Tombstone => (
                    RowRef {
                        value: None,
                        expire_at: None,
                        ..row
                    },
                    None,
                ),
                Fate::Drop => continue,
            };
            if let Some(ns) = doomed_ns.filter(|ns| !self.still_dropped.contains(ns)) {
                self.still_dropped.push(ns);
            }
            let next_id = &mut self.next_id;
            let w = self.writer.get_or_insert_with(|| {
                let w = SstWriter::new(*next_id, p.with_expiry, p.page_size, cutoff.now);
                *next_id += 1;
                w
            });
            match encoded {
                Some((features, bytes)) => w.add_encoded(&row, features, bytes)?,
                None => w.add(&row)?,
            }
        }
        // Cut SSTs only between keys, so one key's versions never span two SSTs of a run.
        if self
            .writer
            .as_ref()
            .is_some_and(|w| w.bytes() >= p.sst_target_bytes)
        {
            if let Some(full) = self.writer.take() {
                self.finished_bytes += full.bytes();
                self.outputs.extend(full.finish());
            }
        }
        Ok(())
    }

    /// The merge's result, its last SST finished.
    #[cfg_attr(not(feature = "threads"), inline(always))]
    pub(super) fn finish(mut self) -> Merged {
        if let Some(built) = self.writer.take().and_then(SstWriter::finish) {
            self.outputs.push(built);
        }
        Merged {
            outputs: self.outputs,
            next_id: self.next_id,
            still_dropped: self.still_dropped,
            #[cfg(feature = "threads")]
            dropped_seen: self.p.dropped,
        }
    }
}
