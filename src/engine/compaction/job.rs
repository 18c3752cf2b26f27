//! A compaction merged on a thread of its own (the `threads` feature, with
//! `DbOptions::background_compaction`): [`CompactionJob`] holds copies of a plan's inputs (each
//! SST's metadata and data pages) and the merge's parameters, everything the merge reads, so it
//! can run where the engine's state is out of reach. The engine's thread goes on with writes,
//! reads and flushes meanwhile, and installs the result at a later maintenance step exactly as
//! an inline compaction installs its own (`run.rs`).
//!
//! Owns the `Inner` methods [`start_compaction_job`](Inner::start_compaction_job),
//! [`compaction_job_running`](Inner::compaction_job_running) and
//! [`install_compaction_job`](Inner::install_compaction_job), and the `Inner` field
//! `compaction_job`. While a job runs no other compaction is planned (a maintenance step asks
//! again once it holds the manifest lock; `compact()` waits for the job and installs it first,
//! and so does the write stall, which then starts the next compaction on a thread too), so its
//! plan stays current; flushes go on (they add newer SSTs to L0, above everything the job
//! merges), and so do namespace drops (their rows in the job's outputs are dropped by a later
//! compaction).
//!
//! Why the result is what an inline compaction would have written: the merge reads nothing but
//! its inputs and parameters, all fixed when it starts. The snapshots it keeps versions for are
//! those open then (one opened later reads at a newer sequence number, which the newest versions
//! serve); the expiry cutoff is the time then (rows expired by then are expired for every later
//! read); the SST ids it numbers its outputs with are reserved then, out of the manifest's next
//! id, so no flush takes them. Nothing reaches the store before the install's one commit, so a
//! crash or a `close()` meanwhile leaves the database as if the job had never started.

use alloc::rc::Rc;
use alloc::vec::Vec;
use core::future::Future;
use core::pin::pin;
use core::task::{Context, Poll, Waker};

use super::parts::{input_runs, MergeParams, Merged, Plan, RunningJob};
use super::run::Merge;
use crate::engine::merge::{MergeCursor, PageSource};
use crate::engine::page_cache::CacheFill;
use crate::engine::state::Inner;
use crate::engine::version::SstHandle;
use crate::error::{Error, Result};
use crate::format::{DataPage, SstMeta};

/// A compaction's merge with everything it reads copied in: runs of SSTs (each its metadata and
/// its data pages' bytes, in order) and the parameters. `Send`: it holds nothing of the engine's.
struct CompactionJob {
    runs: Vec<Vec<(SstMeta, Vec<Vec<u8>>)>>,
    params: MergeParams,
    /// One past the last SST id reserved for its outputs.
    id_limit: u64,
}

/// A job's pages: decoded on its thread and kept in the SST handles made there, as a store that
/// shares its pages has the engine's handles keep them (`SstHandle::keep_shared_page`).
struct KeptPages;

impl PageSource for KeptPages {
    fn page<'a>(
        &'a self,
        sst: &'a SstHandle,
        index: usize,
        _fill: CacheFill,
    ) -> impl Future<Output = Result<DataPage>> + 'a {
        let page = sst.page_number(index).and_then(|n| {
            sst.shared_page(n)
                .ok_or_else(|| Error::storage("a compaction job was not given a page it reads"))
        });
        core::future::ready(page)
    }
}

impl CompactionJob {
    /// Merge the inputs. Their pages were checked when the engine read them (or are the
    /// engine's own, shared by a memory store), so they are decoded here without checking them
    /// again.
    fn run(self) -> Result<Merged> {
        let mut runs = Vec::with_capacity(self.runs.len());
        for run in self.runs {
            let mut handles = Vec::with_capacity(run.len());
            for (meta, pages) in run {
                let handle = SstHandle::new(meta);
                for (index, bytes) in pages.into_iter().enumerate() {
                    let page = DataPage::decode_trusted(Rc::new(bytes))?;
                    handle.keep_shared_page(handle.page_number(index)?, page);
                }
                handles.push(Rc::new(handle));
            }
            runs.push(handles);
        }
        let params = self.params;
        let merging = pin!(async {
            let mut merge = Merge::new(params);
            let mut cursor = MergeCursor::over_compaction_inputs(&KeptPages, runs).await?;
            while let Some(next) = cursor.next(&KeptPages).await? {
                merge.add(next)?;
            }
            Ok::<_, Error>(merge.finish())
        });
        // The pages are all here: the merge never waits, so one poll finishes it.
        let merged = match merging.poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(merged) => merged?,
            Poll::Pending => return Err(Error::storage("a compaction job's merge waited")),
        };
        if merged.next_id > self.id_limit {
            return Err(Error::storage(
                "a compaction job wrote more SSTs than it reserved ids for",
            ));
        }
        Ok(merged)
    }
}

/// SST ids reserved for a job whose inputs hold `input_bytes` of data pages: twice as many
/// outputs as the inputs' bytes fill at the target size, and two more. A merge writes no more
/// rows than it reads, and cuts an output only once it reaches the target size, so it stays
/// well inside; a job that would not is run again inline (see `install_compaction_job`).
fn ids_to_reserve(input_bytes: u64, sst_target_bytes: usize) -> u64 {
    let target = u64::try_from(sst_target_bytes).unwrap_or(u64::MAX).max(1);
    (input_bytes / target).saturating_mul(2).saturating_add(2)
}

impl Inner {
    /// Whether a job started and is not yet installed.
    pub(crate) fn compaction_job_running(&self) -> bool {
        self.compaction_job.borrow().is_some()
    }

    /// Copy `plan`'s inputs, reserve its outputs' ids and start merging them on a thread of
    /// their own; `false`. Called under the manifest lock, with no job running (where one is,
    /// nothing starts: its plan may overlap this one). Where no thread can be started the merge
    /// runs inline, at once: `true`.
    pub(crate) async fn start_compaction_job(&self, plan: Plan) -> Result<bool> {
        if self.compaction_job_running() {
            return Ok(false);
        }
        let mut runs = Vec::new();
        let mut input_bytes = 0u64;
        for run in input_runs(&plan) {
            let mut copied = Vec::with_capacity(run.len());
            for sst in run {
                input_bytes = input_bytes.saturating_add(sst.bytes());
                let mut pages = Vec::with_capacity(sst.meta.pages.len());
                for index in 0..sst.meta.pages.len() {
                    let page = self.load_page(&sst, index, CacheFill::Skip).await?;
                    pages.push(page.bytes().to_vec());
                }
                copied.push((sst.meta.clone(), pages));
            }
            runs.push(copied);
        }
        let (first_id, id_limit) = {
            let mut st = self.state.borrow_mut();
            let first = st.next_sst_id();
            let limit =
                first.saturating_add(ids_to_reserve(input_bytes, self.options.sst_target_bytes));
            // Flushes number their SSTs from here on. Only in memory: a crash forgets the
            // reservation along with the job, whose outputs never reached the store.
            st.ssts_reserved_until = limit;
            (first, limit)
        };
        let params = self.merge_params(&plan, first_id)?;
        // A close that began while the pages were copied gets no job to drop after it.
        self.state.borrow().check_writable()?;
        let job = CompactionJob {
            runs,
            params,
            id_limit,
        };
        let thread = std::thread::Builder::new()
            .name("ttlkv-compaction".into())
            .spawn(move || job.run());
        match thread {
            Ok(thread) => {
                *self.compaction_job.borrow_mut() = Some(RunningJob { plan, thread });
                Ok(false)
            }
            Err(_) => self.run_compaction(plan).await.map(|_| true),
        }
    }

    /// The write stall's relief where compactions merge on their own thread: wait for the
    /// running job and install it, then start the next compaction due, if any, on its own
    /// thread too. Writes that still find L0 at its limit wait for that one in turn.
    pub(crate) async fn relieve_l0_in_background(&self) -> Result<()> {
        let _guard = self.manifest_lock.lock().await;
        self.install_compaction_job(true).await?;
        let plan = {
            let st = self.state.borrow();
            st.check_writable()?;
            self.plan_compaction(&st)
        };
        if let Some(plan) = plan {
            self.run_or_start_compaction(plan).await?;
        }
        Ok(())
    }

    /// Install the running job's result, if a job is running and has finished (or `wait`: once
    /// it has, blocking this thread until then); whether one was installed. A job that failed
    /// is run again inline, so its error (if the failure was the inputs', not the job's) is
    /// the one an inline compaction reports. Called under the manifest lock.
    pub(crate) async fn install_compaction_job(&self, wait: bool) -> Result<bool> {
        let job = {
            let mut running = self.compaction_job.borrow_mut();
            match &*running {
                Some(job) if wait || job.thread.is_finished() => running.take(),
                _ => None,
            }
        };
        let Some(RunningJob { plan, thread }) = job else {
            return Ok(false);
        };
        match thread.join() {
            Ok(Ok(merged)) => self.install_compaction(&plan, merged).await?,
            Ok(Err(_)) | Err(_) => {
                self.run_compaction(plan).await?;
            }
        }
        Ok(true)
    }
}
