// What a single put costs as the database grows: the instructions of 50,000 relaxed single puts
// of 100-byte values over keys already loaded, on memory storage, counted by `perf stat` for the
// puts alone (the load, flush and compaction before them are not counted). A count moves far less
// with the machine's load than a timing; `perf` counts every thread of the process, so Node runs
// with `--single-threaded`.
//
// `node bench/put-at-size.mjs [package root] [keys...]` (Linux, `perf` installed: `apt-get
// install linux-perf`; keys 100,000 and 3,000,000 by default) prints, per size, the SSTs the
// loaded database holds and the instructions a put took, for two runs. The package root defaults
// to this checkout; another's (a worktree of an earlier commit, built with `npm run build`)
// measures that build.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PUTS = 50_000;
const here = fileURLToPath(import.meta.url);

if (process.argv[2] === "--child") {
  await child(process.argv[3], Number(process.argv[4]), process.argv[5]);
} else {
  const root = path.resolve(process.argv[2] ?? path.join(path.dirname(here), ".."));
  const sizes = process.argv.length > 3 ? process.argv.slice(3).map(Number) : [100_000, 3_000_000];
  for (const keys of sizes) {
    if (!Number.isInteger(keys) || keys < PUTS) throw new Error(`keys must be an integer of at least ${PUTS}, not ${keys}`);
    const runs = [count(root, keys), count(root, keys)];
    const each = runs.map((r) => `${Math.round(r.instructions / PUTS).toLocaleString("en")}`).join(", ");
    console.log(`${root}: ${keys.toLocaleString("en")} keys (${runs[0].ssts} SSTs): instructions a put, two runs: ${each}`);
  }
}

/** One child process under `perf stat`, counting only while the child says so (a control FIFO). */
function count(root, keys) {
  const dir = mkdtempSync(path.join(tmpdir(), "put-at-size-"));
  const fifo = path.join(dir, "control");
  try {
    const made = spawnSync("mkfifo", [fifo]);
    if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr}`);
    const run = spawnSync(
      "perf",
      ["stat", "-D", "-1", "--control", `fifo:${fifo}`, "-x", ",", "-e", "instructions:u", "--", process.execPath, "--single-threaded", here, "--child", root, String(keys), fifo],
      { encoding: "utf8" },
    );
    if (run.error) throw new Error(`perf could not run (apt-get install linux-perf): ${run.error.message}`);
    // perf's CSV line on stderr: "1803425358,,instructions:u,…"; the child's line: "ssts 275".
    const counted = /^(\d+),[^,]*,instructions:u/m.exec(run.stderr);
    const ssts = /^ssts (\d+)$/m.exec(run.stdout);
    if (run.status !== 0 || !counted || !ssts) throw new Error(`the run of ${keys} keys failed:\n${run.stdout}\n${run.stderr}`);
    return { instructions: Number(counted[1]), ssts: Number(ssts[1]) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function child(root, keys, fifo) {
  const { open, destroy } = await import(pathToFileURL(path.join(root, "bindings/js/dist/server/node.js")).href);
  const { key, value100 } = await import(pathToFileURL(path.join(root, "bench/workloads.mjs")).href);
  const name = `put-at-size-${process.pid}`;
  const db = await open(name, { storage: "memory", durability: "relaxed", defaultTtlMs: 3_600_000 });
  for (let i = 0; i < keys; i += 1000) {
    const ops = [];
    for (let j = i; j < Math.min(keys, i + 1000); j++) ops.push({ type: "put", key: key(j), value: value100(j) });
    await db.batch(ops);
  }
  await db.flush();
  await db.compact();
  const stats = await db.stats();
  console.log(`ssts ${stats.levels.reduce((n, level) => n + level.ssts.length, 0)}`);
  writeFileSync(fifo, "enable\n");
  for (let j = 0; j < PUTS; j++) {
    const i = (j * 7919) % keys;
    await db.put(key(i), value100(i + j));
  }
  writeFileSync(fifo, "disable\n");
  await db.close();
  await destroy(name, { storage: "memory" });
}
