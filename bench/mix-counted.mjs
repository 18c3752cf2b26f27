// What one operation of the session mix costs, ttlkv against the mix's own reference (the async
// `Map`, with a JSON copy for JSON values), counted by `perf stat` rather than timed: the
// session mix's timings spread by a third from run to run on a busy machine, its instruction
// counts far less (the gets' within a percent; ttlkv's puts and mix within about 6 %, since its
// maintenance runs on timers, whose turns fall differently from run to run). Each run is a child
// process that loads 100,000 keys (`put` one by one; ttlkv then flushes and compacts, as `npm run
// bench` does before its mix), collects the garbage (as the bench does before it times), then
// runs 200,000 operations over the bench's Zipf keys (`zipfIndexes(100_000, 200_000, 42)`), and
// only those are counted (a control FIFO; Node with `--single-threaded`, since `perf` counts
// every thread of the process, so V8's collector and compilers run on the counted thread):
// `gets` alone, `puts` alone, or the `mix` (one put in 20). The reference and ttlkv are the
// bench's own (`mixReference` and `memoryTtlkv` in bench/workloads.mjs).
//
// `node bench/mix-counted.mjs [gets|puts|mix] [json|strings] [runs] [package root...]` (Linux,
// `perf` installed: `apt-get install linux-perf`; `mix`, `json` and 3 runs by default) prints,
// for the reference and each package root (this checkout by default; another's, a worktree of an
// earlier commit built with `npm run build`, measures that build), the instructions and the
// cycles an operation took: the median of the runs and their range. The runs of the stores take
// turns. Cycles count what instructions do not, the waits on memory, and move with the machine's
// load as a timing does, less the time the process was not running.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median } from "./workloads.mjs";

const KEYS = 100_000;
const OPS = 200_000;
const MODES = ["gets", "puts", "mix"];
const VALUES = ["json", "strings"];
const REFERENCE = "reference";
const here = fileURLToPath(import.meta.url);
const checkout = path.join(path.dirname(here), "..");

if (process.argv[2] === "--child") {
  const [store, mode, values, fifo] = process.argv.slice(3);
  await child(store, mode, values, fifo);
} else {
  const [mode = "mix", values = "json", runs = "3", ...roots] = process.argv.slice(2);
  if (!MODES.includes(mode)) throw new Error(`the mode is one of ${MODES.join(", ")}, not ${mode}`);
  if (!VALUES.includes(values)) throw new Error(`the values are one of ${VALUES.join(", ")}, not ${values}`);
  if (!(Number.isInteger(Number(runs)) && Number(runs) >= 1)) throw new Error(`runs must be an integer of at least 1, not ${runs}`);
  const stores = [REFERENCE, ...(roots.length ? roots : [checkout]).map((r) => path.resolve(r))];
  const counts = new Map(stores.map((s) => [s, []]));
  for (let run = 0; run < Number(runs); run++) for (const store of stores) counts.get(store).push(count(store, mode, values));
  console.log(`${mode} of the session mix, ${values === "json" ? "1 KiB JSON" : "100-byte strings"}, Zipf keys: a median operation over ${runs} runs [range]`);
  for (const [store, xs] of counts) {
    const figure = (field) => {
      const each = xs.map((x) => x[field] / OPS);
      return `${thousands(median(each))} [${thousands(Math.min(...each))}–${thousands(Math.max(...each))}]`;
    };
    const name = store === REFERENCE ? `reference (async Map${values === "json" ? " + JSON copy" : ""})` : store;
    console.log(`  ${name}: instructions ${figure("instructions")}, cycles ${figure("cycles")}`);
  }
}

function thousands(x) {
  return Math.round(x).toLocaleString("en");
}

/** One child process under `perf stat`, counting only while the child says so (a control FIFO). */
function count(store, mode, values) {
  const dir = mkdtempSync(path.join(tmpdir(), "mix-counted-"));
  const fifo = path.join(dir, "control");
  try {
    const made = spawnSync("mkfifo", [fifo]);
    if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr}`);
    const events = "instructions:u,cycles:u";
    const run = spawnSync(
      "perf",
      ["stat", "-D", "-1", "--control", `fifo:${fifo}`, "-x", ",", "-e", events, "--", process.execPath, "--single-threaded", "--expose-gc", here, "--child", store, mode, values, fifo],
      { encoding: "utf8" },
    );
    if (run.error) throw new Error(`perf could not run (apt-get install linux-perf): ${run.error.message}`);
    const field = (event) => Number(new RegExp(`^(\\d+),[^,]*,${event}`, "m").exec(run.stderr)?.[1]);
    const counted = { instructions: field("instructions:u"), cycles: field("cycles:u") };
    if (run.status !== 0 || !(counted.instructions > 0) || !(counted.cycles > 0)) {
      throw new Error(`the run of ${store} failed:\n${run.stdout}\n${run.stderr}`);
    }
    return counted;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function child(store, mode, values, fifo) {
  const { key, sessionValue, value100, zipfIndexes, mixReference, memoryTtlkv } = await import(pathToFileURL(path.join(checkout, "bench/workloads.mjs")).href);
  const valueOf = values === "json" ? sessionValue : value100;
  let db;
  if (store === REFERENCE) {
    db = mixReference(values === "json");
  } else {
    const { open, destroy } = await import(pathToFileURL(path.join(store, "bindings/js/dist/server/node.js")).href);
    db = await memoryTtlkv(open, destroy, `mix-counted-${process.pid}`);
  }
  for (let i = 0; i < KEYS; i++) await db.set(key(i), valueOf(i));
  await db.settle?.();
  const chosen = zipfIndexes(KEYS, OPS, 42);
  globalThis.gc();
  writeFileSync(fifo, "enable\n");
  for (let j = 0; j < OPS; j++) {
    const i = chosen[j];
    const put = mode === "puts" || (mode === "mix" && j % 20 === 0);
    // Awaited whether or not it is a Promise, as the bench's mix does with a Promise.
    await (put ? db.set(key(i), valueOf(i + j)) : db.get(key(i)));
  }
  writeFileSync(fifo, "disable\n");
  await db.close();
}
