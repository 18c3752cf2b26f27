// The package's entry for Deno (export condition "deno"): the engine is imported as a compiled
// WebAssembly.Module (a source-phase import), so no permission flag is needed to read it. Shipped
// as written: the bundler does not parse `import source`.
import source engineModule from "./pkg/ttlkv_web_bg.wasm";
import { useEngineSource, encodeStringsFrom } from "./core.js";

useEngineSource(() => ({ module: engineModule }));
// Deno's TextEncoder.encodeInto beats copying a string unit by unit from about 50 units on (see
// codec.js).
encodeStringsFrom(48);

export { open, destroy, init, TtlKvError, CODES } from "./core.js";
