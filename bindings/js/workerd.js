// The package's entry for Cloudflare Workers (export condition "workerd"): the platform imports a
// `.wasm` as a compiled WebAssembly.Module (it allows no compiling from bytes and no fetch of the
// package's own files), which the first open() instantiates. Timers there end with the request
// that set them: automatic maintenance runs its overdue steps at the next calls instead, which
// wait for them (shared.js, Shared.schedule).
import * as workers from "cloudflare:workers";
import engineModule from "./pkg/ttlkv_web_bg.wasm";
import { useEngineSource, useKeepAlive } from "./core.js";

useEngineSource(() => ({ module: engineModule }));
// A maintenance step a timer starts during a request runs to its end after the response is
// sent, instead of having its storage I/O cut off (`waitUntil` outside a request throws; a Durable
// Object's timers need no help).
useKeepAlive((step) => {
  try {
    workers.waitUntil?.(step);
  } catch {
    // No request to extend.
  }
});

export { open, destroy, init, TtlKvError, CODES } from "./core.js";
