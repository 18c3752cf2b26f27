// A database on the Deno KV adapter (durable writes) loses no acknowledged put when the KV dies
// at any of many points of a workload: puts of small values, of 300 KB (one atomic operation)
// and of 1.2 MB (a journaled commit), overwrites, deletes, flushes and a compaction.
//   deno run --unstable-kv engine_crash.js
// Prints { ops, trials, failures } as JSON.
import { open } from "ttlkv";
import { denoKvStorage } from "ttlkv/deno-kv";
import { audit, bytes, digest, faultyKv } from "./support.js";

const PREFIX = ["engine", "crash"];
const T0 = 1_767_225_600_000;
const POINTS = 40;
const failures = [];

/** Operation i of the workload: [kind, key, value]. */
function step(i) {
  if (i === 20 || i === 40) return ["flush"];
  if (i === 45) return ["compact"];
  if (i % 11 === 6) return ["delete", `k${(i * 7) % 25}`];
  const value = i % 13 === 5 ? bytes(i, 1_200_000) : i % 5 === 2 ? bytes(i, 300_000) : `value ${i}`;
  return ["put", `k${i % 25}`, value];
}
const STEPS = 60;

const describe = (value) => (value === undefined ? "absent" : typeof value === "string" ? value : digest(value));

/** Run the workload until it ends or a call fails; the state every acknowledged call left, and
 * the keys whose last call failed (either state may be there). */
async function runWorkload(kv) {
  const acked = new Map();
  const uncertain = new Map();
  let db;
  try {
    db = await open("crash", { storage: denoKvStorage(kv, { prefix: PREFIX }), maintenance: "manual", clock: () => T0 });
    for (let i = 0; i < STEPS; i++) {
      const [kind, key, value] = step(i);
      const expected = kind === "put" ? describe(value) : "absent";
      if (key) uncertain.set(key, expected);
      if (kind === "put") await db.put(key, value);
      else if (kind === "delete") await db.delete(key);
      else await db[kind]();
      if (key) {
        uncertain.delete(key);
        acked.set(key, expected);
      }
    }
    await db.close();
  } catch {
    await db?.close().catch(() => {});
  }
  return { acked, uncertain };
}

const kv0 = await Deno.openKv(":memory:");
const counting = faultyKv(kv0);
await runWorkload(counting);
const ops = counting.count();
kv0.close();

const trials = { crash: 0, "crash-after": 0 };
for (const mode of ["crash", "crash-after"]) {
  for (let p = 0; p < POINTS; p++) {
    const at = 1 + Math.floor((p * ops) / POINTS);
    const kv = await Deno.openKv(":memory:");
    const { acked, uncertain } = await runWorkload(faultyKv(kv, { at, mode }));
    const what = `${mode} at KV operation ${at} of ${ops}`;
    const db = await open("crash", { storage: denoKvStorage(kv, { prefix: PREFIX }), maintenance: "manual", clock: () => T0 });
    for (const [key, expected] of acked) {
      const found = describe(await db.get(key));
      if (found !== expected && found !== uncertain.get(key)) failures.push(`${what}: ${key} is ${found}, not the acknowledged ${expected}`);
    }
    await db.close();
    for (const problem of await audit(kv, PREFIX)) failures.push(`${what}: ${problem}`);
    trials[mode]++;
    kv.close();
  }
}

console.log(JSON.stringify({ ops, trials, failures }));
