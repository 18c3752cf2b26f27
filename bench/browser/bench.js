// The IndexedDB workloads of docs/benchmarks.md, run in headless Chromium by bench/run.mjs: ttlkv against
// raw IndexedDB, idb-keyval and Dexie, each on a fresh database. Every function returns plain rows.
import { open, destroy, init } from "ttlkv";
import * as idbKeyval from "idb-keyval";
import Dexie from "dexie";
import { key, value100, rng, percentile, shuffle } from "/bench/workloads.mjs";

const req = (r) =>
  new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
const txDone = (tx) =>
  new Promise((resolve, reject) => {
    tx.oncomplete = resolve;
    tx.onabort = () => reject(tx.error);
  });

async function deleteIdb(name) {
  await req(indexedDB.deleteDatabase(name));
}

/** Raw IndexedDB: one object store "kv", out-of-line keys. */
async function rawDb(name) {
  await deleteIdb(name);
  const r = indexedDB.open(name, 1);
  r.onupgradeneeded = () => r.result.createObjectStore("kv");
  return req(r);
}

async function dexieDb(name) {
  await Dexie.delete(name);
  const db = new Dexie(name);
  db.version(1).stores({ kv: "" });
  await db.open();
  return db;
}

async function keyvalStore(name) {
  await deleteIdb(name);
  return idbKeyval.createStore(name, "kv");
}

/** ttlkv's side of the IndexedDB ingest: `data` ([key, value] pairs) in durable batches of 1,000, then a flush. */
export async function ttlkvIngest(db, data) {
  for (let i = 0; i < data.length; i += 1000) {
    await db.batch(data.slice(i, i + 1000).map(([k, v]) => ({ type: "put", key: k, value: v })));
  }
  await db.flush();
}

/** A fresh ttlkv database `name` on IndexedDB, maintenance run only when called. */
export async function ttlkvDb(name, options = {}) {
  await destroy(name);
  return open(name, { maintenance: "manual", ...options });
}

const items = (count) => Array.from({ length: count }, (_, i) => [key(i), value100(i)]);

/** Whether this engine has the Long Tasks API (Chromium does; Firefox and WebKit do not). */
export const hasLongTasks = typeof PerformanceObserver !== "undefined" && PerformanceObserver.supportedEntryTypes?.includes("longtask");

/**
 * Longest task (ms) while `fn` runs: from the Long Tasks API where there is one (it reports
 * tasks over 50 ms only), else the longest gap between the turns of a heartbeat that asks for
 * the next turn as soon as it gets one (a MessageChannel: timers are clamped), which is at least
 * as long as the longest task in between.
 */
async function longestTask(fn) {
  let longest = 0;
  if (hasLongTasks) {
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) longest = Math.max(longest, e.duration);
    });
    observer.observe({ type: "longtask", buffered: false });
    await fn();
    await new Promise((r) => setTimeout(r, 50));
    observer.disconnect();
    return longest;
  }
  const beat = heartbeat();
  await fn();
  return beat.stop();
}

/**
 * A heartbeat that asks for the next turn of the event loop as soon as it gets one (a
 * MessageChannel: timers are clamped). `longest()` is the longest gap between its turns since the
 * start or the last `reset()`: at least as long as the longest task in between. `stop()` ends it
 * and gives `longest()`. (Also used by bench/heartbeat.mjs, through `window.bench`.)
 */
export function heartbeat() {
  const channel = new MessageChannel();
  let last = performance.now();
  let longest = 0;
  let running = true;
  channel.port1.onmessage = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) channel.port2.postMessage(0);
  };
  channel.port2.postMessage(0);
  return {
    longest: () => longest,
    reset: () => {
      longest = 0;
    },
    stop: () => {
      running = false;
      channel.port1.close();
      return longest;
    },
  };
}

/** 2. Ingest `count` 100-byte values (run number `run`); 8. the longest main-thread task during ttlkv's. */
export async function ingest(count, peers, run = 0) {
  // Each run on databases of its own: idb-keyval never closes a store's connection, so deleting
  // one of an earlier run's databases would wait for ever.
  const named = (name) => `${name}-${run}`;
  const data = items(count);
  const rows = [];
  const time = async (peer, fn, note) => {
    const started = performance.now();
    await fn();
    const ms = performance.now() - started;
    rows.push({ workload: "ingest (IndexedDB)", peer, value: (count / ms) * 1000, unit: "ops/s", higherIsBetter: true, note });
  };
  for (const peer of peers) {
    if (peer === "raw IndexedDB, one transaction") {
      const db = await rawDb(named("bench-raw-bulk"));
      await time(peer, async () => {
        const tx = db.transaction("kv", "readwrite");
        const s = tx.objectStore("kv");
        for (const [k, v] of data) s.put(v, k);
        await txDone(tx);
      });
      db.close();
    } else if (peer === "raw IndexedDB, one put per transaction") {
      const n = Math.min(count, 2_000);
      const db = await rawDb(named("bench-raw-each"));
      const started = performance.now();
      for (let i = 0; i < n; i++) {
        const tx = db.transaction("kv", "readwrite");
        tx.objectStore("kv").put(data[i][1], data[i][0]);
        await txDone(tx);
      }
      const ms = performance.now() - started;
      rows.push({ workload: "ingest (IndexedDB)", peer, value: (n / ms) * 1000, unit: "ops/s", higherIsBetter: true, note: `${n} puts` });
      db.close();
    } else if (peer === "idb-keyval setMany") {
      const store = await keyvalStore(named("bench-keyval-bulk"));
      await time(peer, () => idbKeyval.setMany(data, store));
    } else if (peer === "idb-keyval set") {
      const n = Math.min(count, 2_000);
      const store = await keyvalStore(named("bench-keyval-each"));
      const started = performance.now();
      for (let i = 0; i < n; i++) await idbKeyval.set(data[i][0], data[i][1], store);
      const ms = performance.now() - started;
      rows.push({ workload: "ingest (IndexedDB)", peer, value: (n / ms) * 1000, unit: "ops/s", higherIsBetter: true, note: `${n} awaited sets` });
    } else if (peer === "Dexie bulkPut") {
      const db = await dexieDb(named("bench-dexie-bulk"));
      await time(peer, () => db.table("kv").bulkPut(data.map(([, v]) => v), data.map(([k]) => k)));
      db.close();
    } else if (peer === "ttlkv") {
      const load = (db) => ttlkvIngest(db, data);
      let db = await ttlkvDb(named("bench-ttlkv-ingest"));
      let longest = 0;
      const how = "durable batches of 1,000, then flush";
      if (hasLongTasks) {
        // The Long Tasks API only observes: the timed ingest runs under it.
        await time(peer, async () => {
          longest = await longestTask(() => load(db));
        }, how);
      } else {
        // A heartbeat takes turns of the page's own, which slow what runs beside it (in WebKit
        // ttlkv's ingest ran at about half its speed under one): the ingest is timed without
        // it, then made again on a database of its own under it, for its longest task.
        await time(peer, () => load(db), `${how}; timed without the heartbeat that measures its longest task`);
        await db.close();
        db = await ttlkvDb(named("bench-ttlkv-ingest-beat"));
        longest = await longestTask(() => load(db));
      }
      const compactLongest = await longestTask(() => db.compact());
      const worst = Math.max(longest, compactLongest);
      // The Long Tasks API reports only tasks of more than 50 ms: 0 means none was seen.
      const note = !hasLongTasks
        ? "the longest gap between turns of a MessageChannel heartbeat (no Long Tasks API here)"
        : worst === 0
          ? "no task over 50 ms (the Long Tasks API reports only those)"
          : undefined;
      rows.push({ workload: "longest main-thread task, ingest + compaction", peer, value: worst, unit: "ms", higherIsBetter: false, note });
      await db.close();
    }
  }
  return rows;
}

/** 3. Latency of one awaited durable put (p50, p99 of `count`), and `concurrent` puts at once. */
export async function putLatency(count, concurrent) {
  const rows = [];
  const peers = {
    "raw IndexedDB, one put per transaction": async () => {
      const db = await rawDb("bench-raw-latency");
      return async (k, v) => {
        const tx = db.transaction("kv", "readwrite");
        tx.objectStore("kv").put(v, k);
        await txDone(tx);
      };
    },
    "idb-keyval set": async () => {
      const store = await keyvalStore("bench-keyval-latency");
      return (k, v) => idbKeyval.set(k, v, store);
    },
    "Dexie put": async () => {
      const db = await dexieDb("bench-dexie-latency");
      return (k, v) => db.table("kv").put(v, k);
    },
    ttlkv: async () => {
      const db = await ttlkvDb("bench-ttlkv-latency");
      return (k, v) => db.put(k, v);
    },
  };
  // The single puts are interleaved, one put of each peer in turn (the order rotating), so that a
  // slow or fast stretch of the machine falls on every peer alike.
  const puts = {};
  for (const [peer, make] of Object.entries(peers)) puts[peer] = await make();
  const names = Object.keys(puts);
  const times = Object.fromEntries(names.map((peer) => [peer, []]));
  for (let i = 0; i < count; i++) {
    for (let j = 0; j < names.length; j++) {
      const peer = names[(i + j) % names.length];
      const started = performance.now();
      await puts[peer](key(i), value100(i));
      times[peer].push(performance.now() - started);
    }
  }
  for (const peer of names) {
    const put = puts[peer];
    times[peer].sort((a, b) => a - b);
    const note = `${count} puts awaited one by one, interleaved with the other peers'; timer ${crossOriginIsolated ? "5 µs (cross-origin isolated)" : "clamped to 0.1 ms"}`;
    rows.push({ workload: "durable single put, p50", peer, value: percentile(times[peer], 50), unit: "ms", higherIsBetter: false, note });
    rows.push({ workload: "durable single put, p99", peer, value: percentile(times[peer], 99), unit: "ms", higherIsBetter: false, note });
    // One round takes tens of ms: the median of 7 rounds, so one stall does not decide it.
    const rates = [];
    for (let round = 0; round < 7; round++) {
      const started = performance.now();
      await Promise.all(Array.from({ length: concurrent }, (_, i) => put(key(count + round * concurrent + i), value100(i))));
      rates.push((concurrent / (performance.now() - started)) * 1000);
    }
    rates.sort((a, b) => a - b);
    rows.push({ workload: `${concurrent.toLocaleString("en")} concurrent durable puts`, peer, value: percentile(rates, 50), unit: "ops/s", higherIsBetter: true, note: "median of 7 rounds" });
  }
  return rows;
}

/** Fill every peer's database with `count` items (for the get and cold-open workloads). */
export async function fill(count) {
  const data = items(count);
  const raw = await rawDb("bench-get-raw");
  const tx = raw.transaction("kv", "readwrite");
  for (const [k, v] of data) tx.objectStore("kv").put(v, k);
  await txDone(tx);
  raw.close();
  await idbKeyval.setMany(data, await keyvalStore("bench-get-keyval"));
  const dexie = await dexieDb("bench-get-dexie");
  await dexie.table("kv").bulkPut(data.map(([, v]) => v), data.map(([k]) => k));
  dexie.close();
  const db = await ttlkvDb("bench-get-ttlkv");
  for (let i = 0; i < count; i += 1000) await db.batch(data.slice(i, i + 1000).map(([k, v]) => ({ type: "put", key: k, value: v })));
  await db.flush();
  await db.compact();
  await db.close();
  return true;
}

/** 4. Cold open to first get (run in a page that has not touched the databases yet). */
export async function coldOpen(count) {
  const probe = key(Math.floor(count / 2));
  const rows = [];
  // `fn` opens and reads, and gives back the value read and how to close what it opened: the time
  // ends with the first get's answer. A close is no part of it (an app keeps its database open),
  // and closes differ: IndexedDB's `close()` (raw, Dexie) returns at once, ttlkv's waits for a
  // commit of its clock seed (the time its reads saw, so that the clock never goes back across a
  // reopen). Until b67a182 each peer's close was timed with its open (the `close()` phase of
  // `node bench/cold-open.mjs` gives ttlkv's).
  const time = async (peer, fn) => {
    const started = performance.now();
    const [v, close] = await fn();
    const ms = performance.now() - started;
    await close();
    if (v !== value100(Math.floor(count / 2))) throw new Error(`${peer} read ${v}`);
    rows.push({ workload: `cold open + first get, ${count.toLocaleString("en")} keys`, peer, value: ms, unit: "ms", higherIsBetter: false });
  };
  const nothing = async () => {};
  await time("raw IndexedDB", async () => {
    const db = await req(indexedDB.open("bench-get-raw", 1));
    const v = await req(db.transaction("kv").objectStore("kv").get(probe));
    return [v, async () => db.close()];
  });
  // idb-keyval keeps its connection open for the page's life: nothing to close.
  await time("idb-keyval", async () => [await idbKeyval.get(probe, idbKeyval.createStore("bench-get-keyval", "kv")), nothing]);
  await time("Dexie", async () => {
    const db = new Dexie("bench-get-dexie");
    db.version(1).stores({ kv: "" });
    const v = await db.table("kv").get(probe);
    return [v, async () => db.close()];
  });
  // The engine is loaded by the first open() of a page; here it is loaded first, by init() with
  // the URL the entry would use, so that its part of the cold open is known (fetch, compile and
  // instantiate, streaming where the browser can) and reported as a row of its own.
  let loading;
  await time("ttlkv", async () => {
    const started = performance.now();
    await init({ url: new URL("/ttlkv/bindings/js/dist/pkg/ttlkv_web_bg.wasm", location.href) });
    loading = performance.now() - started;
    const db = await open("bench-get-ttlkv", { maintenance: "manual" });
    return [await db.get(probe), () => db.close()];
  });
  rows.push({ workload: "of the cold open: loading the engine", peer: "ttlkv", value: loading, unit: "ms", higherIsBetter: false, note: "fetch, compile and instantiate the wasm, inside the cold open's time" });
  return rows;
}

/**
 * 5. Point gets: `gets` random keys of `count`, awaited one by one, on a database just opened in
 * this page ("after a reopen": nothing of it cached by the peer), then the same keys again in
 * another order ("warm": whatever the peer caches is now cached).
 */
export async function pointGets(count, gets) {
  const random = rng(9);
  const probes = Array.from({ length: gets }, () => key(Math.floor(random() * count)));
  const again = shuffle([...probes], 10);
  const rows = [];
  const run = async (peer, get) => {
    for (const [workload, list] of [["point get after a reopen", probes], ["warm point get", again]]) {
      const started = performance.now();
      for (const k of list) await get(k);
      rows.push({ workload, peer, value: (gets / (performance.now() - started)) * 1000, unit: "ops/s", higherIsBetter: true });
    }
  };
  const raw = await req(indexedDB.open("bench-get-raw", 1));
  await run("raw IndexedDB", (k) => req(raw.transaction("kv").objectStore("kv").get(k)));
  raw.close();
  const store = idbKeyval.createStore("bench-get-keyval", "kv");
  await run("idb-keyval get", (k) => idbKeyval.get(k, store));
  const dexie = new Dexie("bench-get-dexie");
  dexie.version(1).stores({ kv: "" });
  await run("Dexie get", (k) => dexie.table("kv").get(k));
  dexie.close();
  const db = await open("bench-get-ttlkv", { maintenance: "manual" });
  await run("ttlkv", (k) => db.get(k));
  await db.close();
  return rows;
}
