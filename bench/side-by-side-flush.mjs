// Two builds' flushes timed side by side in one process, as side-by-side.mjs times their session
// mixes (no peers; the README quotes none of it). `node --expose-gc bench/side-by-side-flush.mjs
// <root A> <root B> [blocks]` loads each root's server entry (`<root>/bindings/js/dist/server/
// node.js`), and in each block, for each side in turn (the order swapped every block), opens a
// memory database with maintenance manual, puts 60,000 keys of 100-byte values in batches of
// 1,000 (untimed: with maintenance manual nothing is committed or flushed meanwhile), then times
// one `flush()`: the WAL group of every batch committed as one page (about 10.8 MB), then the
// memtable written as an SST of 120,000 rows (the keys and their expiry-index rows). It prints
// each side's median time and the median [lowest–highest] of B's time over A's within a block.
// A flush's work does not depend on timers, as the ingest's share of it does (how much of it
// lands inside a timed window moves its figure by half), so this tells builds apart by its
// work alone.
import { SESSION_TTL, key, value100, median } from "./workloads.mjs";
import { serverEntry, inTurns, withinBlocks } from "./two-builds.mjs";

const [rootA, rootB, blocksText = "16"] = process.argv.slice(2);
if (!rootA || !rootB) {
  console.error("usage: node --expose-gc bench/side-by-side-flush.mjs <root A> <root B> [blocks]");
  process.exit(2);
}
const blocks = Number(blocksText);
const keys = 60_000;
const collectGarbage = globalThis.gc ?? (() => {});
const sides = [];
for (const root of [rootA, rootB]) sides.push({ root, pkg: await serverEntry(root), times: [] });

let opened = 0;
async function timedFlush(pkg) {
  const name = `side-by-side-flush-${process.pid}-${opened++}`;
  const db = await pkg.open(name, { storage: "memory", durability: "relaxed", defaultTtlMs: SESSION_TTL, maintenance: "manual" });
  for (let i = 0; i < keys; i += 1000) {
    const batch = [];
    for (let j = i; j < i + 1000; j++) batch.push({ type: "put", key: key(j), value: value100(j) });
    await db.batch(batch);
  }
  collectGarbage();
  const started = performance.now();
  await db.flush();
  const ms = performance.now() - started;
  await db.close();
  await pkg.destroy(name, { storage: "memory" });
  return ms;
}

await inTurns(blocks, sides, async (side) => side.times.push(await timedFlush(side.pkg)));
for (const [name, side] of [["A", sides[0]], ["B", sides[1]]]) {
  console.log(`${name} ${side.root}: median ${median(side.times).toFixed(1)} ms; blocks ${side.times.map((t) => t.toFixed(1)).join(", ")}`);
}
console.log(`flush of ${keys.toLocaleString("en")} keys: B ÷ A time within a block, ${withinBlocks(sides[0].times, sides[1].times)}`);
