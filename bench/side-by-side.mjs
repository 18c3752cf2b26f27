// Two builds of the package timed side by side in one process, for telling one build from the
// next on a machine whose speed moves between runs (no peers; the README quotes none of it).
// `node --expose-gc bench/side-by-side.mjs <root A> <root B> [zipf|uniform] [strings|json] [blocks]`
// loads each root's server entry (`<root>/bindings/js/dist/server/node.js`: a checkout or a copy
// with the package built), opens one memory database in each (with the sessions' TTL, as the
// bench's), loads both alike with the session mix's 100,000 keys (batches of 1,000), flushes and
// compacts them, then times the mix of `npm run bench` (200,000 operations, one put in twenty) on
// each in turn, `blocks` times (16 by default), the order swapped every block. It prints each
// side's ops/s per block and the median [lowest–highest] of B's rate over A's within a block:
// whatever the machine does to one block it does to both sides of it. Run it again with the roots
// swapped to see the figure hold.
import { SESSION_TTL, key, value100, sessionValue, zipfIndexes, uniformIndexes, median } from "./workloads.mjs";
import { serverEntry, inTurns, withinBlocks } from "./two-builds.mjs";

const [rootA, rootB, keyChoice = "zipf", values = "strings", blocksText = "16"] = process.argv.slice(2);
if (!rootA || !rootB) {
  console.error("usage: node --expose-gc bench/side-by-side.mjs <root A> <root B> [zipf|uniform] [strings|json] [blocks]");
  process.exit(2);
}
if (!["zipf", "uniform"].includes(keyChoice) || !["strings", "json"].includes(values)) {
  console.error("side-by-side: keys are zipf or uniform, values strings or json");
  process.exit(2);
}
const blocks = Number(blocksText);
const keys = 100_000;
const ops = 200_000;
const valueOf = values === "json" ? sessionValue : value100;
const chosen = keyChoice === "uniform" ? uniformIndexes(keys, ops, 43) : zipfIndexes(keys, ops, 42);
const collectGarbage = globalThis.gc ?? (() => {});

const sides = [];
for (const root of [rootA, rootB]) {
  const { open } = await serverEntry(root);
  const db = await open(`side-by-side-${process.pid}-${sides.length}`, { storage: "memory", durability: "relaxed", defaultTtlMs: SESSION_TTL });
  for (let i = 0; i < keys; i += 1000) {
    const batch = [];
    for (let j = i; j < i + 1000; j++) batch.push({ type: "put", key: key(j), value: valueOf(j) });
    await db.batch(batch);
  }
  await db.flush();
  await db.compact();
  sides.push({ root, db, rates: [] });
}

await inTurns(blocks, sides, async (side) => {
  collectGarbage();
  const started = performance.now();
  for (let j = 0; j < ops; j++) {
    const i = chosen[j];
    if (j % 20 === 0) await side.db.put(key(i), valueOf(i + j));
    else await side.db.get(key(i));
  }
  side.rates.push((ops / (performance.now() - started)) * 1000);
});

const thousands = (x) => Math.round(x).toLocaleString("en");
for (const [name, side] of [["A", sides[0]], ["B", sides[1]]]) {
  console.log(`${name} ${side.root}: median ${thousands(median(side.rates))} ops/s; blocks ${side.rates.map(thousands).join(", ")}`);
}
console.log(`${keyChoice} ${values}: B ÷ A within a block, ${withinBlocks(sides[0].rates, sides[1].rates)}`);
for (const side of sides) await side.db.close();
