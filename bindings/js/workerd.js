// The package's entry for Cloudflare Workers (export condition "workerd"): the platform imports a
// `.wasm` as a compiled WebAssembly.Module (it allows no compiling from bytes and no fetch of the
// package's own files), which the first open() instantiates.
import engineModule from "./pkg/ttlkv_web_bg.wasm";
import { useEngineSource } from "./core.js";

useEngineSource(() => ({ module: engineModule }));

export { open, destroy, init, TtlKvError, CODES } from "./core.js";
