// The package's entry for Deno (export condition "deno"): the engine is imported as a compiled
// WebAssembly.Module (a source-phase import), so no permission flag is needed to read it. Shipped
// as written: the bundler does not parse `import source`.
import source engineModule from "./pkg/ttlkv_web_bg.wasm";
import { useEngineSource, encodeStringsFrom } from "./core.js";

useEngineSource(() => ({ module: engineModule }));
// Deno's TextEncoder.encodeInto and copying a string unit by unit break even at about 50 units,
// and encodeInto is twice as fast at 100 (see codec.js).
encodeStringsFrom(48);

export { open, destroy, init, TtlKvError, CODES } from "./core.js";
