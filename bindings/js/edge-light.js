// The package's entry for Vercel Edge Functions and the Next.js edge runtime (export condition
// "edge-light"): the `?module` import gives the engine as a compiled WebAssembly.Module (code
// generation from bytes is off there), which the first open() instantiates.
import engineModule from "./pkg/ttlkv_web_bg.wasm?module";
import { useEngineSource } from "./core.js";

useEngineSource(() => ({ module: engineModule }));

export { open, destroy, init, TtlKvError, CODES } from "./core.js";
