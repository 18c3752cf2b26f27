// `node bench/heartbeat.mjs [manual|automatic] [alone|after-peers]`: the longest wait of a task
// during a 100k ingest, flush and compaction on IndexedDB, per phase, in each browser engine,
// measured the same way everywhere: the longest gap between turns of a MessageChannel heartbeat
// (the only measure Firefox and WebKit allow: they have no Long Tasks API). It explains the
// longest-task rows of docs/performance.md. With `manual` (the default) maintenance runs only when
// called; with `automatic` it runs as the package runs it by default, between the batches. The
// batches' phase is the longest gap of any batch of 1,000; `first` is the first batch's alone (the
// engine's first writes in the page) and `at` the batch of the longest. A last phase waits 3 s
// after the compaction: with `automatic`, the maintenance left runs then; with `manual`, nothing
// of ttlkv does, so its gaps are the browser's own (a collection of the ingest's garbage). With
// `alone` (the default) each engine's page does only this, once; with `after-peers` it does it
// three times, each after the other peers' IndexedDB ingests in the same page, as `npm run bench`
// runs them (their garbage is the page's when ttlkv's turn comes). In Chromium `longTasks` gives,
// per phase, the longest task its Long Tasks API reported (0: none over 50 ms). Needs the package
// built (`bash scripts/build-package.sh`) and the e2e packages installed.
import { ENGINES } from "../tests/e2e/browsers.mjs";
import { inBenchPage } from "./in-page.mjs";
import { IDB_INGEST_PEERS } from "./workloads.mjs";

const maintenance = process.argv[2] ?? "manual";
const company = process.argv[3] ?? "alone";
if (!["manual", "automatic"].includes(maintenance) || !["alone", "after-peers"].includes(company)) {
  throw new Error("usage: node bench/heartbeat.mjs [manual|automatic] [alone|after-peers]");
}
// The other peers of the bench's IndexedDB ingest, which `after-peers` runs before ttlkv's.
const peers = IDB_INGEST_PEERS.filter((peer) => peer !== "ttlkv");
for (const engine of ENGINES) console.log(engine, JSON.stringify(await inBenchPage(engine, probe, [maintenance, company, peers])));

/** In the page: the longest heartbeat gap (ms) in each phase of the ingest, for each run. */
async function probe([maintenance, company, peers]) {
  const { open, destroy } = await import("ttlkv");
  const runs = [];
  for (let run = 0; run < (company === "alone" ? 1 : 3); run++) {
    if (company === "after-peers") await window.bench.ingest(100_000, peers, run);
    const name = `heartbeat-${run}`;
    await destroy(name).catch(() => {});
    const db = await open(name, maintenance === "manual" ? { maintenance: "manual" } : {});
    const beat = window.bench.heartbeat();
    // Where there is a Long Tasks API (Chromium), the tasks over 50 ms it reports in each phase
    // too: a heartbeat's gap is at least as long as the longest task in it, and can be longer (the
    // tasks run ahead of its message, however short each).
    const tasks = [];
    const observer = window.bench.hasLongTasks ? new PerformanceObserver((list) => tasks.push(...list.getEntries())) : undefined;
    observer?.observe({ type: "longtask" });
    const phase = async (fn) => {
      beat.reset();
      await fn();
      return Math.round(beat.longest());
    };
    // When each phase (the batches, flush, compaction, after) began, and when the last ended.
    const marks = [performance.now()];
    const batches = [];
    for (let i = 0; i < 100_000; i += 1_000) {
      batches.push(await phase(() => db.batch(Array.from({ length: 1_000 }, (_, j) => ({ type: "put", key: `k${String(i + j).padStart(8, "0")}`, value: "x".repeat(100) })))));
    }
    const longest = Math.max(...batches);
    marks.push(performance.now());
    const flush = await phase(() => db.flush());
    marks.push(performance.now());
    const compact = await phase(() => db.compact());
    marks.push(performance.now());
    const after = await phase(() => new Promise((r) => setTimeout(r, 3000)));
    marks.push(performance.now());
    beat.stop();
    await db.close();
    await destroy(name);
    const result = { batches: longest, first: batches[0], at: batches.indexOf(longest), flush, compact, after };
    if (observer) {
      observer.disconnect();
      // The longest task that began in each phase (0: none over 50 ms).
      const over = (a, b) => Math.round(Math.max(0, ...tasks.filter((t) => t.startTime >= a && t.startTime < b).map((t) => t.duration)));
      result.longTasks = marks.slice(1).map((end, i) => over(marks[i], end));
    }
    runs.push(result);
  }
  return runs.length === 1 ? runs[0] : runs;
}
