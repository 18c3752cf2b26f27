//! [`join`]: run two futures at once, so that their store operations are in flight together (on
//! IndexedDB, two transactions whose round trips overlap instead of following each other). The
//! engine's open and the store conformance suite both use it.

use core::future::{poll_fn, Future};
use core::pin::pin;
use core::task::Poll;

/// Polls both futures until both complete; the outputs in order.
pub(crate) async fn join<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut out_a, mut out_b) = (None, None);
    poll_fn(move |cx| {
        if out_a.is_none() {
            if let Poll::Ready(v) = a.as_mut().poll(cx) {
                out_a = Some(v);
            }
        }
        if out_b.is_none() {
            if let Poll::Ready(v) = b.as_mut().poll(cx) {
                out_b = Some(v);
            }
        }
        match (out_a.take(), out_b.take()) {
            (Some(x), Some(y)) => Poll::Ready((x, y)),
            (x, y) => {
                out_a = x;
                out_b = y;
                Poll::Pending
            }
        }
    })
    .await
}
