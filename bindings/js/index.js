// The package's entry for browsers, web workers, bundlers (Vite, webpack) and any runtime the
// other entries do not name: the engine is fetched from `pkg/ttlkv_web_bg.wasm` beside this file
// (a bundler sees `new URL(…, import.meta.url)` and ships the file). A host that gives modules no
// URL can hand the engine over with `init({ module | bytes | url })`.
import { useEngineSource } from "./core.js";

useEngineSource(() => {
  if (typeof import.meta.url !== "string") {
    throw new Error("this runtime gives modules no URL (import.meta.url) to find the engine's .wasm by: call init({ module | bytes | url })");
  }
  return { url: new URL("./pkg/ttlkv_web_bg.wasm", import.meta.url) };
});

export { open, destroy, init, TtlKvError, CODES } from "./core.js";
