// What the side-by-side scripts share (side-by-side.mjs, side-by-side-flush.mjs,
// side-by-side-concurrent.mjs): two builds of the package in one process, timed in turns, and
// B's figure over A's taken within each block, where whatever the machine does to one side it
// does to the other.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { median } from "./workloads.mjs";

/** The server entry (`<root>/bindings/js/dist/server/node.js`) of a checkout or copy with the package built. */
export function serverEntry(root) {
  return import(pathToFileURL(path.resolve(root, "bindings/js/dist/server/node.js")).href);
}

/** `run(side)` for each side in each of `blocks` blocks, the order swapped every block. */
export async function inTurns(blocks, sides, run) {
  for (let block = 0; block < blocks; block++) {
    for (const side of block % 2 === 0 ? sides : [...sides].reverse()) await run(side);
  }
}

/** "median M× [lowest–highest] over N blocks" of `b[i] ÷ a[i]`, the two sides' figures block by block. */
export function withinBlocks(a, b) {
  const ratios = b.map((x, i) => x / a[i]);
  return `median ${median(ratios).toFixed(3)}× [${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}] over ${ratios.length} blocks`;
}
