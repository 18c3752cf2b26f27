// The instructions the package's server engine executes in Node for three workloads, counted
// by valgrind's cachegrind: a figure that moves far less with the machine's speed and load than a
// timing, for comparing one build with the next where timings spread by a third from run to run.
//
// `node bench/instructions.mjs [package root] [runs] [writes|mix]` (valgrind installed: `apt-get
// install valgrind`) runs each workload of the group (`writes` by default) `runs` times (3 by
// default) under `valgrind --tool=cachegrind
// --cache-sim=no`, each in a Node whose V8 runs no background threads and compiles WebAssembly
// with one tier (`--single-threaded --predictable --no-liftoff`). Printed: for each workload, the
// median and range of its counts less the median count of `none` (start-up, open, flush and close
// alone), in millions. The single puts count the same within about 0.3 %; the batches and the
// mixes within about 4 % (three runs of one build's Zipf mix: 2,525M–2,609M), since automatic
// maintenance runs on timers, whose wall-clock times valgrind stretches: take the median of three
// or more to tell builds apart by a few percent. The
// package root defaults to this checkout; another's (a worktree of an earlier commit, built with
// `npm run build`) measures that build.
//
// The workloads, on memory storage, relaxed, a 30-minute default TTL, 100-byte values:
// - `batches`: 100,000 puts in batches of 1,000, keys in order (the ingest of `npm run bench`);
// - `puts`: 50,000 single puts over 20,000 keys;
// - `gets`: 20,000 puts in batches of 1,000, then 100,000 gets of those keys;
// - `none`: open, flush and close.
// The `mix` group, the session mix of `npm run bench` (100-byte strings, one put in 20):
// - `mix-zipf`: 100,000 keys loaded in batches of 1,000, flushed and fully compacted, then
//   200,000 operations over Zipf keys (`zipfIndexes(100_000, 200_000, 42)`);
// - `mix-uniform`: the same over near-uniform keys (`uniformIndexes(100_000, 200_000, 43)`);
// - `mix-load`: the load, flush and compaction alone (and both key choices drawn), what the two
//   are counted beyond.
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import path from "node:path";

const GROUPS = {
  writes: { base: "none", workloads: ["batches", "puts", "gets"] },
  mix: { base: "mix-load", workloads: ["mix-zipf", "mix-uniform"] },
};
const WORKLOADS = Object.values(GROUPS).flatMap((g) => [g.base, ...g.workloads]);
const DESCRIBED = {
  none: "start-up, open, flush and close",
  batches: "100,000 puts in batches of 1,000",
  puts: "50,000 single puts over 20,000 keys",
  gets: "20,000 puts in batches of 1,000, then 100,000 gets of them",
  "mix-load": "start-up, open, 100,000 keys loaded, flushed and compacted, close",
  "mix-zipf": "the session mix, 200,000 operations over Zipf keys",
  "mix-uniform": "the session mix, 200,000 operations over near-uniform keys",
};
const here = fileURLToPath(import.meta.url);

if (process.argv[2] === "--workload") {
  await workload(process.argv[3], process.argv[4]);
} else {
  const runs = Number(process.argv[3] ?? 3);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`runs must be a positive integer, not ${process.argv[3]}`);
  const group = GROUPS[process.argv[4] ?? "writes"];
  if (group === undefined) throw new Error(`unknown group ${process.argv[4]}: one of ${Object.keys(GROUPS).join(", ")}`);
  count(path.resolve(process.argv[2] ?? path.join(path.dirname(here), "..")), runs, group);
}

function count(root, runs, group) {
  const millions = {};
  for (const name of [group.base, ...group.workloads]) {
    millions[name] = [];
    for (let run = 0; run < runs; run++) millions[name].push(instructions(root, name));
  }
  const base = median(millions[group.base]);
  const m = (x) => Math.round(x).toLocaleString("en");
  const net = (name) => {
    const xs = millions[name].map((x) => x - base);
    return `${m(median(xs))}M [${m(Math.min(...xs))}–${m(Math.max(...xs))}]`;
  };
  console.log(`${root}: ${DESCRIBED[group.base]} ${m(base)}M instructions; beyond them (median [range] of ${runs}):`);
  for (const name of group.workloads) console.log(`  ${DESCRIBED[name]}: ${net(name)}`);
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
  const { key, value100, zipfIndexes, uniformIndexes } = await import(pathToFileURL(path.join(root, "bench/workloads.mjs")).href);
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
  } else if (name.startsWith("mix-")) {
    for (let i = 0; i < 100_000; i += 1000) {
      const ops = [];
      for (let j = i; j < i + 1000; j++) ops.push({ type: "put", key: key(j), value: value100(j) });
      await db.batch(ops);
    }
    await db.flush();
    await db.compact();
    // Both key choices are drawn in every mix workload, so that the load's count holds them too.
    const zipf = zipfIndexes(100_000, 200_000, 42);
    const uniform = uniformIndexes(100_000, 200_000, 43);
    const chosen = { "mix-zipf": zipf, "mix-uniform": uniform, "mix-load": [] }[name];
    if (chosen === undefined) throw new Error(`unknown workload ${name}: one of ${WORKLOADS.join(", ")}`);
    for (let j = 0; j < chosen.length; j++) {
      const i = chosen[j];
      if (j % 20 === 0) await db.put(key(i), value100(i + j));
      else await db.get(key(i));
    }
  } else if (name !== "none") {
    throw new Error(`unknown workload ${name}: one of ${WORKLOADS.join(", ")}`);
  }
  await db.flush();
  await db.close();
}
