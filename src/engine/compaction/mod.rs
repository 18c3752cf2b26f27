//! Compaction: the planner that picks what to merge, the merge itself with the TTL compaction
//! filter (`retention::compaction_fates`), and the deletion of the pages it made obsolete.
//!
//! - [`plan`]: which SSTs to merge next ([`Plan`](parts::Plan)); decisions only.
//! - [`parts`]: the plain data passed between the steps (a plan, a merge's result).
//! - [`run`]: the merge and the commit that installs its output.
//! - `job` (`threads`): the merge on a thread of its own, its result installed as `run`'s is.
//! - [`page_gc`]: deleting the pages of replaced SSTs once no reader holds them.
//!
//! Leveled: L0 SSTs (overlapping, newest first) are merged with the overlapping part of L1 once
//! there are `l0_compaction_trigger` of them that do not all expire within a minute (those leave
//! by whole drops instead), the oldest first and at most twice L1's target of them at a time (an
//! L1 over twice its target is pushed down first); a deeper level over its target size pushes its
//! oldest SST down into the next level. `compact()` merges everything into the bottom level in
//! steps of the same bounded size (never the whole tree at once: see `plan_full_step`).
//! Each output, its new manifest and the deletion of unreferenced SST pages go in one commit.
//!
//! Expiry drives it too: an SST whose every row has expired and been purged is dropped whole,
//! without reading it, once every older SST its keys overlap has too (so nothing it uncovers is
//! live); an SST whose expiry percentiles say at least `expiry_compaction_share` of it has
//! expired, or that is older than `periodic_compaction_ms`, is compacted (Milvus, SlateDB).

#[cfg(feature = "threads")]
mod job;
mod page_gc;
mod parts;
mod plan;
mod run;

pub(crate) use parts::NoneDue;
#[cfg(feature = "threads")]
pub(crate) use parts::RunningJob;
