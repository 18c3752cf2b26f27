//! The plain data a compaction passes between its steps: its [`Plan`], the runs its inputs
//! merge as ([`input_runs`]), the merge's parameters and result ([`MergeParams`], [`Merged`]),
//! (`threads`) a [`RunningJob`], and the planner's kept "nothing due" ([`NoneDue`]). Nothing
//! here reaches the engine's state, so the state can hold a running job and that answer without
//! importing the code that makes them.

use alloc::rc::Rc;
use alloc::vec::Vec;
#[cfg(feature = "threads")]
use std::thread::JoinHandle;

use crate::engine::retention::ExpiryCutoff;
use crate::engine::sst_writer::BuiltSst;
use crate::engine::version::SstHandle;
#[cfg(feature = "threads")]
use crate::error::Result;

/// What a compaction plan reads of the state besides the time, as [`NoneDue`] keeps it: the
/// version is replaced only with a manifest commit, which moves `manifest_version` (and emptied
/// at close, where no plan is due either);
/// `purged_until` also moves in memory alone (`purge.rs`); the pinned reads matter only through
/// `State::pinned_before(seq, i64::MAX)`, which `State::newest_pin_before(i64::MAX)` decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PlanInputs {
    pub(super) manifest_version: u64,
    pub(super) purged_until: i64,
    pub(super) newest_pin: Option<u64>,
}

/// `Inner::compaction_due`'s last answer when it was "no" (`plan.rs`): planned on `inputs`, it
/// holds until the time reaches `until` (`Inner::none_due_until`). Kept in `State::none_due`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NoneDue {
    pub(super) inputs: PlanInputs,
    pub(super) until: i64,
}

/// One merge the planner chose.
pub(crate) struct Plan {
    /// Input SSTs by level.
    pub(super) inputs: Vec<(usize, Vec<Rc<SstHandle>>)>,
    /// Where the output goes.
    pub(super) output_level: usize,
    /// Nothing older than the inputs overlaps their key range below the output level.
    pub(super) bottommost: bool,
    /// The inputs are dropped whole, not read or rewritten.
    pub(super) drop_whole: bool,
}

/// The runs a plan's inputs merge as: each L0 SST alone (they overlap), each deeper level's SSTs
/// as one run.
#[inline(always)]
pub(crate) fn input_runs(plan: &Plan) -> Vec<Vec<Rc<SstHandle>>> {
    let mut runs = Vec::new();
    for (level, ssts) in &plan.inputs {
        if *level == 0 {
            runs.extend(ssts.iter().map(|s| alloc::vec![s.clone()]));
        } else if !ssts.is_empty() {
            runs.push(ssts.clone());
        }
    }
    runs
}

/// What a compaction's merge needs besides its inputs, fixed when it starts: the snapshots'
/// sequence numbers, the expiry cutoff and the dropped namespaces of that moment, and the
/// options that shape its outputs. A job on another thread takes its own copy.
pub(crate) struct MergeParams {
    pub snapshots: Vec<u64>,
    pub cutoff: ExpiryCutoff,
    /// Kept in id order (`namespace`): looked up once per key, by binary search.
    pub dropped: Vec<u32>,
    /// The id of the first SST the merge writes; the next ones follow it.
    pub first_id: u64,
    /// Whether any input row carries an expiry (the outputs' rows then all may).
    pub with_expiry: bool,
    pub bottommost: bool,
    pub page_size: usize,
    pub sst_target_bytes: usize,
}

/// A merge's result: its SSTs, the id after the last one's, the dropped namespaces some output
/// row still belongs to (kept for a snapshot), and the namespaces that were dropped when it
/// started (the others' rows it kept as live).
pub(crate) struct Merged {
    pub outputs: Vec<BuiltSst>,
    pub next_id: u64,
    pub still_dropped: Vec<u32>,
    #[cfg(feature = "threads")]
    pub dropped_seen: Vec<u32>,
}

#[cfg(feature = "threads")]
/// A job started and not yet installed: its plan (whose SSTs it keeps alive and current) and
/// its thread.
pub(crate) struct RunningJob {
    pub plan: Plan,
    pub thread: JoinHandle<Result<Merged>>,
}
