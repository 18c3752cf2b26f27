// `node bench/medians.mjs run1.json run2.json run3.json`: the figures the README and
// docs/performance.md quote, from several runs of `npm run bench` (each run's
// bench/results.json, copied aside): for each workload, ttlkv's value as the median of the runs
// with every run's value, and each ratio against a peer (taken within a run, as bench/report.mjs
// does) as the median with the lowest and highest. Then each bar with each run's figure.
//
//   for i in 1 2 3; do npm run bench && cp bench/results.json /tmp/bench-$i.json; done
//   node bench/medians.mjs /tmp/bench-1.json /tmp/bench-2.json /tmp/bench-3.json
import { readFileSync } from "node:fs";
import { bars, comparisons } from "./report.mjs";
import { median } from "./workloads.mjs";

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node bench/medians.mjs <results.json of each run>...");
  process.exit(2);
}
const runs = files.map((f) => JSON.parse(readFileSync(f, "utf8")));
const engines = [...new Set(runs.flatMap((r) => r.rows.map((row) => row.engine)))];

const num = (v) => (Math.abs(v) >= 100 ? Math.round(v).toLocaleString("en") : v.toFixed(2));
const spread = (xs) => `${num(median(xs))}× [${num(Math.min(...xs))}–${num(Math.max(...xs))}]`;

console.log(`${runs.length} runs: ${runs.map((r) => r.meta.date).join(", ")}; Node ${runs[0].meta.node}`);
for (const engine of engines) {
  const rowsOf = (run) => run.rows.filter((r) => r.engine === engine);
  console.log(`\n## ${engine ?? "Node (memory) and the package"}`);
  const perRun = runs.map(rowsOf);
  const mine = new Map();
  for (const rows of perRun) {
    // ttlkv's own rows: "ttlkv", and its variants measured against each other ("ttlkv
    // purgeExpired" beside "ttlkv full-scan purge").
    for (const row of rows.filter((r) => r.peer.startsWith("ttlkv"))) {
      const name = row.peer === "ttlkv" ? row.workload : `${row.workload}, ${row.peer}`;
      if (!mine.has(name)) mine.set(name, { workload: row.workload, unit: row.unit, values: [] });
      mine.get(name).values.push(row.value);
    }
  }
  const ratios = new Map();
  for (const rows of perRun) {
    for (const c of comparisons(rows)) {
      const key = `${c.workload}\u0000${c.peer}`;
      if (!ratios.has(key)) ratios.set(key, []);
      ratios.get(key).push(c.ratio);
    }
  }
  for (const [name, { workload, unit, values }] of mine) {
    console.log(`- ${name}: ${num(median(values))} ${unit} [${values.map(num).join(", ")}]`);
    if (name !== workload) continue;
    for (const [key, xs] of ratios) {
      const [w, peer] = key.split("\u0000");
      if (w === workload) console.log(`    ${spread(xs)} ${peer}${xs.length < runs.length ? ` (${xs.length} runs)` : ""}`);
    }
  }
}

// The bars, per engine: each run's figure and how many runs met it (the bars read a run's rows of
// one engine together with the rows measured outside a browser).
console.log("\n## Bars (each run's figure)");
const inEngine = (rows, engine) => rows.filter((r) => r.engine === undefined || r.engine === engine);
const browserEngines = engines.filter(Boolean);
for (const engine of browserEngines.length ? browserEngines : [undefined]) {
  const perRun = runs.map((run) => bars(inEngine(run.rows, engine)));
  console.log(`\n${engine ?? "Node"}:`);
  perRun[0].forEach((bar, i) => {
    const figures = perRun.map((b) => b[i].measured);
    const met = perRun.filter((b) => b[i].met).length;
    console.log(`- ${bar.bar}: ${figures.join(" | ")} (met in ${met} of ${runs.length})`);
  });
}
