// Two builds' concurrent durable puts timed side by side in one process, as side-by-side.mjs
// times their session mixes (no peers; the README quotes none of it). `node
// bench/side-by-side-concurrent.mjs <root A> <root B> [blocks]` loads each root's server entry and
// its `ttlkv/node-fs` adapter, and in each block, for each side in turn (the order swapped every
// block), opens a durable database in a fresh directory under the system's temporary directory
// (on a machine whose /tmp is a disk, point TMPDIR at a tmpfs such as /dev/shm to time the engine
// rather than the disk), and times five rounds of 1,000 puts of 100-byte values started at once:
// the commits that group commit makes of them pass the engine's commit gate one at a time, with
// the other puts waiting for it. It prints each side's median time and the median
// [lowest–highest] of B's time over A's within a block.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { key, value100, median } from "./workloads.mjs";
import { serverEntry, inTurns, withinBlocks } from "./two-builds.mjs";

const [rootA, rootB, blocksText = "10"] = process.argv.slice(2);
if (!rootA || !rootB) {
  console.error("usage: node bench/side-by-side-concurrent.mjs <root A> <root B> [blocks]");
  process.exit(2);
}
const blocks = Number(blocksText);
const rounds = 5;
const puts = 1000;
const sides = [];
for (const root of [rootA, rootB]) {
  const adapter = path.resolve(root, "bindings/js/dist/adapters/node-fs.js");
  const { fileStorage } = await import(pathToFileURL(adapter).href);
  sides.push({ root, pkg: await serverEntry(root), fileStorage, times: [] });
}

let opened = 0;
async function timedPuts({ pkg, fileStorage }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ttlkv-side-by-side-"));
  try {
    const db = await pkg.open(`concurrent-${opened++}`, { storage: fileStorage(dir) });
    await db.put("first", value100(0));
    const started = performance.now();
    for (let round = 0; round < rounds; round++) {
      await Promise.all(Array.from({ length: puts }, (_, i) => db.put(key(round * puts + i), value100(i))));
    }
    const ms = performance.now() - started;
    await db.close();
    return ms;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await inTurns(blocks, sides, async (side) => side.times.push(await timedPuts(side)));
for (const [name, side] of [["A", sides[0]], ["B", sides[1]]]) {
  console.log(`${name} ${side.root}: median ${median(side.times).toFixed(1)} ms; blocks ${side.times.map((t) => t.toFixed(1)).join(", ")}`);
}
console.log(`${rounds} rounds of ${puts.toLocaleString("en")} concurrent durable puts: B ÷ A time within a block, ${withinBlocks(sides[0].times, sides[1].times)}`);
