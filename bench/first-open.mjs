// What the first open() costs in Node, in a fresh process: `node bench/first-open.mjs` (run it a
// few times; each run is one cold start). Prints the time to compile the engine's module alone,
// then the package's first open of an empty memory database (read the file, compile,
// instantiate, open), from the built package in bindings/js/dist/server (the Node entry and its engine).
import { readFileSync } from "node:fs";

const wasm = new URL("../bindings/js/dist/server/pkg/ttlkv_web_bg.wasm", import.meta.url);
const bytes = readFileSync(wasm);
const t0 = performance.now();
await WebAssembly.compile(bytes);
const t1 = performance.now();
const { open } = await import("../bindings/js/dist/server/node.js");
const t2 = performance.now();
const db = await open("first-open", { storage: "memory" });
const t3 = performance.now();
await db.close();
console.log(`compile ${(t1 - t0).toFixed(1)} ms; first open (read, compile, instantiate, open) ${(t3 - t2).toFixed(1)} ms; module ${bytes.length} B`);
