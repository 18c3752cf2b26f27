// ttlkv alone on memory storage, for comparing one build with the next (no peers; the ratios of
// `npm run bench` are what the README quotes). `node bench/ttlkv-alone.mjs` prints the median and
// range of 7 runs of a memory ingest (100,000 puts of 100-byte strings in batches of 1,000, the
// ttlkv side of the bench's ingest row) and of 3 runs of the session mix's gets and puts (100,000
// keys loaded, flushed and compacted, then 400,000 operations with Zipf and with uniform keys: 19
// gets to 1 put, gets alone, puts alone). `node bench/ttlkv-alone.mjs memory` prints instead the
// engine's WebAssembly memory after each phase of bench/memory.mjs's load (100,000 sessions of
// 1 KiB in batches of 1,000, a flush, a full compaction, which it also times), in a process that
// did nothing before (the memory never shrinks).
import { SESSION_TTL, key, value100, sessionValue, zipfIndexes, uniformIndexes, median } from "./workloads.mjs";
import { engineMemoryBytes } from "./engine-memory.mjs";

const { open } = await import("../bindings/js/dist/server/node.js");

const thousands = (x) => Math.round(x).toLocaleString("en");
const summary = (xs) => `${thousands(median(xs))} ops/s [${thousands(Math.min(...xs))}–${thousands(Math.max(...xs))}]`;
let fresh = 0;
const db = (options) => open(`alone-${process.pid}-${fresh++}`, { storage: "memory", durability: "relaxed", ...options });

if (process.argv[2] === "memory") {
  await memoryPhases();
} else {
  await ingestAndMix();
}

async function ingestAndMix() {
  const ingest = [];
  for (let run = 0; run < 7; run++) {
    const d = await db({ defaultTtlMs: SESSION_TTL });
    const started = performance.now();
    for (let i = 0; i < 100_000; i += 1000) {
      const ops = [];
      for (let j = i; j < i + 1000; j++) ops.push({ type: "put", key: key(j), value: value100(j) });
      await d.batch(ops);
    }
    ingest.push(100_000 / ((performance.now() - started) / 1000));
    await d.close();
  }
  console.log(`ingest (memory), batches of 1,000: ${summary(ingest)}`);

  const keys = 100_000;
  const ops = 400_000;
  for (const [choice, chosen] of [["Zipf", zipfIndexes(keys, ops, 42)], ["uniform", uniformIndexes(keys, ops, 43)]]) {
    const rates = { "mix (1 put in 20)": [], gets: [], puts: [] };
    for (let run = 0; run < 3; run++) {
      const d = await db({ defaultTtlMs: SESSION_TTL });
      for (let i = 0; i < keys; i++) await d.put(key(i), value100(i));
      await d.flush();
      await d.compact();
      for (const mode of Object.keys(rates)) {
        const started = performance.now();
        for (let j = 0; j < ops; j++) {
          const i = chosen[j];
          const put = mode === "puts" || (mode !== "gets" && j % 20 === 0);
          await (put ? d.put(key(i), value100(i + j)) : d.get(key(i)));
        }
        rates[mode].push(ops / ((performance.now() - started) / 1000));
      }
      await d.close();
    }
    for (const [mode, xs] of Object.entries(rates)) console.log(`session ${mode}, ${choice} keys: ${summary(xs)}`);
  }
}

async function memoryPhases() {
  const d = await db({ maintenance: "manual" });
  const mib = () => `${(engineMemoryBytes() / 2 ** 20).toFixed(1)} MiB`;
  for (let i = 0; i < 100_000; i += 1000) {
    const ops = [];
    for (let j = i; j < i + 1000; j++) ops.push({ type: "put", key: key(j), value: sessionValue(j), ttlMs: SESSION_TTL });
    await d.batch(ops);
  }
  const loaded = mib();
  await d.flush();
  const flushed = mib();
  const started = performance.now();
  await d.compact();
  const ms = performance.now() - started;
  console.log(`wasm memory, 100k sessions of 1 KiB: ${loaded} loaded, ${flushed} flushed, ${mib()} compacted (the full compaction took ${ms.toFixed(0)} ms)`);
}
