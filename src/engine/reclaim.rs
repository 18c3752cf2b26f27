//! Quota reclaim: when the store is full, free what expired data holds and try once more.
//!
//! A write that fails with [`ErrorKind::QuotaExceeded`] has written nothing (a failed WAL commit
//! rolls it back; a failed manifest commit changes nothing), and what a call did before its
//! failing commit (a clear's purges) stands and is not done twice. The `Db` calls that write
//! (the write calls, `Db::write_ops` in `db/writes.rs`, then `clear` and `flush`) hand such an
//! error to [`Inner::try_again_after`], which reclaims ([`Inner::reclaim_if_full`]), and run the
//! call once more, with the same ops (the write path only borrows them). What the second attempt
//! fails with is the caller's ([`Inner::failed_again`]: a storage failure then still counts as the
//! store being full). Each caller does so in a loop that awaits its call in one place: a generic
//! wrapper around their futures would cost kilobytes of the wasm module.
//!
//! A reclaim purges every due key (in slices of [`RECLAIM_PURGE_SLICE`]), so that compaction may
//! drop their rows, then flushes, runs the compactions the planner finds due (whole drops of
//! SSTs whose rows all expired cost no room), compacts everything into the bottom level, and
//! deletes the pages nothing reads any more. Each step is best effort: one that fails (it may
//! need room itself) is skipped, and the caller's error stays the `QuotaExceeded` it was.
//! Callers that find the store full while a reclaim runs wait for it and share it instead of
//! running another.
//!
//! The purges of a reclaim are purges like any other: the expire hook applies, and each expired
//! key fires its event once. The events of the reclaims run for a full store go to the reclaim
//! listener if one is set, else they wait in `Inner::unreported` and leave with the next purge
//! report (`purge_expired`, `maintenance_step`, `clear`, `reclaim`); a reclaim asked for with
//! [`Db::reclaim`](super::Db::reclaim) returns its own.
//!
//! Owns the `Inner` methods [`reclaim_if_full`](Inner::reclaim_if_full),
//! [`reclaim`](Inner::reclaim) and [`take_unreported`](Inner::take_unreported); of the state,
//! the `Inner` fields `reclaim_lock`, `reclaims`, `reclaim_listener` and `unreported`. It calls
//! the purge (`purge.rs`), flush (`flush.rs`) and compaction (`compaction/`).

use super::options::PurgeReport;
use super::state::Inner;
use crate::error::{Error, ErrorKind, Result};

/// Due keys a reclaim purges per slice.
const RECLAIM_PURGE_SLICE: usize = 1_000;

/// Slices a reclaim purges at most (a million keys), so that it ends even while keys keep
/// falling due.
const RECLAIM_MAX_SLICES: usize = 1_000;

impl Inner {
    /// After a call failed with `error`, for a caller that tries it at most twice and keeps `full`
    /// between the tries (`None` at first): the first time, if the store was full, reclaim and
    /// return `Ok` to try once more; the second time, the error to report ([`Inner::failed_again`]).
    /// Not generic over the call, so every caller shares this one piece of the module.
    pub(crate) async fn try_again_after(
        &self,
        full: &mut Option<Error>,
        error: Error,
    ) -> Result<()> {
        match full.take() {
            None => {
                *full = Some(self.reclaim_if_full(error).await?);
                Ok(())
            }
            Some(first) => Err(Inner::failed_again(first, error)),
        }
    }

    /// After a call failed with `error`: if the store was full, reclaim (or wait for the reclaim
    /// in progress) and hand `error` back, for the caller to try the call once more and to give
    /// to [`Inner::failed_again`] if that fails too; any other error comes back as `Err`.
    pub(crate) async fn reclaim_if_full(&self, error: Error) -> Result<Error> {
        if error.kind() != ErrorKind::QuotaExceeded {
            return Err(error);
        }
        let seen = self.reclaims.get();
        let _lock = self.reclaim_lock.lock().await;
        if self.reclaims.get() == seen {
            let report = self.reclaim_locked().await;
            self.deliver(report);
        }
        Ok(error)
    }

    /// The error of a call that failed with `full` (a `QuotaExceeded`), was tried again after a
    /// reclaim, and failed with `again`. A storage failure the second time is still the store
    /// being full: some engines refuse every write for a while once storage ran out (Firefox's
    /// IndexedDB: an `InvalidStateError`), and nothing of the call was written either time. So
    /// it is `full`, with `again` in its message and `full`'s source (the platform's quota
    /// error). Any other error (fenced, closed, full again) is `again`.
    fn failed_again(full: Error, again: Error) -> Error {
        if again.kind() != ErrorKind::Storage {
            return again;
        }
        full.context(alloc::format!(
            "tried again after reclaiming expired data, and that failed too ({})",
            again.message()
        ))
    }

    /// Reclaim now (see the module docs) and return what its purges did.
    pub(crate) async fn reclaim(&self) -> PurgeReport {
        let _lock = self.reclaim_lock.lock().await;
        self.reclaim_locked().await
    }

    /// Take the events of earlier reclaims that no listener received.
    pub(crate) fn take_unreported(&self) -> PurgeReport {
        core::mem::take(&mut *self.unreported.borrow_mut())
    }

    /// [`Inner::reclaim`], for a caller that holds the reclaim lock.
    async fn reclaim_locked(&self) -> PurgeReport {
        let mut report = PurgeReport::default();
        for _ in 0..RECLAIM_MAX_SLICES {
            match self.purge_expired(RECLAIM_PURGE_SLICE).await {
                Ok(slice) => {
                    let more = slice.more_due;
                    report.absorb(slice);
                    if !more {
                        break;
                    }
                }
                // Compaction may still drop what earlier purges handled.
                Err(_) => break,
            }
        }
        // Each may fail for want of room (a compaction writes its output before its inputs go);
        // the others are still worth trying. The planned compactions come first: their whole
        // drops of expired SSTs need no room at all, and free some for the full merge after.
        let _ = self.flush().await;
        let _ = self.compact(false).await;
        let _ = self.reclaim_obsolete().await;
        let _ = self.compact(true).await;
        let _ = self.reclaim_obsolete().await;
        self.reclaims.set(self.reclaims.get() + 1);
        report
    }

    /// Hand a reclaim's report to the listener, or keep it for the next purge report.
    fn deliver(&self, report: PurgeReport) {
        let happened = report.removed + report.rewritten + report.stale > 0
            || !report.expired.is_empty()
            || !report.hook_errors.is_empty();
        if !happened {
            return;
        }
        let listener = self.reclaim_listener.borrow().clone();
        match listener {
            Some(listener) => listener(&report),
            None => self.unreported.borrow_mut().absorb(report),
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::rc::Rc;

    use futures::executor::block_on;
    use futures::future::join;

    use crate::clock::FakeClock;
    use crate::engine::keys::internal_key;
    use crate::engine::namespace::TtlPolicy;
    use crate::engine::options::{DbOptions, PutCondition, Ttl};
    use crate::engine::state::Inner;
    use crate::engine::write::ops::WriteOp;
    use crate::error::{Error, ErrorKind};
    use crate::store::MemoryStore;

    #[test]
    fn callers_that_find_the_store_full_together_share_one_reclaim() {
        block_on(async {
            let store = MemoryStore::new().with_latency(1);
            let clock = FakeClock::new(1_767_225_600_000);
            let inner = Inner::open(Rc::new(store), Rc::new(clock), DbOptions::default())
                .await
                .unwrap();
            // A row in an SST, so that a reclaim's compaction waits for the store's reads.
            let put = WriteOp::Put {
                key: internal_key(0, b"k"),
                value: b"v".to_vec(),
                ttl: Ttl::NoExpiry,
                condition: PutCondition::Always,
            };
            inner
                .write_ops(&[put], TtlPolicy::default(), None)
                .await
                .unwrap();
            inner.flush().await.unwrap();
            let full = || Error::new(ErrorKind::QuotaExceeded, "full");

            let (a, b) = join(inner.reclaim_if_full(full()), inner.reclaim_if_full(full())).await;
            a.unwrap();
            b.unwrap();
            assert_eq!(
                inner.reclaims.get(),
                1,
                "the second caller waited for the first's"
            );

            // A caller whose error comes after that reclaim finished runs one of its own.
            inner.reclaim_if_full(full()).await.unwrap();
            assert_eq!(inner.reclaims.get(), 2);

            // Any other error comes back as it was, with no reclaim.
            let e = inner
                .reclaim_if_full(Error::storage("disk"))
                .await
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Storage);
            assert_eq!(inner.reclaims.get(), 2);
        });
    }
}
