//! The engine's async mutual exclusion, [`AsyncLock`]: at most one holder, and a task that asks
//! for it just after a release lets the tasks that release woke go first.
//!
//! Single-threaded, like every future of the engine: a `Cell` says whether the lock is held. A
//! release wakes every task waiting, and the first of them to run takes it. Between the release
//! and their turn the lock is free, and a task that asks then, such as a durable writer that puts
//! again as soon as its put resolves, would take it before them every time, keeping a flush or a
//! compaction from the commit gate for as long as it writes. So a release that woke someone
//! leaves the lock *owed* until it is taken, and a task that finds it owed yields one turn first:
//! on an executor that runs tasks in the order they were woken, and in a `join!` that polls its
//! futures in a fixed order, the woken ones run in that turn and take it.
//!
//! One turn only, and nothing to undo when a waiting future is dropped, so a waiter whose caller
//! keeps it without polling it (a `select!` busy in another branch) or drops it holds no one back
//! for longer. That makes the order a best effort where polls are ordered otherwise: a `join!`
//! that rotates which future it polls first, or a task polled again before the ones it woke, can
//! still let the task that asks again go first. A queue that hands the lock to its first waiter
//! would be strict, but then a waiter kept unpolled would stop every other task for good.
//!
//! No `RefCell` borrow is held across an `.await` anywhere in the engine; waiting on a lock is
//! how a task yields until another finishes its part.

use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

/// Serializes the operations that must not interleave (store commits, manifest changes, purges,
/// reclaims).
#[derive(Default)]
pub(crate) struct AsyncLock {
    held: Cell<bool>,
    /// Released with tasks waiting, and not taken since.
    owed: Cell<bool>,
    released: Notify,
}

impl AsyncLock {
    /// Wait until the lock is free, after one turn for the tasks its last release woke if they
    /// have not taken it yet, and take it; it is released when the guard is dropped.
    pub(crate) async fn lock(&self) -> AsyncLockGuard<'_> {
        if self.owed.get() {
            YieldOnce(false).await;
        }
        while self.held.get() {
            self.released.notified().await;
        }
        self.held.set(true);
        self.owed.set(false);
        AsyncLockGuard { lock: self }
    }

    /// Whether some task holds the lock now. (Not whether one was woken to take it: `owed`
    /// stays set after the woken waiters are dropped, until the next task takes the lock.)
    pub(crate) fn is_held(&self) -> bool {
        self.held.get()
    }
}

/// Holds an [`AsyncLock`] until dropped.
pub(crate) struct AsyncLockGuard<'a> {
    lock: &'a AsyncLock,
}

impl Drop for AsyncLockGuard<'_> {
    fn drop(&mut self) {
        let lock = self.lock;
        lock.held.set(false);
        lock.owed.set(lock.released.notify_all());
    }
}

/// Pending once, its task woken at once: the tasks woken before it run first.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Wakes every waiting task on [`Notify::notify_all`].
#[derive(Default)]
struct Notify {
    /// Counts the notifications, wrapping: a waiter would take a count for its own only if
    /// exactly 2^32 of them passed between two of its polls, and the first of them wakes it.
    generation: Cell<u32>,
    wakers: RefCell<Vec<Waker>>,
}

impl Notify {
    /// A future that completes at the next `notify_all` after this call.
    fn notified(&self) -> Notified<'_> {
        Notified {
            notify: self,
            generation: self.generation.get(),
        }
    }

    /// Wake every task waiting now; whether there was one (or a dropped waiter's waker).
    fn notify_all(&self) -> bool {
        self.generation.set(self.generation.get().wrapping_add(1));
        let wakers = core::mem::take(&mut *self.wakers.borrow_mut());
        let woke = !wakers.is_empty();
        for w in wakers {
            w.wake();
        }
        woke
    }
}

/// See [`Notify::notified`].
struct Notified<'a> {
    notify: &'a Notify,
    generation: u32,
}

impl Future for Notified<'_> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.notify.generation.get() != self.generation {
            return Poll::Ready(());
        }
        let mut wakers = self.notify.wakers.borrow_mut();
        if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use alloc::boxed::Box;
    use core::future::Future;
    use core::pin::Pin;
    use core::task::{Context, Poll};

    use futures::task::noop_waker_ref;

    use super::{AsyncLock, AsyncLockGuard};

    fn poll<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
        Pin::new(f).poll(&mut Context::from_waker(noop_waker_ref()))
    }

    type Acquire<'a> = Pin<Box<dyn Future<Output = AsyncLockGuard<'a>> + 'a>>;

    /// A call of `lock()` polled once, which finds it held (or owed) and waits.
    fn waiting(lock: &AsyncLock) -> Acquire<'_> {
        let mut acquire: Acquire<'_> = Box::pin(lock.lock());
        assert!(poll(&mut acquire).is_pending());
        acquire
    }

    /// The guard `acquire` yields when polled now, or a panic saying why it should have.
    fn served<'a>(acquire: &mut Acquire<'a>, why: &str) -> AsyncLockGuard<'a> {
        match poll(acquire) {
            Poll::Ready(guard) => guard,
            Poll::Pending => panic!("{why}"),
        }
    }

    /// The lock held by a first task, with a second waiting for it.
    fn held_with_a_waiter(lock: &AsyncLock) -> (AsyncLockGuard<'_>, Acquire<'_>) {
        let mut acquire: Acquire<'_> = Box::pin(lock.lock());
        let first = served(&mut acquire, "a free lock is taken at once");
        (first, waiting(lock))
    }

    #[test]
    fn a_task_that_asks_while_another_waits_goes_after_it() {
        let lock = AsyncLock::default();
        let (first, mut waiter) = held_with_a_waiter(&lock);
        drop(first);
        // Free, but the waiter is owed its turn: a later task waits.
        let mut later = waiting(&lock);
        let taken = served(&mut waiter, "the waiter takes the lock it was woken for");
        assert!(poll(&mut later).is_pending());
        drop(taken);
        assert!(poll(&mut later).is_ready());
    }

    #[test]
    fn a_waiter_dropped_unserved_lets_the_next_one_in() {
        let lock = AsyncLock::default();
        let (first, waiter) = held_with_a_waiter(&lock);
        drop(first);
        let mut later = waiting(&lock);
        // The waiter's caller gives up (a timeout, a select) before it takes its turn.
        drop(waiter);
        let _taken = served(&mut later, "the later task waits for a waiter that is gone");
        assert!(lock.held.get());
    }

    #[test]
    fn a_waiter_kept_unpolled_holds_no_one_back() {
        let lock = AsyncLock::default();
        // Woken by the release below, but its caller (a `select!` busy with another branch)
        // does not poll it again for now.
        let (first, mut kept) = held_with_a_waiter(&lock);
        drop(first);
        // One turn for the woken waiter first, then the lock.
        let mut later = waiting(&lock);
        let taken = served(
            &mut later,
            "a waiter kept unpolled holds the free lock back",
        );
        assert!(poll(&mut kept).is_pending());
        drop(taken);
        assert!(poll(&mut kept).is_ready());
    }

    #[test]
    fn a_waiter_dropped_while_the_lock_is_held_changes_nothing() {
        let lock = AsyncLock::default();
        let (first, gone) = held_with_a_waiter(&lock);
        let mut waiter = waiting(&lock);
        drop(gone);
        assert!(poll(&mut waiter).is_pending());
        drop(first);
        drop(served(&mut waiter, "the waiter left takes the lock"));
        // Served and released, the lock is free for anyone again.
        assert!(!lock.held.get());
        assert!(poll(&mut Box::pin(lock.lock())).is_ready());
    }
}
