// `node bench/heartbeat.mjs [manual|automatic]`: the longest wait of a task during a 100k
// ingest, flush and compaction on IndexedDB, per phase, in each browser engine, measured the same
// way everywhere: the longest gap between turns of a MessageChannel heartbeat (the only measure
// Firefox and WebKit allow: they have no Long Tasks API). It explains the longest-task rows of
// docs/performance.md. With `manual` (the default) maintenance runs only when called; with
// `automatic` it runs as the package runs it by default, between the batches. A last phase waits
// 3 s after the compaction: with `automatic`, the maintenance left runs then; with `manual`,
// nothing of ttlkv does, so its gaps are the browser's own (a collection of the ingest's
// garbage). Needs the package built (`bash scripts/build-package.sh`) and the e2e packages
// installed.
import { ENGINES } from "../tests/e2e/browsers.mjs";
import { inBenchPage } from "./in-page.mjs";

const maintenance = process.argv[2] ?? "manual";
if (maintenance !== "manual" && maintenance !== "automatic") throw new Error("usage: node bench/heartbeat.mjs [manual|automatic]");
for (const engine of ENGINES) console.log(engine, JSON.stringify(await inBenchPage(engine, probe, maintenance)));

/** In the page: the longest heartbeat gap (ms) in each phase of the ingest. */
async function probe(maintenance) {
  const { open, destroy } = await import("ttlkv");
  await destroy("heartbeat").catch(() => {});
  const db = await open("heartbeat", maintenance === "manual" ? { maintenance: "manual" } : {});
  const beat = window.bench.heartbeat();
  const phase = async (fn) => {
    beat.reset();
    await fn();
    return Math.round(beat.longest());
  };
  const batches = await phase(async () => {
    for (let i = 0; i < 100_000; i += 1_000) {
      await db.batch(Array.from({ length: 1_000 }, (_, j) => ({ type: "put", key: `k${String(i + j).padStart(8, "0")}`, value: "x".repeat(100) })));
    }
  });
  const flush = await phase(() => db.flush());
  const compact = await phase(() => db.compact());
  const after = await phase(() => new Promise((r) => setTimeout(r, 3000)));
  beat.stop();
  await db.close();
  await destroy("heartbeat");
  return { batches, flush, compact, after };
}
