// `node --expose-gc bench/purge-alone.mjs [total] [runs] [package root]`: the bench's purge
// (bench/node.mjs, `purge`: 10,000 keys due among `total`, 1,000,000 by default, flushed and
// compacted, a clock moved past their expiry) on a database of its own `runs` times (3 by
// default), ttlkv alone; prints each purge's time in ms. The first run in a process also compiles
// the engine's code it meets first, so compare the later ones. With `--profile`, each purge runs
// under `node:inspector`'s CPU profiler (a sample every 50 µs), and the script prints where the
// purge's samples went: the functions of most self time, and the share of each function named in
// `PROFILE_FUNCTIONS` (a regular expression; the page searches and row reads by default) with what
// it calls. The profiler's own samples are left out, and so are V8's idle and unattributed ones.
// Function names need an engine built with them: `wasm-bindgen --keep-debug` over build.toml's
// server target's cargo output, without wasm-opt, in a copy of bindings/js/dist/server given as
// the package root. Explains the purge rows of docs/performance.md ("What the missed bars would
// take").
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { purgeTtlkv, median } from "./workloads.mjs";

const args = process.argv.slice(2).filter((a) => a !== "--profile");
const profiling = process.argv.includes("--profile");
const total = Number(args[0] ?? 1_000_000);
const runs = Number(args[1] ?? 3);
const root = args[2] ?? fileURLToPath(new URL("../bindings/js/dist/server", import.meta.url));
const { open, destroy } = await import(pathToFileURL(path.join(root, "node.js")));
// The bench's 10,000 due (all of them when the total is smaller).
const DUE = Math.min(10_000, total);
const watched = new RegExp(process.env.PROFILE_FUNCTIONS ?? "DataPage::lower_bound|lookup_hashed|decode_row$|shared_page");

let session;
if (profiling) {
  const inspector = await import("node:inspector/promises");
  session = new inspector.Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 50 });
}

const times = [];
for (let run = 0; run < runs; run++) {
  const { db, close } = await purgeTtlkv(open, destroy, `purge-alone-${process.pid}-${run}`, DUE, total);
  globalThis.gc?.();
  if (session) await session.post("Profiler.start");
  const started = performance.now();
  let removed = 0;
  for (;;) {
    const n = await db.purgeExpired({ limit: 10_000 });
    removed += n;
    if (n === 0) break;
  }
  times.push(performance.now() - started);
  if (session) summarize((await session.post("Profiler.stop")).profile, run);
  if (removed !== DUE) throw new Error(`purged ${removed} keys, expected ${DUE}`);
  await close();
}
const ms = (t) => t.toFixed(1);
console.log(`purge of ${DUE.toLocaleString("en")} due among ${total.toLocaleString("en")}: ${times.map(ms).join(", ")} ms (median of the runs after the first: ${times.length > 1 ? ms(median(times.slice(1))) : "-"})`);

/** Where one purge's samples went, the profiler's own (under the inspector's `post`) left out. */
function summarize(profile, run) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (n) => n.callFrame.functionName.replace(/::h[0-9a-f]{16}$/, "") || "(anonymous)";
  const self = new Map();
  const inclusive = new Map();
  let counted = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const chain = [];
    for (let at = id; at !== undefined; at = parent.get(at)) chain.push(byId.get(at));
    const leaf = chain[0].callFrame.functionName;
    if (chain.some((n) => n.callFrame.functionName === "post") || ["(idle)", "(program)"].includes(leaf)) return;
    counted += dt;
    self.set(name(chain[0]), (self.get(name(chain[0])) ?? 0) + dt);
    for (const fn of new Set(chain.map(name).filter((n) => watched.test(n)))) inclusive.set(fn, (inclusive.get(fn) ?? 0) + dt);
  });
  const share = (t) => `${((100 * t) / counted).toFixed(1).padStart(5)} %`;
  console.log(`run ${run}: ${(counted / 1000).toFixed(1)} ms of samples`);
  for (const [fn, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`  self ${share(t)}  ${fn}`);
  for (const [fn, t] of [...inclusive].sort((a, b) => b[1] - a[1])) console.log(`  with what it calls ${share(t)} (${(t / 1000).toFixed(1)} ms)  ${fn}`);
}
