// `node bench/put-path.mjs [chromium|firefox|webkit]`: where a durable single put's time goes on
// IndexedDB, in one browser engine (Chromium by default). 2,000 rounds, each one awaited call of
// every probe in turn (the order rotating), then each probe's p50 and p90 in ms:
// - a raw put: one transaction on one store, one put (the bench's raw IndexedDB peer);
// - a raw transaction shaped as ttlkv's WAL commit: the pages and meta stores, the manifest read,
//   one page put, the read awaited before the transaction completes;
// - a ttlkv durable put (the package, maintenance manual).
// The second minus the first is the commit's shape; the third minus the second is the put's path
// through the package and the engine. Explains the durable-put rows of docs/performance.md.
// Needs the package built (`bash scripts/build-package.sh`) and the e2e packages installed.
import { inBenchPage } from "./in-page.mjs";

const engine = process.argv[2] ?? "chromium";
const out = await inBenchPage(engine, probe);
for (const [name, { p50, p90 }] of Object.entries(out)) console.log(`${engine} ${name.padEnd(44)} p50 ${p50} ms, p90 ${p90} ms`);

/** In the page: p50 and p90 (ms) of each probe. */
async function probe() {
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
    opening.result.createObjectStore("meta");
  };
  const raw = await request(opening);
  await request(raw.transaction("meta", "readwrite").objectStore("meta").put(new Uint8Array(200), "manifest"));
  const db = await open("put-path-ttlkv", { maintenance: "manual" });
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
      const manifest = request(tx.objectStore("meta").get("manifest"));
      tx.objectStore("pages").put(walPage, `w${i}`);
      await manifest;
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
  await db.close();
  await destroy("put-path-ttlkv");
  raw.close();
  const out = {};
  for (const name of names) {
    const sorted = times[name].sort((a, b) => a - b);
    out[name] = { p50: sorted[1000].toFixed(3), p90: sorted[1800].toFixed(3) };
  }
  return out;
}
