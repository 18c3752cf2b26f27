//! How the engine's futures answer JS. A call is polled once at once: on memory storage (and
//! for a read of a cached page) most calls finish without waiting on anything, and their answer
//! is handed back as it is, with no Promise made and no task queued (JS `await`s either alike);
//! a failure comes back as a rejected Promise. A call that has to wait (IndexedDB, an adapter,
//! a group commit) goes on to `future_to_promise`, whose Promise is the answer; it polls the
//! call again whenever it is woken. The hottest call, `get`, first tries an answer that needs
//! no future at all ([`at_once`]).
//!
//! A call made while the engine is already running (from JS that the engine itself called: a
//! clock function, an adapter method) is never polled in place, as the engine may be part-way
//! through a step; it is queued like any waiting call.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use js_sys::Promise;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::future_to_promise;

/// A boxed engine call: every method's future has this one type, so the executor glue of
/// `future_to_promise` is instantiated once in the module.
pub(crate) type Call = Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>>;

thread_local! {
    /// How many engine polls are on the stack (0 or 1, unless JS called back into the API).
    static POLLING: Cell<u32> = const { Cell::new(0) };
}

/// Counts a poll as running for as long as it lives.
struct PollGuard;

impl PollGuard {
    fn enter() -> PollGuard {
        POLLING.with(|p| p.set(p.get() + 1));
        PollGuard
    }
}

impl Drop for PollGuard {
    fn drop(&mut self) {
        POLLING.with(|p| p.set(p.get() - 1));
    }
}

/// A call that marks every poll of it as engine work (see the module docs).
struct Marked(Call);

impl Future for Marked {
    type Output = Result<JsValue, JsValue>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let _guard = PollGuard::enter();
        self.0.as_mut().poll(cx)
    }
}

/// `f`'s answer, run as a poll is, unless the engine is running (see the module docs: nothing
/// may touch it part-way through a step): then `None`, and the caller makes a [`Call`]. A call
/// from JS that `f` runs (a clock function's) is queued.
#[cfg(feature = "row-cache")]
pub(crate) fn at_once<T>(f: impl FnOnce() -> T) -> Option<T> {
    if POLLING.with(Cell::get) != 0 {
        return None;
    }
    let _guard = PollGuard::enter();
    Some(f())
}

/// The answer of `call` if it finishes without waiting (a failure as a rejected Promise), else
/// the Promise of it, settled by the executor when it does.
pub(crate) fn settle(call: Call) -> JsValue {
    let mut call = Marked(call);
    if POLLING.with(Cell::get) == 0 {
        // Anything the call waits on registers this no-op waker now, and the executor's real
        // one when it polls again (every future in the engine and the stores keeps the latest).
        let mut cx = Context::from_waker(Waker::noop());
        match Pin::new(&mut call).poll(&mut cx) {
            Poll::Ready(Ok(value)) => return value,
            Poll::Ready(Err(error)) => return Promise::reject(&error).into(),
            Poll::Pending => {}
        }
    }
    future_to_promise(call).into()
}
