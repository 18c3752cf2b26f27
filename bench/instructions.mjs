// The instructions the package's server engine executes in Node for three workloads, counted
// by valgrind's cachegrind: a figure that moves far less with the machine's speed and load than a
// timing, for comparing one build with the next where timings spread by a third from run to run.
//
// `node bench/instructions.mjs [package root] [runs]` (valgrind installed: `apt-get install
// valgrind`) runs each workload `runs` times (3 by default) under `valgrind --tool=cachegrind
// --cache-sim=no`, each in a Node whose V8 runs no background threads and compiles WebAssembly
// with one tier (`--single-threaded --predictable --no-liftoff`). Printed: for each workload, the
// median and range of its counts less the median count of `none` (start-up, open, flush and close
// alone), in millions. The single puts count the same within about 0.3 %; the batches within about
// 4 %, since automatic maintenance runs on timers, whose wall-clock times valgrind stretches. The
// package root defaults to this checkout; another's (a worktree of an earlier commit, built with
// `npm run build`) measures that build.
//
// The workloads, on memory storage, relaxed, a 30-minute default TTL, 100-byte values:
// - `batches`: 100,000 puts in batches of 1,000, keys in order (the ingest of `npm run bench`);
// - `puts`: 50,000 single puts over 20,000 keys;
// - `gets`: 20,000 puts in batches of 1,000, then 100,000 gets of those keys;
// - `none`: open, flush and close.
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import path from "node:path";

const WORKLOADS = ["none", "batches", "puts", "gets"];
const here = fileURLToPath(import.meta.url);

if (process.argv[2] === "--workload") {
  await workload(process.argv[3], process.argv[4]);
} else {
  const runs = Number(process.argv[3] ?? 3);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`runs must be a positive integer, not ${process.argv[3]}`);
  count(path.resolve(process.argv[2] ?? path.join(path.dirname(here), "..")), runs);
}

function count(root, runs) {
  const millions = {};
  for (const name of WORKLOADS) {
    millions[name] = [];
    for (let run = 0; run < runs; run++) millions[name].push(instructions(root, name));
  }
  const base = median(millions.none);
  const m = (x) => Math.round(x).toLocaleString("en");
  const net = (name) => {
    const xs = millions[name].map((x) => x - base);
    return `${m(median(xs))}M [${m(Math.min(...xs))}–${m(Math.max(...xs))}]`;
  };
  console.log(`${root}: start-up, open, flush and close ${m(base)}M instructions; beyond them (median [range] of ${runs}):`);
  console.log(`  100,000 puts in batches of 1,000: ${net("batches")}`);
  console.log(`  50,000 single puts over 20,000 keys: ${net("puts")}`);
  console.log(`  20,000 puts in batches of 1,000, then 100,000 gets of them: ${net("gets")}`);
}

/** One run of workload `name` under cachegrind: the instructions counted, in millions. */
function instructions(root, name) {
  const run = spawnSync(
    "valgrind",
    [
      "--tool=cachegrind",
      "--cache-sim=no",
      "--cachegrind-out-file=/dev/null",
      process.execPath,
      "--no-liftoff",
      "--single-threaded",
      "--predictable",
      here,
      "--workload",
      name,
      root,
    ],
    { encoding: "utf8" },
  );
  if (run.error) throw new Error(`valgrind could not run (apt-get install valgrind): ${run.error.message}`);
  // cachegrind's summary, on stderr: "==pid== I   refs:      8,028,814,045".
  const refs = /I\s+refs:\s+([\d,]+)/.exec(run.stderr);
  if (run.status !== 0 || !refs) throw new Error(`workload ${name} failed:\n${run.stderr}`);
  return Number(refs[1].replaceAll(",", "")) / 1e6;
}

function median(xs) {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function workload(name, root) {
  const { open } = await import(pathToFileURL(path.join(root, "bindings/js/dist/server/node.js")).href);
  const { key, value100 } = await import(pathToFileURL(path.join(root, "bench/workloads.mjs")).href);
  const db = await open(`instructions-${process.pid}`, { storage: "memory", durability: "relaxed", defaultTtlMs: 1_800_000 });
  if (name === "batches") {
    for (let i = 0; i < 100_000; i += 1000) {
      const ops = [];
      for (let j = i; j < i + 1000; j++) ops.push({ type: "put", key: key(j), value: value100(j) });
      await db.batch(ops);
    }
  } else if (name === "puts") {
    for (let j = 0; j < 50_000; j++) await db.put(key((j * 7919) % 20_000), value100(j));
  } else if (name === "gets") {
    for (let i = 0; i < 20_000; i += 1000) {
      const ops = [];
      for (let j = i; j < i + 1000; j++) ops.push({ type: "put", key: key(j), value: value100(j) });
      await db.batch(ops);
    }
    let found = 0;
    for (let j = 0; j < 100_000; j++) if ((await db.get(key((j * 7919) % 20_000))) !== undefined) found++;
    if (found !== 100_000) throw new Error(`gets: ${100_000 - found} of 100,000 missed`);
  } else if (name !== "none") {
    throw new Error(`unknown workload ${name}: one of ${WORKLOADS.join(", ")}`);
  }
  await db.flush();
  await db.close();
}
