// The instructions the package's server engine executes in Node for two write workloads, counted
// by valgrind's cachegrind: a figure that does not move with the machine's speed or load, for
// comparing one build with the next where timings spread by a third from run to run.
//
// `node bench/instructions.mjs [package root]` (valgrind installed: `apt-get install valgrind`)
// runs this file three times under `valgrind --tool=cachegrind --cache-sim=no`, each in a Node
// whose V8 runs no background threads and compiles WebAssembly with one tier
// (`--single-threaded --predictable --no-liftoff`): then the same build counts the same within
// about 0.1 %. Printed: the count of each workload less that of `none` (start-up, open, flush and
// close alone), in millions. The package root defaults to this checkout; another's (a worktree of
// an earlier commit, built with `npm run build`) measures that build.
//
// The workloads, on memory storage, relaxed, a 30-minute default TTL, 100-byte values:
// - `batches`: 100,000 puts in batches of 1,000, keys in order (the ingest of `npm run bench`);
// - `puts`: 50,000 single puts over 20,000 keys;
// - `none`: open, flush and close.
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import path from "node:path";

const WORKLOADS = ["none", "batches", "puts"];
const here = fileURLToPath(import.meta.url);

if (process.argv[2] === "--workload") {
  await workload(process.argv[3], process.argv[4]);
} else {
  count(path.resolve(process.argv[2] ?? path.join(path.dirname(here), "..")));
}

function count(root) {
  const millions = {};
  for (const name of WORKLOADS) {
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
    millions[name] = Number(refs[1].replaceAll(",", "")) / 1e6;
  }
  const net = (name) => (millions[name] - millions.none).toLocaleString("en", { maximumFractionDigits: 0 });
  console.log(`${root}: start-up, open, flush and close ${Math.round(millions.none).toLocaleString("en")}M instructions; beyond them:`);
  console.log(`  100,000 puts in batches of 1,000: ${net("batches")}M`);
  console.log(`  50,000 single puts over 20,000 keys: ${net("puts")}M`);
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
  } else if (name !== "none") {
    throw new Error(`unknown workload ${name}: one of ${WORKLOADS.join(", ")}`);
  }
  await db.flush();
  await db.close();
}
