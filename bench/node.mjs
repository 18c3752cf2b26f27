// The Node workloads of docs/benchmarks.md (memory peers): session mix, ingest, purge, memory per live key.
// Each returns rows { workload, peer, value, unit, higherIsBetter, note? }.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { LRUCache } from "lru-cache";
import { TTLCache } from "@isaacs/ttlcache";
import { open, destroy } from "../bindings/js/dist/server/node.js";
import { SESSION_TTL, key, sessionValue, value100, zipfIndexes, uniformIndexes, rng, median, sampleList, mixReference, memoryTtlkv, purgeTtlkv } from "./workloads.mjs";

let dbCounter = 0;
const fresh = (prefix) => `${prefix}-${process.pid}-${dbCounter++}`;

/**
 * Collect what the setup of a workload left behind, so the timed part does not pay for it (only
 * when node runs with --expose-gc, as `npm run bench` does).
 */
function collectGarbage() {
  globalThis.gc?.();
}

/**
 * Peers of the memory workloads: the same small interface, sync or async. `close()` lets go of
 * everything a peer holds, so that the next one does not run beside it (a heap kept full slows
 * every garbage collection after it; @isaacs/ttlcache's expiry timers keep its data alive).
 */
function memoryPeers(max) {
  return {
    Map: async () => {
      const m = new Map();
      return { set: (k, v) => m.set(k, v), get: (k) => m.get(k), close: () => m.clear() };
    },
    "lru-cache": async () => {
      const c = new LRUCache({ max, ttl: SESSION_TTL });
      return { set: (k, v) => c.set(k, v), get: (k) => c.get(k), close: () => c.clear() };
    },
    "@isaacs/ttlcache": async () => {
      const c = new TTLCache({ max, ttl: SESSION_TTL });
      return { set: (k, v) => c.set(k, v), get: (k) => c.get(k), close: () => c.clear() };
    },
    ttlkv: () => memoryTtlkv(open, destroy, fresh("bench")),
  };
}

/**
 * 1. Session mix: `keys` sessions, `ops` operations, 95 % get / 5 % put. `values` is "strings"
 * (100-byte strings, the values of the issue's bar) or "json" (sessions of ~1 KiB as JSON, the
 * benchmark plan's values). `keyChoice` is "zipf" (Zipf 0.99, hot keys scattered over the key
 * space: the workload of the bars) or "uniform" (each operation's key an independent seeded
 * uniform choice over all `keys`: no hot set for a cache to keep, every read as likely to land
 * anywhere); the "uniform" rows are named so.
 *
 * One sample takes a few tenths of a second, so a garbage collection or the machine's load moves
 * it by a third either way: the peers take `rounds` turns, each round in an order of its own and
 * each turn on a fresh instance loaded anew, and each peer's figure is the median of its turns
 * (every sample is in the note). Nine rounds: with five, one run's ratio of a mix moved from
 * about 0.66× to 0.87× between the runs of a set on a busy machine, its samples' ratios within a
 * round from 0.4× to 1.0×; the median of nine samples spreads about √(5/9), three quarters, as
 * much as the median of five drawn alike.
 */
export async function sessionMix({ keys, ops, values, keyChoice = "zipf", rounds = 9 }, order) {
  const peers = memoryPeers(keys * 2);
  const json = values === "json";
  const valueOf = json ? sessionValue : value100;
  // Not a peer but a ceiling (`mixReference`).
  peers[json ? "reference: async Map + JSON copy" : "reference: async Map"] = async () => mixReference(json);
  const uniform = keyChoice === "uniform";
  if (!uniform && keyChoice !== "zipf") throw new Error(`sessionMix: unknown keyChoice ${keyChoice}`);
  const chosen = uniform ? uniformIndexes(keys, ops, 43) : zipfIndexes(keys, ops, 42);
  const samples = Object.fromEntries(Object.keys(peers).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const name of order(Object.keys(peers))) {
      const peer = await peers[name]();
      for (let i = 0; i < keys; i++) {
        const r = peer.set(key(i), valueOf(i));
        if (r instanceof Promise) await r;
      }
      if (peer.settle) await peer.settle();
      collectGarbage();
      const started = performance.now();
      for (let j = 0; j < ops; j++) {
        const i = chosen[j];
        const r = j % 20 === 0 ? peer.set(key(i), valueOf(i + j)) : peer.get(key(i));
        if (r instanceof Promise) await r;
      }
      samples[name].push((ops / (performance.now() - started)) * 1000);
      await peer.close();
    }
  }
  const workload = `session mix (${json ? "1 KiB JSON" : "100-byte strings"}${uniform ? ", uniform random keys" : ""})`;
  return Object.entries(samples).map(([name, runs]) => {
    const how = uniform && name === "ttlkv" ? `each key a seeded uniform choice among ${keys.toLocaleString("en")}, not Zipf; ` : "";
    const note = `${how}median of ${runs.length} rounds: ${sampleList(runs)} ops/s`;
    return { workload, peer: name, value: median(runs), unit: "ops/s", higherIsBetter: true, note };
  });
}

/**
 * 2. Ingest: `count` puts of 100-byte values, each peer's fastest correct way. One sample takes
 * a tenth of a second for the fastest peers, so a garbage collection of what came before would
 * move it severalfold: each peer is timed `repeats` times (nine, as the session mix's rounds),
 * each time on a fresh instance after a collection, and the median is the figure (every sample
 * is in the note). The peers take turns, each round in an order of its own (as in the session
 * mix), so that a slow or fast stretch of the machine falls on every peer alike rather than on
 * the one whose samples it happened to span.
 */
export async function ingest({ count, repeats = 9 }, order) {
  const peers = memoryPeers(count * 2);
  const samples = Object.fromEntries(Object.keys(peers).map((name) => [name, []]));
  const batched = {};
  for (let r = 0; r < repeats; r++) {
    for (const name of order(Object.keys(peers))) {
      const peer = await peers[name]();
      batched[name] = Boolean(peer.batch);
      collectGarbage();
      const started = performance.now();
      if (peer.batch) {
        for (let i = 0; i < count; i += 1000) {
          const ops = [];
          for (let j = i; j < Math.min(count, i + 1000); j++) ops.push({ type: "put", key: key(j), value: value100(j) });
          await peer.batch(ops);
        }
      } else {
        for (let i = 0; i < count; i++) peer.set(key(i), value100(i));
      }
      samples[name].push((count / (performance.now() - started)) * 1000);
      await peer.close();
    }
  }
  return Object.entries(samples).map(([name, runs]) => {
    const how = batched[name] ? "batches of 1,000" : "set, one by one";
    const note = `${how}; median of ${runs.length} runs, taken in turns with the other peers': ${sampleList(runs)} ops/s`;
    return { workload: "ingest (memory)", peer: name, value: median(runs), unit: "ops/s", higherIsBetter: true, note };
  });
}

/**
 * 6. Purge: `due` keys due among each total of `totals`; purgeExpired (the expiry index) against
 * a full-scan purge (scan everything, delete what expired) over the same data. One purge of
 * 10k keys takes about 100 ms, so a single sample moves with a garbage collection: purgeExpired
 * is timed `repeats` times, each on a database of its own, and the median is the figure (every
 * sample is in the note). The full-scan purge takes seconds and is timed once.
 */
export async function purge({ due, totals, repeats = 3 }) {
  const rows = [];
  for (const total of totals) {
    for (const how of ["purgeExpired", "full scan"]) {
      const samples = [];
      let removed = 0;
      for (let r = 0; r < (how === "purgeExpired" ? repeats : 1); r++) {
        const timed = await timedPurge(due, total, how);
        samples.push(timed.ms);
        removed = timed.removed;
      }
      const note = samples.length > 1 ? `${removed} removed; median of ${samples.length} runs: ${sampleList(samples)} ms` : `${removed} removed`;
      rows.push({ workload: `purge ${due.toLocaleString("en")} due among ${total.toLocaleString("en")}`, peer: how === "purgeExpired" ? "ttlkv purgeExpired" : "ttlkv full-scan purge", value: median(samples), unit: "ms", higherIsBetter: false, note });
    }
  }
  return rows;
}

/** One purge of `due` keys among `total` on a fresh database: `{ ms, removed }`. */
async function timedPurge(due, total, how) {
  const { db, close } = await purgeTtlkv(open, destroy, fresh("purge"), due, total);
  collectGarbage();
  const started = performance.now();
  let removed = 0;
  if (how === "purgeExpired") {
    for (;;) {
      const n = await db.purgeExpired({ limit: 10_000 });
      removed += n;
      if (n === 0) break;
    }
  } else {
    // What an app does without an expiry index: read everything, delete what is due. (ttlkv's
    // scan already hides expired keys, so the scan reads every entry's expiry via the engine's
    // raw view: every live key is visited, and the due ones are deleted by key.)
    const doomed = [];
    for (let j = 0; j < total; j++) {
      const ttl = await db.ttl(key(j));
      if (ttl === -2) doomed.push(key(j));
    }
    for (let i = 0; i < doomed.length; i += 1000) {
      await db.batch(doomed.slice(i, i + 1000).map((k) => ({ type: "delete", key: k })));
    }
    removed = doomed.length;
  }
  const ms = performance.now() - started;
  await close();
  return { ms, removed };
}

/**
 * 10. Memory per live key: each peer in its own process (bench/memory.mjs), the growth of its
 * resident set. Then ttlkv's WebAssembly memory at the end of the same process, per key: linear
 * memory never shrinks, so its size is the high-water mark of the engine's heap (load, flush and
 * full compaction), set against lru-cache's resident growth from the same run.
 */
export function memoryPerKey({ keys }, order) {
  const script = fileURLToPath(new URL("./memory.mjs", import.meta.url));
  const measured = {};
  const rows = order(["Map", "lru-cache", "@isaacs/ttlcache", "ttlkv"]).map((peer) => {
    const out = JSON.parse(execFileSync(process.execPath, ["--expose-gc", script, peer, String(keys)], { encoding: "utf8" }));
    measured[peer] = out;
    return { workload: "memory per live key", peer, value: out.bytesPerKey, unit: "bytes", higherIsBetter: false };
  });
  const { wasmBytesAtOpen, wasmBytesAtEnd } = measured.ttlkv;
  const mib = (b) => (b / 2 ** 20).toFixed(1);
  const workload = "wasm memory high-water per live key";
  rows.push({
    workload,
    peer: "ttlkv",
    value: wasmBytesAtEnd / keys,
    unit: "bytes",
    higherIsBetter: false,
    note: `byte length of the package's own WebAssembly.Memory (instance caught from WebAssembly.instantiate) after loading ${keys.toLocaleString("en")} 1 KiB sessions, flush and full compaction, ÷ keys: ${mib(wasmBytesAtEnd)} MiB (${mib(wasmBytesAtOpen)} MiB at open); it never shrinks, so this is its peak; grown pages count whether touched or not`,
  });
  rows.push({
    workload,
    peer: "lru-cache",
    value: measured["lru-cache"].bytesPerKey,
    unit: "bytes",
    higherIsBetter: false,
    note: "resident-set growth per key for the same sessions: the figure of its memory per live key row",
  });
  return rows;
}

/**
 * 7. Expiry under churn: a steady stream of puts with a short TTL (70 % new session keys, 30 %
 * puts to a random earlier key, a refresh when that key is still live) for `seconds`, automatic maintenance on, real time. Every half second
 * it samples the bytes ttlkv stores (WAL + SST data pages) and the bytes of the live data (keys
 * whose latest put has not expired, key + value). Stored bytes should plateau, not grow: the
 * figure is the largest stored/live ratio over the second half of the run.
 */
export async function churn({ seconds, ttlMs, putsPerSecond }) {
  const name = fresh("churn");
  const db = await open(name, { storage: "memory", durability: "relaxed" });
  const live = new Map(); // key -> expireAt, the model of what is live
  const random = rng(11);
  const rowBytes = key(0).length + value100(0).length;
  let next = 0;
  let puts = 0;
  const samples = [];
  const started = Date.now();
  const tickMs = 10;
  const perTick = Math.max(1, Math.round((putsPerSecond * tickMs) / 1000));
  let nextSample = started;
  while (Date.now() - started < seconds * 1000) {
    const ops = [];
    const now = Date.now();
    for (let j = 0; j < perTick; j++) {
      let i;
      if (live.size > 0 && random() < 0.3) i = Math.floor(random() * next);
      else i = next++;
      ops.push({ type: "put", key: key(i), value: value100(i), ttlMs });
      live.set(i, now + ttlMs);
    }
    await db.batch(ops);
    puts += ops.length;
    if (now >= nextSample) {
      nextSample += 500;
      for (const [i, at] of live) if (at <= now) live.delete(i);
      const s = await db.stats();
      const sstBytes = s.levels.reduce((n, l) => n + l.ssts.reduce((m, t) => m + t.bytes, 0), 0);
      samples.push({ atMs: now - started, storedBytes: s.walBytes + sstBytes, walBytes: s.walBytes, sstBytes, liveBytes: live.size * rowBytes, liveKeys: live.size });
    }
    await new Promise((resolve) => setTimeout(resolve, tickMs));
  }
  await db.close();
  await destroy(name, { storage: "memory" });
  const second = samples.filter((s) => s.atMs >= (seconds * 1000) / 2 && s.liveBytes > 0);
  const worst = second.reduce((w, s) => (s.storedBytes / s.liveBytes > w.storedBytes / w.liveBytes ? s : w), second[0]);
  const mb = (b) => (b / 1e6).toFixed(1);
  const note = `${puts.toLocaleString("en")} puts in ${seconds} s, TTL ${ttlMs} ms; worst sample: ${mb(worst.storedBytes)} MB stored (WAL ${mb(worst.walBytes)}, SSTs ${mb(worst.sstBytes)}) for ${mb(worst.liveBytes)} MB live`;
  return [{ workload: "churn, stored bytes / live bytes", peer: "ttlkv", value: worst.storedBytes / worst.liveBytes, unit: "×", higherIsBetter: false, note, samples }];
}
