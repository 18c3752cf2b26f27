//! [`FaultyStore`]: a [`PageStore`] decorator that injects failures, quota errors and crashes,
//! following a [`FaultPlan`].
//!
//! It owns only the plan and its counters; every operation it lets through goes unchanged to the
//! inner store. Crash tests run a workload once per commit point with `crash_before_commit` or
//! `crash_after_commit` set, then reopen on the inner store, which holds what a real crash at that
//! point would leave on disk.

use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::RefCell;
use core::fmt;
use core::future::{ready, Future};
use core::pin::Pin;
use core::task::{Context, Poll};

use super::{Commit, ManifestRecord, PageId, PageKind, PageStore, StoreFuture, YieldFuture};
use crate::error::{Error, ErrorKind, Result};

/// Which operations a [`FaultyStore`] fails. Every count is 1-based and counted from the moment
/// the plan was set ([`FaultyStore::new`] or [`FaultyStore::set_plan`]); `None` (or `Some(0)`)
/// disables a fault.
///
/// "Operation" means any call of a [`PageStore`] method; "commit" means a call of
/// [`PageStore::commit`]. When several faults name the same call, the first of `fail_op`,
/// `crash_before_commit`, `fail_commit`, `quota_on_commit`, `crash_after_commit`,
/// `fail_after_commit` wins.
#[derive(Clone, Debug, Default)]
pub struct FaultPlan {
    /// The n-th operation fails with [`ErrorKind::Storage`] without reaching the inner store (a
    /// commit is not applied); later operations work.
    pub fail_op: Option<u64>,
    /// The n-th commit fails with [`ErrorKind::Storage`] without being applied; later operations
    /// work.
    pub fail_commit: Option<u64>,
    /// The n-th commit is not applied and fails with [`ErrorKind::Storage`], and the store is dead
    /// from then on: every call fails with [`ErrorKind::Storage`], and so do operations still in
    /// flight (those not yet complete on the inner store are dropped and never land).
    pub crash_before_commit: Option<u64>,
    /// The n-th commit goes to the inner store (and is applied if its precondition holds), but the
    /// caller gets [`ErrorKind::Storage`], and the store is dead from then on, as above.
    pub crash_after_commit: Option<u64>,
    /// The n-th commit fails with [`ErrorKind::QuotaExceeded`] without being applied; later
    /// operations work.
    pub quota_on_commit: Option<u64>,
    /// The n-th commit goes to the inner store (and is applied if its precondition holds), but the
    /// caller gets [`ErrorKind::Storage`]; later operations work. A store that could not confirm
    /// a commit that landed, as the `PageStore` contract allows for any error but `Fenced` and
    /// `QuotaExceeded`.
    pub fail_after_commit: Option<u64>,
}

/// A [`PageStore`] that passes every operation to an inner store, except those its [`FaultPlan`]
/// fails.
///
/// Clones share the plan, the counters and the crash: they are one store. The inner store is the
/// "disk": after a crash, a test reopens on [`inner`](Self::inner) (or a clone of it).
pub struct FaultyStore<S> {
    shared: Rc<Shared<S>>,
}

/// What clones of one [`FaultyStore`] share.
struct Shared<S> {
    inner: S,
    state: RefCell<State>,
}

#[derive(Default)]
struct State {
    plan: FaultPlan,
    ops: u64,
    commits: u64,
    crash: Option<Crash>,
}

/// The commit a store died at, and on which side of it.
#[derive(Clone, Copy)]
struct Crash {
    commit: u64,
    after: bool,
}

impl Crash {
    fn error(self) -> Error {
        let side = if self.after { "after" } else { "before" };
        Error::storage(format!("crashed (injected {side} commit {})", self.commit))
    }
}

/// What happens when an admitted operation completes on the inner store.
enum OnDone {
    /// Its result goes to the caller.
    Return,
    /// The store dies at this commit, after the inner store completed it.
    CrashAfter(u64),
    /// The caller gets an error for this commit, after the inner store completed it.
    FailAfter(u64),
}

impl<S: PageStore> FaultyStore<S> {
    /// Wraps `inner`, failing what `plan` says.
    pub fn new(inner: S, plan: FaultPlan) -> Self {
        FaultyStore {
            shared: Rc::new(Shared {
                inner,
                state: RefCell::new(State {
                    plan,
                    ..State::default()
                }),
            }),
        }
    }
}

impl<S> FaultyStore<S> {
    /// Replaces the plan and restarts the operation and commit counts at 0. A crashed store stays
    /// crashed: reopen on [`inner`](Self::inner) instead.
    pub fn set_plan(&self, plan: FaultPlan) {
        self.with_state(|state| {
            state.plan = plan;
            state.ops = 0;
            state.commits = 0;
        });
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.shared.inner
    }

    /// Commits called since the plan was set, including failed ones and those on a dead store.
    pub fn commits_attempted(&self) -> u64 {
        self.with_state(|state| state.commits)
    }

    /// Operations (calls of any method) since the plan was set, including failed ones and those
    /// on a dead store.
    pub fn ops(&self) -> u64 {
        self.with_state(|state| state.ops)
    }

    /// Whether an injected crash has killed this store.
    pub fn is_crashed(&self) -> bool {
        self.with_state(|state| state.crash.is_some())
    }

    /// Runs `f` on the shared state. Every borrow goes through here (or [`Shared::crash`]) and
    /// ends before it returns, with no call out in between, so `borrow_mut` cannot fail.
    fn with_state<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        self.shared.with_state(f)
    }

    /// Counts one call and decides its fate: an error now, or what to do once the inner store
    /// completes it.
    fn admit(&self, is_commit: bool) -> Result<OnDone> {
        self.with_state(|state| {
            state.ops = state.ops.saturating_add(1);
            if is_commit {
                state.commits = state.commits.saturating_add(1);
            }
            if let Some(crash) = state.crash {
                return Err(crash.error());
            }
            let (op, commit) = (state.ops, state.commits);
            let plan = &state.plan;
            if plan.fail_op == Some(op) {
                return Err(Error::storage(format!("injected failure (operation {op})")));
            }
            if !is_commit {
                return Ok(OnDone::Return);
            }
            if plan.crash_before_commit == Some(commit) {
                let crash = Crash {
                    commit,
                    after: false,
                };
                state.crash = Some(crash);
                return Err(crash.error());
            }
            if plan.fail_commit == Some(commit) {
                return Err(Error::storage(format!(
                    "injected failure (commit {commit})"
                )));
            }
            if plan.quota_on_commit == Some(commit) {
                return Err(Error::new(
                    ErrorKind::QuotaExceeded,
                    format!("injected quota exceeded (commit {commit})"),
                ));
            }
            if plan.crash_after_commit == Some(commit) {
                return Ok(OnDone::CrashAfter(commit));
            }
            if plan.fail_after_commit == Some(commit) {
                return Ok(OnDone::FailAfter(commit));
            }
            Ok(OnDone::Return)
        })
    }

    /// Admits one call and, if it passes, starts it on the inner store under watch.
    fn guard<'a, T: 'a>(
        &'a self,
        is_commit: bool,
        start: impl FnOnce(&'a S) -> StoreFuture<'a, T>,
    ) -> StoreFuture<'a, T> {
        match self.admit(is_commit) {
            Err(error) => Box::pin(ready(Err(error))),
            Ok(on_done) => Box::pin(Watched {
                shared: &self.shared,
                inner: start(&self.shared.inner),
                on_done,
            }),
        }
    }
}

impl<S> Shared<S> {
    fn with_state<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.state.borrow_mut())
    }

    fn crash(&self) -> Option<Crash> {
        self.with_state(|state| state.crash)
    }
}

/// An operation running on the inner store: it fails as soon as the store has crashed (dropping
/// the inner operation with it), and kills the store when it is the `crash_after_commit` one.
struct Watched<'a, S, T> {
    shared: &'a Shared<S>,
    inner: StoreFuture<'a, T>,
    on_done: OnDone,
}

impl<S, T> Future for Watched<'_, S, T> {
    type Output = Result<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T>> {
        let this = self.get_mut();
        if let Some(crash) = this.shared.crash() {
            return Poll::Ready(Err(crash.error()));
        }
        let result = core::task::ready!(this.inner.as_mut().poll(cx));
        match this.on_done {
            OnDone::Return => Poll::Ready(result),
            OnDone::CrashAfter(commit) => {
                let crash = Crash {
                    commit,
                    after: true,
                };
                this.shared.with_state(|state| state.crash = Some(crash));
                Poll::Ready(Err(crash.error()))
            }
            OnDone::FailAfter(commit) => Poll::Ready(result.and(Err(Error::storage(format!(
                "injected failure after commit {commit} landed"
            ))))),
        }
    }
}

impl<S: PageStore> PageStore for FaultyStore<S> {
    fn read_manifest(&self) -> StoreFuture<'_, Option<ManifestRecord>> {
        self.guard(false, |inner| inner.read_manifest())
    }

    fn get_page(&self, id: PageId) -> StoreFuture<'_, Option<Vec<u8>>> {
        self.guard(false, move |inner| inner.get_page(id))
    }

    fn list_pages(&self, kind: PageKind) -> StoreFuture<'_, Vec<PageId>> {
        self.guard(false, move |inner| inner.list_pages(kind))
    }

    fn commit(&self, commit: Commit) -> StoreFuture<'_, ()> {
        self.guard(true, move |inner| inner.commit(commit))
    }

    fn yield_now(&self) -> YieldFuture<'_> {
        self.shared.inner.yield_now()
    }
}

impl<S> Clone for FaultyStore<S> {
    /// Another handle on the same store: plan, counters and crash are shared.
    fn clone(&self) -> Self {
        FaultyStore {
            shared: Rc::clone(&self.shared),
        }
    }
}

impl<S: fmt::Debug> fmt::Debug for FaultyStore<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("FaultyStore");
        out.field("inner", &self.shared.inner);
        match self.shared.state.try_borrow() {
            Ok(state) => out
                .field("plan", &state.plan)
                .field("ops", &state.ops)
                .field("commits", &state.commits)
                .field("crashed", &state.crash.is_some()),
            Err(_) => out.field("state", &"<in use>"),
        }
        .finish()
    }
}
