// `npm run bench`: every workload of docs/benchmarks.md, ttlkv against its peers in the same run — Node for
// the memory peers, each browser engine (Chromium, Firefox, WebKit; Debian's builds) for the
// IndexedDB peers — then bench/results.json, bench/results.md (the table of ratios, a column per
// engine) and bench/results.svg (the plot). `--smoke` runs tiny sizes into target/bench-smoke/ (CI: the suite still works).
// Needs the engine built (`bash scripts/build-package.sh`) and `npm install` at the root.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { ENGINES, launch } from "../tests/e2e/browsers.mjs";
import { sessionMix, ingest, purge, memoryPerKey, churn } from "./node.mjs";
import { IDB_INGEST_PEERS, median, sampleList, shuffle } from "./workloads.mjs";
import { renderTable, renderSvg } from "./report.mjs";
import { serveBench, benchPageOpener } from "./in-page.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const smoke = process.argv.includes("--smoke");
const out = smoke ? path.join(root, "target", "bench-smoke") : here;
const size = smoke
  ? { sessionKeys: 2_000, sessionOps: 5_000, ingest: 2_000, purgeDue: 200, purgeTotals: [400, 4_000], memoryKeys: 2_000, churn: { seconds: 3, ttlMs: 500, putsPerSecond: 2_000 }, idbIngest: 2_000, latency: 30, concurrent: 100, getKeys: 2_000, gets: 500, coldPages: 2, ingestRuns: 2 }
  : { sessionKeys: 100_000, sessionOps: 200_000, ingest: 100_000, purgeDue: 10_000, purgeTotals: [20_000, 200_000, 1_000_000], memoryKeys: 100_000, churn: { seconds: 30, ttlMs: 5_000, putsPerSecond: 10_000 }, idbIngest: 100_000, latency: 200, concurrent: 1_000, getKeys: 100_000, gets: 5_000, coldPages: 5, ingestRuns: 3 };

let seed = Date.now() % 1_000_000;
const order = (names) => shuffle([...names], seed++);
const rows = [];
const log = (r) => {
  for (const row of r) console.log(`${row.workload.padEnd(44)} ${row.peer.padEnd(40)} ${row.value.toFixed(row.unit === "ms" ? 2 : 0).padStart(12)} ${row.unit}${row.note ? `  (${row.note})` : ""}`);
  rows.push(...r);
};

console.log(`ttlkv benchmarks${smoke ? " (smoke sizes)" : ""}, Node ${process.version}`);
log(await sessionMix({ keys: size.sessionKeys, ops: size.sessionOps, values: "strings" }, order));
log(await sessionMix({ keys: size.sessionKeys, ops: size.sessionOps, values: "json" }, order));
log(await sessionMix({ keys: size.sessionKeys, ops: size.sessionOps, values: "strings", keyChoice: "uniform" }, order));
log(await ingest({ count: size.ingest }, order));
log(memoryPerKey({ keys: size.memoryKeys }, order));
log(await purge({ due: size.purgeDue, totals: size.purgeTotals }));
log(await churn(size.churn));

// The IndexedDB workloads in each browser engine (tests/e2e/browsers.mjs: Chromium, Firefox,
// WebKit; TTLKV_BROWSERS picks), each against the peers in the same engine. Cross-origin isolated,
// for performance.now() at 5 µs instead of 100 µs (single puts take ~0.5 ms).
const server = await serveBench();
const engines = {};
try {
  for (const engine of ENGINES) {
    engines[engine] = browserVersion(engine);
    console.log(`\n${engine} (${engines[engine]})`);
    const tagged = (r) => r.map((row) => ({ ...row, engine }));
    const browser = await launch(engine);
    try {
      await idbWorkloads(browser, (r) => log(tagged(r)));
    } finally {
      await browser.close();
    }
  }
} finally {
  await server.close();
}

async function idbWorkloads(browser, report) {
  const context = await browser.newContext();
  const page = benchPageOpener(context, server.origin);
  const p = await page();
  const idbPeers = order(IDB_INGEST_PEERS);
  // Each peer ingests into a fresh database several times: the median is the figure, and the
  // longest task is the worst seen in any run.
  const ingestRuns = [];
  for (let i = 0; i < size.ingestRuns; i++) {
    ingestRuns.push(await p.evaluate((n, peers, run) => window.bench.ingest(n, peers, run), size.idbIngest, idbPeers, i));
  }
  report(medians(ingestRuns, "runs", ["longest main-thread task, ingest + compaction"]));
  report(await p.evaluate((n, c) => window.bench.putLatency(n, c), size.latency, size.concurrent));
  await p.evaluate((n) => window.bench.fill(n), size.getKeys);
  await p.close();
  // A cold open is one sample of a few milliseconds, so it is taken on several pages that have
  // opened none of the databases, and the median is the figure (every sample is in the note).
  const coldRuns = [];
  let cold;
  for (let i = 0; i < size.coldPages; i++) {
    if (cold) await cold.close();
    cold = await page();
    coldRuns.push(await cold.evaluate((n) => window.bench.coldOpen(n), size.getKeys));
  }
  report(medians(coldRuns, "pages"));
  report(await cold.evaluate((n, g) => window.bench.pointGets(n, g), size.getKeys, size.gets));
  await context.close();
}

/** The browser's version, from its own command line. */
function browserVersion(engine) {
  const command = { chromium: ["chromium", "--version"], firefox: ["firefox-esr", "--version"], webkit: ["dpkg-query", "-W", "-f=${Version}", "libwebkit2gtk-4.1-0"] }[engine];
  try {
    const out = execFileSync(command[0], command.slice(1), { encoding: "utf8" }).trim();
    return engine === "webkit" ? `WebKitGTK ${out}` : out;
  } catch {
    return "version unknown";
  }
}

/**
 * One row per workload and peer of `runs` (lists of rows, one per run on `unit`s): the median
 * value, every sample noted. For the workloads named in `worstOf`, the worst value instead.
 */
function medians(runs, unit, worstOf = []) {
  return runs[0].map((first) => {
    const rows = runs.map((run) => run.find((r) => r.workload === first.workload && r.peer === first.peer));
    const samples = rows.map((r) => r.value);
    if (worstOf.includes(first.workload)) {
      const worst = first.higherIsBetter ? Math.min(...samples) : Math.max(...samples);
      const worstRow = rows.find((r) => r.value === worst);
      const note = `worst of ${samples.length} ${unit}: ${sampleList(samples)} ${first.unit}`;
      return { ...worstRow, note: worstRow.note ? `${worstRow.note}; ${note}` : note };
    }
    const note = `median of ${samples.length} ${unit}: ${sampleList(samples)} ${first.unit}`;
    return { ...first, value: median(samples), note: first.note ? `${first.note}; ${note}` : note };
  });
}

// 9. Size: what a browser loads (its entry, the core and the engine).
const wasm = readFileSync(path.join(root, "bindings/js/dist/pkg/ttlkv_web_bg.wasm"));
const js = ["index.js", "core.js"].map((f) => readFileSync(path.join(root, "bindings/js/dist", f)));
const gz = [wasm, ...js].reduce((n, b) => n + gzipSync(b, { level: 9 }).length, 0);
log([{ workload: "package size (wasm + JS, gzipped)", peer: "ttlkv", value: gz / 1024, unit: "KiB", higherIsBetter: false }]);

const meta = { date: new Date().toISOString(), node: process.version, engines, smoke, sizes: size, command: smoke ? "npm run bench:smoke" : "npm run bench" };
mkdirSync(out, { recursive: true });
writeFileSync(path.join(out, "results.json"), JSON.stringify({ meta, rows }, null, 2) + "\n");
writeFileSync(path.join(out, "results.md"), renderTable(meta, rows));
writeFileSync(path.join(out, "results.svg"), renderSvg(meta, rows));
console.log(`\n${renderTable(meta, rows)}\nwritten: ${path.relative(root, out)}/results.{json,md,svg}`);
