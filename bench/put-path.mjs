// `node bench/put-path.mjs [chromium|firefox|webkit] [namespaces]`: where a durable single put's
// time goes on IndexedDB, in one browser engine (Chromium by default), on a ttlkv database whose
// manifest names `namespaces` namespaces (0 by default; each made by a put of one key into it,
// before anything is timed: about 41 bytes of manifest each). 2,000 rounds, each one awaited call
// of every probe in turn (the order rotating), then each probe's p50 and p90 in ms:
// - a raw put: one transaction on one store, one put (the bench's raw IndexedDB peer);
// - a raw transaction shaped as ttlkv's WAL commit: the pages and meta stores, the count of the
//   manifest's version in meta's index, one page put, the count checked in its own handler, the
//   transaction left to commit by itself (no `commit()`, as ttlkv since 2043357);
// - a ttlkv durable put (the package, maintenance manual).
// The second minus the first is the commit's shape; the third minus the second is the put's path
// through the package and the engine. Then 2,000 more ttlkv puts alone, each timed at the events
// of its commit (IndexedDB's prototypes wrapped to note when the transaction is made, when the
// check's count answers, when `complete` fires): the p50 of each phase. Explains the durable-put rows of docs/performance.md.
// Needs the package built (`bash scripts/build-package.sh`) and the e2e packages installed.
import { inBenchPage } from "./in-page.mjs";

const engine = process.argv[2] ?? "chromium";
const namespaces = Number(process.argv[3] ?? 0);
const out = await inBenchPage(engine, probe, namespaces);
const { phases, ...probes } = out;
for (const [name, { p50, p90 }] of Object.entries(probes)) console.log(`${engine} ${name.padEnd(44)} p50 ${p50} ms, p90 ${p90} ms`);
console.log(`${engine} a ttlkv durable put alone, p50 of each phase:`);
for (const [name, p50] of Object.entries(phases)) console.log(`${engine}   ${name.padEnd(42)} ${p50} ms`);

/** In the page: p50 and p90 (ms) of each probe, and the p50 (ms) of each phase of a ttlkv put. */
async function probe(namespaces) {
  const { open, destroy } = await import("ttlkv");
  const request = (r) => new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
  const done = (tx) => new Promise((resolve, reject) => {
    tx.oncomplete = resolve;
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
  await new Promise((resolve) => {
    const r = indexedDB.deleteDatabase("put-path-raw");
    r.onsuccess = r.onerror = resolve;
  });
  await destroy("put-path-ttlkv").catch(() => {});
  const opening = indexedDB.open("put-path-raw", 1);
  opening.onupgradeneeded = () => {
    opening.result.createObjectStore("pages");
    opening.result.createObjectStore("meta").createIndex("version", "version");
  };
  const raw = await request(opening);
  await request(raw.transaction("meta", "readwrite").objectStore("meta").put({ version: 5, bytes: new Uint8Array(200) }, "manifest"));
  const db = await open("put-path-ttlkv", { maintenance: "manual" });
  for (let i = 0; i < namespaces; i++) await db.namespace(`ns-${String(i).padStart(6, "0")}`).put("k", "v");
  const value = "x".repeat(100);
  const walPage = new Uint8Array(180);
  const probes = {
    "raw put, one store": async (i) => {
      const tx = raw.transaction("pages", "readwrite");
      tx.objectStore("pages").put(value, `k${i}`);
      await done(tx);
    },
    "raw transaction shaped as a WAL commit": async (i) => {
      const tx = raw.transaction(["pages", "meta"], "readwrite");
      const count = tx.objectStore("meta").index("version").count(5);
      count.addEventListener("success", () => count.result !== 1 && tx.abort());
      tx.objectStore("pages").put(walPage, `w${i}`);
      await done(tx);
    },
    "ttlkv durable put": (i) => db.put(`k${i}`, value),
  };
  const names = Object.keys(probes);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  for (let i = 0; i < 2000; i++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(i + j) % names.length];
      const started = performance.now();
      await probes[name](i);
      times[name].push(performance.now() - started);
    }
  }
  const out = {};
  for (const name of names) {
    const sorted = times[name].sort((a, b) => a - b);
    out[name] = { p50: sorted[1000].toFixed(3), p90: sorted[1800].toFixed(3) };
  }
  out.phases = await phasesOfPut(db, value);
  await db.close();
  await destroy("put-path-ttlkv");
  raw.close();
  return out;

  /**
   * In the page: the p50 (ms) of each phase of 2,000 durable puts on `db`, from the events of each
   * put's one commit transaction. IndexedDB's prototypes are wrapped for this only (the probes
   * above ran before), and the wrapping's own cost falls within the phases.
   */
  async function phasesOfPut(db, value) {
    let at = {};
    const wrap = (proto, name, note) => {
      const original = proto[name];
      proto[name] = function (...args) {
        const result = original.apply(this, args);
        note(result);
        return result;
      };
      return () => (proto[name] = original);
    };
    const unwrap = [
      wrap(IDBDatabase.prototype, "transaction", (tx) => {
        at.transaction = performance.now();
        tx.addEventListener("complete", () => (at.complete = performance.now()));
      }),
      ...[IDBIndex.prototype, IDBObjectStore.prototype].map((proto) =>
        wrap(proto, "count", (request) => {
          request.addEventListener("success", () => (at.manifest = performance.now()));
        }),
      ),
    ];
    const phases = {
      "the call, until its transaction is made": [],
      "until the check's count answers": [],
      "from the count's answer until the transaction completes": [],
      "until the put's Promise settles": [],
    };
    try {
      for (let i = 0; i < 2000; i++) {
        at = {};
        const started = performance.now();
        await db.put(`phase${i}`, value);
        const settled = performance.now();
        const spans = [at.transaction - started, at.manifest - at.transaction, at.complete - at.manifest, settled - at.complete];
        Object.values(phases).forEach((list, j) => list.push(spans[j]));
      }
    } finally {
      for (const undo of unwrap) undo();
    }
    return Object.fromEntries(Object.entries(phases).map(([name, list]) => [name, list.sort((a, b) => a - b)[1000].toFixed(3)]));
  }
}
