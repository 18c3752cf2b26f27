//! Compaction: the planner that picks what to merge, and the merge itself with the TTL
//! compaction filter (`retention::compaction_fates`).
//!
//! Leveled: L0 SSTs (overlapping, newest first) are merged with the overlapping part of L1 once
//! there are `l0_compaction_trigger` of them that do not all expire within a minute (those leave
//! by whole drops instead); a deeper level over its target size pushes its
//! oldest SST down into the next level. `compact()` merges everything into the bottom level.
//! The output, the new manifest and the deletion of unreferenced SST pages go in one commit.
//!
//! Expiry drives it too: an SST whose every row has expired and been purged is dropped whole,
//! without reading it, once every older SST its keys overlap has too (so nothing it uncovers is
//! live); an SST whose expiry percentiles say at least `expiry_compaction_share` of it has
//! expired, or that is older than `periodic_compaction_ms`, is compacted (Milvus, SlateDB).

use alloc::rc::Rc;
use alloc::vec::Vec;

use super::flush::{install_manifest, manifest_commit};
use super::keys::{namespace_of, parse_expiry_index_key};
use super::merge::MergeCursor;
use super::retention::{compaction_fates, ExpiryCutoff, Fate, VersionInfo};
use super::sst_writer::{BuiltSst, SstWriter};
use super::state::{Inner, State};
use super::version::{sst_pages, SstHandle, Version};
use super::work_slices::WorkSlices;
use crate::error::Error;
use crate::error::Result;
use crate::format::RowRef;
use crate::small_sort::insertion_sort_by;
use crate::store::{Commit, PageId};

/// One merge the planner chose.
pub(crate) struct Plan {
    /// Input SSTs by level.
    inputs: Vec<(usize, Vec<Rc<SstHandle>>)>,
    /// Where the output goes.
    output_level: usize,
    /// Nothing older than the inputs overlaps their key range below the output level.
    bottommost: bool,
    /// The inputs are dropped whole, not read or rewritten.
    drop_whole: bool,
}

fn key_range(ssts: &[Rc<SstHandle>]) -> Option<(Vec<u8>, Vec<u8>)> {
    let lo = ssts.iter().map(|s| s.first_key()).min()?;
    let hi = ssts.iter().map(|s| s.last_key()).max()?;
    Some((lo.to_vec(), hi.to_vec()))
}

/// All of L0 merged with the part of L1 it overlaps, into L1.
fn plan_l0(v: &Version) -> Option<Plan> {
    let l0 = v.levels.first()?.clone();
    let (lo, hi) = key_range(&l0)?;
    push_into(v, 0, l0, 1, &lo, &hi)
}

/// `pick` from `level` merged with the part of the next level it overlaps, into that level.
fn plan_push_down(v: &Version, level: usize, pick: Rc<SstHandle>) -> Option<Plan> {
    let (lo, hi) = (pick.first_key().to_vec(), pick.last_key().to_vec());
    push_into(v, level, alloc::vec![pick], level + 1, &lo, &hi)
}

fn push_into(
    v: &Version,
    level: usize,
    inputs: Vec<Rc<SstHandle>>,
    output_level: usize,
    lo: &[u8],
    hi: &[u8],
) -> Option<Plan> {
    let below: Vec<_> = v
        .levels
        .get(output_level)
        .map(|l| l.iter().filter(|s| s.overlaps(lo, hi)).cloned().collect())
        .unwrap_or_default();
    let mut all = inputs.clone();
    all.extend(below.iter().cloned());
    let (lo, hi) = key_range(&all)?;
    Some(Plan {
        inputs: alloc::vec![(level, inputs), (output_level, below)],
        output_level,
        bottommost: nothing_below(v, output_level, &lo, &hi),
        drop_whole: false,
    })
}

/// How many times `l0_compaction_trigger` L0 may hold, short-lived SSTs included, before it is
/// merged all the same (and before writes compact inline).
pub(crate) const L0_STALL_FACTOR: usize = 3;

/// An L0 SST whose rows all expire within this many ms of now does not count toward the L0
/// trigger: it leaves by a whole drop, which reads and writes nothing, sooner than merging it
/// into L1 would pay off in reads, and a merge would mix its rows with longer-lived ones so that
/// they could no longer leave whole. Point reads skip it by its key filter meanwhile.
const SHORT_LIVED_MS: i64 = 60_000;

fn short_lived(sst: &SstHandle, now: i64) -> bool {
    sst.meta
        .expiry_range_of_every_row()
        .is_some_and(|(_, max)| max <= now.saturating_add(SHORT_LIVED_MS))
}

/// Whether `sst`'s rows all carry an expiry and the rest of them expire sooner than the first
/// ones took (`max_expire_at - handled <= handled - min_expire_at`): then waiting for its whole
/// drop costs less than rewriting it, which would also mix its rows with longer-lived ones and
/// keep them from leaving whole. Short, uniform TTLs are the case this is for: an L0 SST of a
/// few seconds of sessions is half expired half-way through its span.
fn leaves_whole_soon(sst: &SstHandle, handled: i64) -> bool {
    sst.meta
        .expiry_range_of_every_row()
        .is_some_and(|(min, max)| max.saturating_sub(handled) <= handled.saturating_sub(min))
}

/// Whether `sst`'s key range reaches into namespace `ns` (it may hold rows of it).
fn may_hold_namespace(sst: &SstHandle, ns: u32) -> bool {
    match (namespace_of(sst.first_key()), namespace_of(sst.last_key())) {
        (Some(first), Some(last)) => first <= ns && ns <= last,
        _ => true,
    }
}

fn nothing_below(version: &Version, level: usize, lo: &[u8], hi: &[u8]) -> bool {
    version
        .levels
        .iter()
        .skip(level + 1)
        .flatten()
        .all(|s| !s.overlaps(lo, hi))
}

impl Inner {
    fn level_target(&self, level: usize) -> u64 {
        let mut target = self.options.level1_target_bytes;
        for _ in 1..level {
            target = target.saturating_mul(self.options.level_size_multiplier);
        }
        target
    }

    /// The next compaction worth doing, if any (`force`: merge everything to the bottom).
    pub(crate) fn plan_compaction(&self, st: &State, force: bool) -> Option<Plan> {
        let v = &st.version;
        if force {
            let deepest = v.deepest_nonempty()?;
            let inputs: Vec<_> = v
                .levels
                .iter()
                .enumerate()
                .filter(|(_, l)| !l.is_empty())
                .map(|(i, l)| (i, l.clone()))
                .collect();
            return Some(Plan {
                inputs,
                output_level: deepest.max(1),
                bottommost: true,
                drop_whole: false,
            });
        }
        if self.l0_merge_due(v) {
            return plan_l0(v);
        }
        if let Some(plan) = self.plan_whole_drop(st) {
            return Some(plan);
        }
        for level in 1..v.levels.len() {
            if v.level_bytes(level) > self.level_target(level) {
                let oldest = v
                    .levels
                    .get(level)?
                    .iter()
                    .min_by_key(|s| s.meta.creation_ts)?;
                return plan_push_down(v, level, oldest.clone());
            }
        }
        self.plan_expiry_compaction(st)
    }

    /// Whether L0 is merged into L1: it holds `l0_compaction_trigger` SSTs that are not short
    /// lived (see [`SHORT_LIVED_MS`]), or [`L0_STALL_FACTOR`] times that many in all.
    fn l0_merge_due(&self, v: &Version) -> bool {
        let l0 = v.levels.first().map_or(&[][..], Vec::as_slice);
        let trigger = self.options.l0_compaction_trigger.max(1);
        let now = self.clock.last_issued();
        let lasting = l0.iter().filter(|s| !short_lived(s, now)).count();
        lasting >= trigger || l0.len() >= trigger.saturating_mul(L0_STALL_FACTOR)
    }

    /// An SST whose every row has expired, and been purged, before any pinned reader's time:
    /// dropped whole, without a rewrite. The purge writes no tombstones, so dropping an SST
    /// uncovers the older versions of its keys: it is dropped only if every older SST its keys
    /// overlap (older L0 SSTs, deeper levels) is itself all expired, so whatever it uncovers is
    /// expired too.
    fn plan_whole_drop(&self, st: &State) -> Option<Plan> {
        let now = self.clock.last_issued();
        let purged_until = st.manifest.purged_until;
        let all_expired = |sst: &SstHandle| {
            let m = &sst.meta;
            // No pinned reader may be able to see these rows at all: one reading before they
            // expired would lose them.
            m.expiry_range_of_every_row().is_some_and(|(_, max)| {
                max <= now && max < purged_until && !st.pinned_before(m.min_seq, i64::MAX)
            })
        };
        let levels = &st.version.levels;
        for (level, ssts) in levels.iter().enumerate() {
            for (i, sst) in ssts.iter().enumerate() {
                if !all_expired(sst) {
                    continue;
                }
                let (lo, hi) = (sst.first_key(), sst.last_key());
                // L0 SSTs are newest first; below L0 each level's SSTs do not overlap.
                let older_l0 = if level == 0 { ssts.get(i + 1..) } else { None };
                let deeper = levels.get(level + 1..).unwrap_or_default().iter().flatten();
                let uncovers_only_expired = older_l0
                    .unwrap_or_default()
                    .iter()
                    .chain(deeper)
                    .filter(|o| o.overlaps(lo, hi))
                    .all(|o| all_expired(o));
                if uncovers_only_expired {
                    return Some(Plan {
                        inputs: alloc::vec![(level, alloc::vec![sst.clone()])],
                        output_level: level,
                        bottommost: false,
                        drop_whole: true,
                    });
                }
            }
        }
        None
    }

    /// An SST that is largely expired (by its percentiles, counting only rows the purge has
    /// handled) or older than the periodic interval: compacted with what overlaps it below, or in
    /// place at the bottom.
    fn plan_expiry_compaction(&self, st: &State) -> Option<Plan> {
        let v = &st.version;
        let now = self.clock.last_issued();
        let handled = now.min(st.manifest.purged_until.saturating_sub(1));
        let due = |s: &SstHandle| {
            // Rows a pinned reader can still see cannot go; compacting would change nothing.
            if st.pinned_before(s.meta.min_seq, i64::MAX) {
                return false;
            }
            (s.meta.expired_share_at(handled) >= self.options.expiry_compaction_share
                && !leaves_whole_soon(s, handled))
                || self
                    .options
                    .periodic_compaction_ms
                    .is_some_and(|p| now >= s.meta.creation_ts.saturating_add(p))
        };
        for (level, ssts) in v.levels.iter().enumerate() {
            let Some(pick) = ssts.iter().find(|s| due(s)).cloned() else {
                continue;
            };
            if level == 0 {
                return plan_l0(v);
            }
            if nothing_below(v, level, pick.first_key(), pick.last_key()) {
                // Nothing beneath: rewrite it in place, dropping what expired.
                return Some(Plan {
                    inputs: alloc::vec![(level, alloc::vec![pick])],
                    output_level: level,
                    bottommost: true,
                    drop_whole: false,
                });
            }
            return plan_push_down(v, level, pick);
        }
        None
    }

    /// Run compactions until the planner finds nothing to do (`force`: one full merge).
    pub(crate) async fn compact(&self, force: bool) -> Result<usize> {
        let _guard = self.manifest_lock.lock().await;
        let mut done = 0;
        loop {
            let plan = {
                let st = self.state.borrow();
                st.check_writable()?;
                self.plan_compaction(&st, force && done == 0)
            };
            let Some(plan) = plan else {
                return Ok(done);
            };
            self.run_compaction(plan).await?;
            done += 1;
            if force {
                return Ok(done);
            }
        }
    }

    /// Merge the plan's inputs through the TTL compaction filter and commit the result.
    pub(crate) async fn run_compaction(&self, plan: Plan) -> Result<()> {
        if plan.drop_whole {
            let next_id = self.state.borrow().manifest.next_sst_id;
            return self
                .install_compaction(&plan, Vec::new(), next_id, &[])
                .await;
        }
        let (snapshots, cutoff, dropped, mut next_id, with_expiry) = {
            let st = self.state.borrow();
            let with_expiry = plan
                .inputs
                .iter()
                .flat_map(|(_, l)| l.iter())
                .any(|s| s.meta.ttl_row_count > 0);
            let cutoff = ExpiryCutoff {
                now: self.clock.now()?,
                purged_until: st.manifest.purged_until,
            };
            (
                st.snapshot_seqs(),
                cutoff,
                st.manifest.dropped_namespaces.clone(),
                st.manifest.next_sst_id,
                with_expiry,
            )
        };
        let now = cutoff.now;
        // Looked up once per key, by binary search: the list is kept in id order (`namespace`).
        // Dropped namespaces that rows written out still belong to (kept for a snapshot).
        let mut still_dropped: Vec<u32> = Vec::new();
        let mut runs = Vec::new();
        for (level, ssts) in &plan.inputs {
            if *level == 0 {
                runs.extend(ssts.iter().map(|s| alloc::vec![s.clone()]));
            } else if !ssts.is_empty() {
                runs.push(ssts.clone());
            }
        }
        let mut cursor = MergeCursor::over_compaction_inputs(self, runs).await?;
        let mut outputs: Vec<BuiltSst> = Vec::new();
        let mut writer: Option<SstWriter> = None;
        // The host gets turns by bytes written (finished outputs + the current writer): the
        // inputs may all be cached, so nothing else would ever wait.
        let mut slices = WorkSlices::new(self.options.work_slice_bytes);
        let mut finished_bytes = 0usize;
        while let Some((key, versions)) = cursor.next_key(self).await? {
            let infos: Vec<VersionInfo> = versions.iter().map(|v| v.info()).collect();
            let index_entry = parse_expiry_index_key(&key);
            let data_key = index_entry.map_or(key.as_slice(), |(_, k)| k);
            let doomed_ns = namespace_of(data_key).filter(|ns| dropped.binary_search(ns).is_ok());
            let doomed = doomed_ns.is_some();
            // Every version of an index entry has the entry's expiry time (it is in the key), and
            // an entry the purge has handled is never read again: all of them can go at any
            // level, as if this were the bottom.
            let handled_entry = index_entry.is_some_and(|(at, _)| cutoff.drops(at));
            let fates = compaction_fates(
                &infos,
                &snapshots,
                cutoff,
                plan.bottommost || handled_entry,
                doomed,
            );
            for (v, fate) in versions.iter().zip(fates) {
                let row = match fate {
                    Fate::Keep => v.row(&key),
                    Fate::Tombstone => RowRef {
                        key: &key,
                        seq: v.seq,
                        ts: v.ts,
                        expire_at: None,
                        value: None,
                    },
                    Fate::Drop => continue,
                };
                if let Some(ns) = doomed_ns.filter(|ns| !still_dropped.contains(ns)) {
                    still_dropped.push(ns);
                }
                let w = writer.get_or_insert_with(|| {
                    let w = SstWriter::new(next_id, with_expiry, self.options.page_size, now);
                    next_id += 1;
                    w
                });
                w.add(&row)?;
            }
            // Cut SSTs only between keys, so one key's versions never span two SSTs of a run.
            if writer
                .as_ref()
                .is_some_and(|w| w.bytes() >= self.options.sst_target_bytes)
            {
                if let Some(full) = writer.take() {
                    finished_bytes += full.bytes();
                    outputs.extend(full.finish());
                }
            }
            let written = finished_bytes + writer.as_ref().map_or(0, SstWriter::bytes);
            if slices.turn_due(written) {
                self.store.yield_now().await;
            }
        }
        if let Some(built) = writer.take().and_then(SstWriter::finish) {
            outputs.push(built);
        }
        self.install_compaction(&plan, outputs, next_id, &still_dropped)
            .await
    }

    /// Install a compaction's outputs. `still_dropped`: the dropped namespaces some output row
    /// belongs to; any other dropped namespace that no SST left untouched and no memtable can
    /// hold a row of is forgotten (its id is never reused, so nothing can ever need it again).
    async fn install_compaction(
        &self,
        plan: &Plan,
        outputs: Vec<BuiltSst>,
        next_id: u64,
        still_dropped: &[u32],
    ) -> Result<()> {
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
                        insertion_sort_by(out, |a, b| a.first_key() < b.first_key());
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

    /// The pages of obsolete SSTs that no reader holds any more (safe to delete now).
    pub(crate) fn reclaimable(&self, st: &State) -> Vec<PageId> {
        let mut pages = Vec::new();
        for sst in &st.obsolete {
            // One reference is the obsolete list itself.
            if Rc::strong_count(sst) == 1 {
                pages.extend(sst_pages(&sst.meta));
            }
        }
        pages
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
