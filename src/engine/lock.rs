//! The engine's async mutual exclusion, [`AsyncLock`]: at most one holder, and no task that asks
//! for it goes before the tasks already waiting.
//!
//! Single-threaded, like every future of the engine: a `Cell` says whether the lock is held, and
//! another how many tasks wait for it. A release wakes the tasks waiting, and the first of them to
//! run takes the lock. A task that asks while others wait waits too, even when the lock is free
//! at that instant (between a release and the turn of those it woke): so a task that takes the
//! lock again and again, such as a durable writer that puts as soon as its put resolves, cannot
//! keep a flush or a compaction from the commit gate. A task that stops waiting, served or
//! dropped, wakes the others to look again: the lock may be free, and they may have been waiting
//! only for it. A future waiting for the lock must be polled when woken, or dropped: one kept
//! unpolled would hold every later task back.
//!
//! No `RefCell` borrow is held across an `.await` anywhere in the engine; waiting on a lock is
//! how a task yields until another finishes its part.

use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

/// Serializes the operations that must not interleave (store commits, manifest changes, purges,
/// reclaims); a task that asks while others wait waits behind them.
#[derive(Default)]
pub(crate) struct AsyncLock {
    held: Cell<bool>,
    /// How many tasks are waiting.
    waiting: Cell<u32>,
    released: Notify,
}

impl AsyncLock {
    /// Wait until the lock is free and the tasks that were waiting before this call have had
    /// their turn, and take it; it is released when the guard is dropped.
    pub(crate) async fn lock(&self) -> AsyncLockGuard<'_> {
        if self.held.get() || self.waiting.get() != 0 {
            let _queued = Queued::new(self);
            loop {
                self.released.notified().await;
                if !self.held.get() {
                    break;
                }
            }
        }
        self.held.set(true);
        AsyncLockGuard { lock: self }
    }

    /// Whether some task holds the lock now.
    pub(crate) fn is_held(&self) -> bool {
        self.held.get()
    }
}

/// Counts a task among the waiting while it waits. Leaving the count wakes the others to look
/// again (a waiter dropped unserved may leave the lock free, with the others waiting only for
/// it; one served leaves it held, and they wait on).
struct Queued<'a>(&'a AsyncLock);

impl<'a> Queued<'a> {
    fn new(lock: &'a AsyncLock) -> Self {
        lock.waiting.set(lock.waiting.get() + 1);
        Queued(lock)
    }
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        let lock = self.0;
        lock.waiting.set(lock.waiting.get() - 1);
        lock.released.notify_all();
    }
}

/// Holds an [`AsyncLock`] until dropped.
pub(crate) struct AsyncLockGuard<'a> {
    lock: &'a AsyncLock,
}

impl Drop for AsyncLockGuard<'_> {
    fn drop(&mut self) {
        self.lock.held.set(false);
        self.lock.released.notify_all();
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

    /// Wake every task waiting now.
    fn notify_all(&self) {
        self.generation.set(self.generation.get().wrapping_add(1));
        let wakers = core::mem::take(&mut *self.wakers.borrow_mut());
        for w in wakers {
            w.wake();
        }
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
    use core::task::{Context, Poll};

    use futures::task::noop_waker_ref;

    use super::AsyncLock;

    fn poll<F: core::future::Future + Unpin>(f: &mut F) -> Poll<F::Output> {
        core::pin::Pin::new(f).poll(&mut Context::from_waker(noop_waker_ref()))
    }

    #[test]
    fn a_task_that_asks_while_another_waits_goes_after_it() {
        let lock = AsyncLock::default();
        let first = poll(&mut Box::pin(lock.lock()));
        let Poll::Ready(first) = first else {
            panic!("a free lock is taken at once")
        };
        let mut waiter = Box::pin(lock.lock());
        assert!(poll(&mut waiter).is_pending());
        drop(first);
        // Free, but the waiter is owed its turn: a later task waits.
        let mut later = Box::pin(lock.lock());
        assert!(poll(&mut later).is_pending());
        let Poll::Ready(served) = poll(&mut waiter) else {
            panic!("the waiter takes the lock it was woken for")
        };
        assert!(poll(&mut later).is_pending());
        drop(served);
        assert!(poll(&mut later).is_ready());
    }

    #[test]
    fn a_waiter_dropped_unserved_lets_the_next_one_in() {
        let lock = AsyncLock::default();
        let Poll::Ready(first) = poll(&mut Box::pin(lock.lock())) else {
            panic!("a free lock is taken at once")
        };
        let mut waiter = Box::pin(lock.lock());
        assert!(poll(&mut waiter).is_pending());
        drop(first);
        let mut later = Box::pin(lock.lock());
        assert!(poll(&mut later).is_pending());
        // The waiter's caller gives up (a timeout, a select) before it takes its turn.
        drop(waiter);
        let Poll::Ready(_served) = poll(&mut later) else {
            panic!("the later task waits for a waiter that is gone")
        };
        assert!(lock.is_held());
    }

    #[test]
    fn a_waiter_dropped_while_the_lock_is_held_changes_nothing() {
        let lock = AsyncLock::default();
        let Poll::Ready(first) = poll(&mut Box::pin(lock.lock())) else {
            panic!("a free lock is taken at once")
        };
        let mut gone = Box::pin(lock.lock());
        assert!(poll(&mut gone).is_pending());
        let mut waiter = Box::pin(lock.lock());
        assert!(poll(&mut waiter).is_pending());
        drop(gone);
        assert!(poll(&mut waiter).is_pending());
        drop(first);
        assert!(poll(&mut waiter).is_ready());
        // Served and released, the lock is free for anyone again.
        drop(waiter);
        assert!(!lock.is_held());
        assert!(poll(&mut Box::pin(lock.lock())).is_ready());
    }
}
