// One peer's memory per live key, in a process of its own: `node --expose-gc memory.mjs <peer> <n>`
// prints { bytesPerKey } — the growth of the resident set (JS heap, buffers and wasm memory)
// after storing n sessions of ~1 KiB, divided by n — and, to tell where it goes, the growth of
// V8's heap per key: { heapUsedPerKey } (what live JS objects take) and { heapTotalPerKey } (the
// heap V8 holds, used or not: after a load that made garbage quickly it keeps its young
// generation grown). For ttlkv also { wasmBytesAtOpen, wasmBytesAtEnd }: the byte length of the
// engine's WebAssembly memory just after open and at the end (linear memory only grows, so the
// size at the end is its high-water mark), and { storedBytesPerKey }: the bytes of its SSTs (the
// rows, the expiry index, the pages' offsets, prefixes and filters) per key, what any peak
// beyond them comes on top of.
import { LRUCache } from "lru-cache";
import { TTLCache } from "@isaacs/ttlcache";
import { key, sessionValue } from "./workloads.mjs";
import { engineMemoryBytes as wasmBytes } from "./engine-memory.mjs";

// Imported only now, after engine-memory.mjs set up its catch, so the package's load goes through it.
const { open } = await import("../bindings/js/dist/server/node.js");

const [peer, nText] = process.argv.slice(2);
const n = Number(nText);
const settle = () => {
  for (let i = 0; i < 3; i++) global.gc();
  return process.memoryUsage();
};
let db;
let wasmBytesAtOpen;
if (peer === "ttlkv") {
  db = await open("memory", { storage: "memory", durability: "relaxed", maintenance: "manual" });
  wasmBytesAtOpen = wasmBytes();
}
const before = settle();
let store;
if (peer === "Map") {
  store = new Map();
  for (let i = 0; i < n; i++) store.set(key(i), sessionValue(i));
} else if (peer === "lru-cache") {
  store = new LRUCache({ max: n * 2, ttl: 1_800_000 });
  for (let i = 0; i < n; i++) store.set(key(i), sessionValue(i));
} else if (peer === "@isaacs/ttlcache") {
  store = new TTLCache({ max: n * 2, ttl: 1_800_000 });
  for (let i = 0; i < n; i++) store.set(key(i), sessionValue(i));
} else {
  for (let i = 0; i < n; i += 1000) {
    const ops = [];
    for (let j = i; j < Math.min(n, i + 1000); j++) ops.push({ type: "put", key: key(j), value: sessionValue(j), ttlMs: 1_800_000 });
    await db.batch(ops);
  }
  await db.flush();
  await db.compact();
}
const after = settle();
const perKey = (field) => (after[field] - before[field]) / n;
let wasm = {};
if (db) {
  const ssts = (await db.stats()).levels.flatMap((level) => level.ssts);
  const stored = ssts.reduce((sum, sst) => sum + sst.bytes, 0);
  wasm = { wasmBytesAtOpen, wasmBytesAtEnd: wasmBytes(), storedBytesPerKey: stored / n };
}
console.log(JSON.stringify({ bytesPerKey: perKey("rss"), heapUsedPerKey: perKey("heapUsed"), heapTotalPerKey: perKey("heapTotal"), ...wasm, keep: store ? store.size : 0 }));
