//! A tiny single-threaded wake-up primitive: tasks wait for "something changed" and a task that
//! changed something wakes them all. Used by group commit and the maintenance lock.
//!
//! No `RefCell` borrow is held across an `.await` anywhere in the engine; waiting on a [`Notify`]
//! is how a task yields until another finishes its part.

use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

/// Wakes every waiting task on [`Notify::notify_all`].
#[derive(Default)]
pub(crate) struct Notify {
    generation: Cell<u64>,
    wakers: RefCell<Vec<Waker>>,
}

impl Notify {
    /// A future that completes at the next `notify_all` after this call.
    pub(crate) fn notified(&self) -> Notified<'_> {
        Notified {
            notify: self,
            generation: self.generation.get(),
        }
    }

    /// Wake every task waiting now.
    pub(crate) fn notify_all(&self) {
        self.generation.set(self.generation.get().wrapping_add(1));
        let wakers = core::mem::take(&mut *self.wakers.borrow_mut());
        for w in wakers {
            w.wake();
        }
    }
}

/// See [`Notify::notified`].
pub(crate) struct Notified<'a> {
    notify: &'a Notify,
    generation: u64,
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

/// An async mutual-exclusion flag: at most one holder at a time, others wait. Serializes the
/// operations that replace the manifest (flush, compaction, namespace changes).
#[derive(Default)]
pub(crate) struct AsyncLock {
    held: Cell<bool>,
    released: Notify,
}

impl AsyncLock {
    /// Wait until the lock is free and take it; it is released when the guard is dropped.
    pub(crate) async fn lock(&self) -> AsyncLockGuard<'_> {
        loop {
            if !self.held.get() {
                self.held.set(true);
                return AsyncLockGuard { lock: self };
            }
            self.released.notified().await;
        }
    }

    /// Whether some task holds the lock now.
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
        self.lock.held.set(false);
        self.lock.released.notify_all();
    }
}
