// The package's entry for Node (export condition "node"): the engine is read from
// `pkg/ttlkv_web_bg.wasm` beside this file by the first open().
import { readFile } from "node:fs/promises";
import { useEngineSource, encodeStringsFrom } from "./core.js";

// `sync`: instantiated synchronously once compiled (see load.js: the async path would load Node's
// fetch implementation first).
useEngineSource(async () => ({ bytes: await readFile(new URL("./pkg/ttlkv_web_bg.wasm", import.meta.url)), sync: true }));
// Node's TextEncoder.encodeInto beats copying a string unit by unit well before 50 units (at 50:
// 146–240 against 254–262 ns; see codec.js).
encodeStringsFrom(48);

export { open, destroy, init, TtlKvError, CODES } from "./core.js";
