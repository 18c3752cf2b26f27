//! Giving the browser's event loop a turn in the middle of long engine work (the IndexedDB
//! store's [`PageStore::yield_now`](ttlkv::store::PageStore::yield_now)): a message to itself over
//! a `MessageChannel`, else a `setTimeout` of 0. The work's next slice then waits behind every
//! task already queued, the app's own included, so none of them waits longer than one slice.
//!
//! Not `scheduler.yield()` (Chromium, Firefox): its continuation runs before other queued tasks,
//! so a flush's slices ran back to back ahead of the page's own tasks. A `MessageChannel`
//! heartbeat in Firefox waited 46–48 ms through the flush of a 100k ingest that way, 4 ms with
//! the message (`node bench/heartbeat.mjs`); input and rendering get their turns either way.
//! Not the timer first: a hidden page's timers are throttled (WebKit: a `setTimeout(0)` took
//! 43 ms on average in a background tab, and an ingest of 100,000 values, which yields between
//! slices, ran 50 times slower than with a message), while a message is the next task like any
//! other. Written in JS: the same choice made in Rust through `Reflect` costs the module more
//! than half a kilobyte.

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(inline_js = r#"
export function eventLoopTurn() {
  if (typeof MessageChannel === "function") {
    return new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve();
      channel.port2.postMessage(0);
    });
  }
  return new Promise((resolve) => (typeof setTimeout === "function" ? setTimeout(resolve, 0) : resolve()));
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = eventLoopTurn)]
    fn event_loop_turn_promise() -> Promise;
}

/// Resolves after the host ran whatever else was waiting for the thread.
pub async fn event_loop_turn() {
    // Neither can reject; were one to, the work simply goes on.
    let _ = JsFuture::from(event_loop_turn_promise()).await;
}
