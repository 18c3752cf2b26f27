// `node bench/idb-ingest.mjs [chromium|firefox|webkit] [runs] [heartbeat-cost]`: the IndexedDB
// ingest of `npm run bench` alone, in one browser engine (WebKit under `xvfb-run -a`), `runs`
// times (3 by default) in one page, as the bench runs it (`window.bench.ingest`: every peer in
// turn, ttlkv last): per run, ttlkv's ops/s, its ratios against Dexie `bulkPut` and `idb-keyval`
// `set`, and the longest task figure. With `heartbeat-cost`, instead: ttlkv's ingest alone (100,000
// puts in durable batches of 1,000, then a flush), `runs` times with the heartbeat the bench uses
// where there is no Long Tasks API running beside it and `runs` times without, in turns: what that
// measure costs what it runs beside. Explains the IndexedDB ingest rows of docs/performance.md.
// Needs the package built (`bash scripts/build-package.sh`) and the e2e packages installed.
import { inBenchPage } from "./in-page.mjs";
import { IDB_INGEST_PEERS } from "./workloads.mjs";

const engine = process.argv[2] ?? "chromium";
const runs = Number(process.argv[3] ?? 3);
const heartbeatCost = process.argv[4] === "heartbeat-cost";

if (heartbeatCost) {
  const out = await inBenchPage(engine, inPageHeartbeatCost, runs);
  const list = (xs) => xs.map((x) => x.toLocaleString("en")).join(", ");
  console.log(`${engine} ttlkv ingest, ops/s: with a heartbeat ${list(out.with)}; without ${list(out.without)}`);
} else {
  const out = await inBenchPage(engine, async ([peers, runs]) => {
    const all = [];
    for (let run = 0; run < runs; run++) all.push(await window.bench.ingest(100_000, peers, run));
    return all;
  }, [IDB_INGEST_PEERS, runs]);
  for (const rows of out) {
    const value = (peer) => rows.find((r) => r.workload === "ingest (IndexedDB)" && r.peer === peer)?.value;
    const longest = rows.find((r) => r.workload.startsWith("longest"))?.value;
    const ttlkv = value("ttlkv");
    console.log(`${engine} ttlkv ${Math.round(ttlkv).toLocaleString("en")} ops/s: ${(ttlkv / value("Dexie bulkPut")).toFixed(2)}× Dexie bulkPut, ${(ttlkv / value("idb-keyval set")).toFixed(1)}× idb-keyval set; longest task ${longest?.toFixed(1)} ms`);
  }
}

/**
 * In the page: ttlkv's side of the bench's ingest (`ttlkvIngest`, on a database as `ttlkvDb`
 * makes it), `runs` times each with and without a heartbeat, in turns.
 */
async function inPageHeartbeatCost(runs) {
  const { destroy } = await import("ttlkv");
  const { key, value100 } = await import("/bench/workloads.mjs");
  const { ttlkvDb, ttlkvIngest, heartbeat } = window.bench;
  const data = Array.from({ length: 100_000 }, (_, i) => [key(i), value100(i)]);
  const result = { with: [], without: [] };
  for (let r = 0; r < 2 * runs; r++) {
    const withBeat = r % 2 === 0;
    const name = `idb-ingest-heartbeat-${r}`;
    const db = await ttlkvDb(name);
    const beat = withBeat ? heartbeat() : undefined;
    const started = performance.now();
    await ttlkvIngest(db, data);
    const ms = performance.now() - started;
    beat?.stop();
    (withBeat ? result.with : result.without).push(Math.round((data.length / ms) * 1000));
    await db.close();
    await destroy(name);
  }
  return result;
}
