// `node bench/cold-open.mjs [chromium|firefox|webkit] [pages] [split]`: where the cold open + first get of
// `npm run bench` spends its time, in one browser engine (Chromium by default). A first page fills
// a database with 100,000 keys of 100-byte strings, flushed and compacted, as the bench does; then
// each of `pages` fresh pages (5 by default) loads the engine, opens the database and reads one key,
// with the browser's own calls wrapped to stamp when each started and ended: the Web Lock request
// and grant, `indexedDB.open`, every IndexedDB transaction from its creation to its `complete`
// and every request from its issue to its `success`; then opens and reads the same again in the
// same page, which is the open without its first-run costs (the engine compiled, its code run
// once). Prints, per phase, the median over the pages in ms [lowest–highest], then the timeline
// of the middle page. An open that fails says what IndexedDB delivered to the page for each SST
// metadata page and what is stored under each key (how the WebKit fault in docs/performance.md
// was pinned down; a loop of WebKit runs reproduces it).
// Explains the cold-open rows of docs/performance.md. Needs the package built
// (`bash scripts/build-package.sh`) and the e2e packages installed.
import { withBenchPages } from "./in-page.mjs";

const engine = process.argv[2] ?? "chromium";
const pages = Number(process.argv[3] ?? 5);
// "split": the engine loaded in steps instead of init({ url })'s one streaming step: fetched
// (until the response's headers, then its body), compiled by WebAssembly.compile, and handed to
// init({ module }) to instantiate; and before the cold open, untimed by it, a fetch of a small
// file from the same server (what any fetch from it costs this page).
const split = process.argv[4] === "split";
const KEYS = 100_000;

const runs = await withBenchPages(engine, async (page) => {
  const inPage = (what, p, fn) =>
    p.evaluate(fn, KEYS).catch((e) => {
      throw new Error(`${engine}, ${what}: ${e.message}`, { cause: e });
    });
  const first = await page();
  await inPage("the page that fills the database", first, fill);
  await first.close();
  const out = [];
  for (let i = 0; i < pages; i++) {
    const p = await page();
    out.push(await p.evaluate(coldOpen, KEYS, split).catch((e) => {
      throw new Error(`${engine}, cold page ${i + 1}: ${e.message}`, { cause: e });
    }));
    await p.close();
  }
  return out;
});
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const name of Object.keys(runs[0].phases)) {
  const xs = runs.map((r) => r.phases[name]);
  console.log(`${engine} ${name.padEnd(46)} ${median(xs).toFixed(2)} ms [${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}]`);
}
console.log(`${engine} metadata pages an open read again: ${runs.reduce((sum, r) => sum + r.readAgain, 0)} (in ${runs.length * 2} opens)`);
console.log(`\none page's timeline (ms from the start of the cold open):`);
for (const e of runs[Math.floor(runs.length / 2)].timeline) console.log(`  ${e.start.toFixed(2).padStart(7)} → ${e.end.toFixed(2).padStart(7)}  ${e.what}`);

/** In the first page: the database the cold opens read, written as `npm run bench` writes it. */
async function fill(count) {
  const { open, destroy } = await import("ttlkv");
  await destroy("cold-open-probe").catch(() => {});
  const db = await open("cold-open-probe", { maintenance: "manual" });
  const key = (i) => `key:${String(i).padStart(8, "0")}`;
  for (let i = 0; i < count; i += 1000) {
    const ops = [];
    for (let j = i; j < Math.min(i + 1000, count); j++) ops.push({ type: "put", key: key(j), value: `${j}`.padEnd(100, "x") });
    await db.batch(ops);
  }
  await db.flush();
  await db.compact();
  await db.close();
}

/** In a fresh page: the cold open + first get, its phases and the timeline of its browser calls. */
async function coldOpen(count, split) {
  const { init, open } = await import("ttlkv");
  const timeline = [];
  // Reads of each metadata page by the open under way: an open reads a page that fails its check
  // a second time before it reports CORRUPTION (src/engine/recovery.rs); `readAgain` counts them.
  const metaReads = new Map();
  let readAgain = 0;
  const tallyReadAgain = () => (readAgain += [...metaReads.values()].filter((n) => n > 1).length);
  let t0 = 0;
  const stamp = (what) => {
    const e = { what, start: performance.now() - t0, end: NaN };
    timeline.push(e);
    return (note = "") => {
      e.end = performance.now() - t0;
      e.what += note;
    };
  };
  const locks = Object.getPrototypeOf(navigator.locks);
  const request = locks.request;
  locks.request = function (name, options, callback) {
    const cb = typeof options === "function" ? options : callback;
    const opts = typeof options === "function" ? {} : options;
    const granted = stamp(`Web Lock ${name}: request → grant`);
    return request.call(this, name, opts, (lock) => {
      granted();
      return cb(lock);
    });
  };
  const factory = Object.getPrototypeOf(indexedDB);
  const openIdb = factory.open;
  factory.open = function (...args) {
    const r = openIdb.apply(this, args);
    const done = stamp(`indexedDB.open ${args[0]}`);
    r.addEventListener("success", () => done());
    r.addEventListener("error", () => done());
    return r;
  };
  const transaction = IDBDatabase.prototype.transaction;
  IDBDatabase.prototype.transaction = function (stores, mode, ...rest) {
    const tx = transaction.call(this, stores, mode, ...rest);
    const names = [].concat(stores).join("+");
    const done = stamp(`transaction ${mode ?? "readonly"} [${names}]`);
    tx.addEventListener("complete", () => done());
    tx.addEventListener("abort", () => done(" (aborted)"));
    return tx;
  };
  for (const method of ["get", "getAll", "getAllKeys", "put", "delete"]) {
    const original = IDBObjectStore.prototype[method];
    IDBObjectStore.prototype[method] = function (...args) {
      const r = original.apply(this, args);
      // put(value, key) names its key second; the others take the key or range first.
      const target = method === "put" ? args[1] : args[0];
      const arg = target instanceof IDBKeyRange ? `${target.lower}…${target.upper}` : String(target);
      const done = stamp(`  ${this.name}.${method}(${arg.slice(0, 40)})`);
      if (method === "get" && this.name === "pages" && arg.startsWith("m/")) metaReads.set(arg, (metaReads.get(arg) ?? 0) + 1);
      r.addEventListener("success", () => {
        const result = r.result;
        const sst = result instanceof Uint8Array ? sstNamed(result) : undefined;
        if (sst !== undefined) done(`: ${result.byteLength} B naming SST ${sst}`);
        else if (result?.byteLength !== undefined) done(`: ${result.byteLength} B`);
        else if (Array.isArray(result)) done(`: ${result.length} keys or values`);
        else done();
      });
      return r;
    };
  }
  const k = `key:${String(Math.floor(count / 2)).padStart(8, "0")}`;
  const wasmUrl = new URL("/ttlkv/bindings/js/dist/pkg/ttlkv_web_bg.wasm", location.href);
  let smallFetch = NaN;
  if (split) {
    const s = performance.now();
    await (await fetch("/ttlkv/package.json")).arrayBuffer();
    smallFetch = performance.now() - s;
  }
  t0 = performance.now();
  const loaded = stamp("init(): fetch, compile, instantiate");
  if (split) {
    const headers = stamp("  fetch: until the headers");
    const response = await fetch(wasmUrl);
    headers();
    const body = stamp("  fetch: the body");
    const bytes = await response.arrayBuffer();
    body();
    const compiling = stamp("  WebAssembly.compile");
    const module = await WebAssembly.compile(bytes);
    compiling();
    const instantiating = stamp("  init({ module }): instantiate");
    await init({ module });
    instantiating();
  } else {
    await init({ url: wasmUrl });
  }
  loaded();
  const opened = stamp("open()");
  // A failed open says what IndexedDB delivered to this page for each metadata page it read, and
  // what is stored under each metadata page's key (read back here, past the engine).
  const failed = (what) => async (e) => {
    const delivered = timeline.filter((x) => x.what.includes("naming SST")).slice(-12).map((x) => x.what.trim());
    let stored = [];
    try {
      const raw = await answer(indexedDB.open("ttlkv:cold-open-probe"));
      const pages = () => raw.transaction("pages").objectStore("pages");
      for (const key of await answer(pages().getAllKeys(IDBKeyRange.bound("m/", "m/~")))) {
        stored.push(`${key} names SST ${sstNamed(await answer(pages().get(key)))}`);
      }
      raw.close();
    } catch (r) {
      stored = [`(could not be read: ${r})`];
    }
    throw new Error(`${what}: ${e.code ?? e.name}: ${e.message}\n  delivered to the page: ${delivered.join("; ")}\n  stored: ${stored.join("; ")}`);
  };
  metaReads.clear();
  const db = await open("cold-open-probe", { maintenance: "manual" }).catch(failed("the first open"));
  opened();
  tallyReadAgain();
  const got = stamp("first get()");
  const v = await db.get(k);
  got();
  if (!v?.startsWith(String(Math.floor(count / 2)))) throw new Error(`read ${v}`);
  const closed = stamp("close()");
  await db.close();
  closed();
  // The same again in this page, the engine loaded and run once: what the open costs without
  // any first-run work (compiling, allocating the engine's memory, JIT warm-up).
  const again = performance.now();
  metaReads.clear();
  const db2 = await open("cold-open-probe", { maintenance: "manual" }).catch(failed("the second open"));
  const reopened = performance.now();
  tallyReadAgain();
  await db2.get(k);
  const regot = performance.now();
  await db2.close();
  const phase = (prefix) => {
    const e = timeline.find((x) => x.what.startsWith(prefix));
    return e ? e.end - e.start : NaN;
  };
  const total = timeline.find((x) => x.what === "first get()").end;
  const openEnd = timeline.find((x) => x.what === "open()").end;
  const requests = timeline.filter((x) => x.what.startsWith("  ") && x.what.includes(".") && x.start < openEnd && x.start >= timeline.find((y) => y.what.startsWith("open()")).start);
  return {
    phases: {
      "cold open + first get": total,
      "init(): fetch, compile, instantiate": phase("init()"),
      ...(split
        ? {
            "  fetch: until the headers": phase("  fetch: until"),
            "  fetch: the body": phase("  fetch: the body"),
            "  WebAssembly.compile": phase("  WebAssembly.compile"),
            "  init({ module }): instantiate": phase("  init({ module })"),
            "a small file's fetch from the same server, before": smallFetch,
          }
        : {}),
      "open()": phase("open()"),
      "  of which waiting for the Web Lock": phase("Web Lock"),
      "  of which waiting for indexedDB.open": phase("indexedDB.open"),
      "  of which IndexedDB requests in flight": union(requests.map((x) => ({ start: x.start, end: Math.min(x.end, openEnd) }))),
      "first get()": phase("first get()"),
      "close()": phase("close()"),
      "second open() in the same page": reopened - again,
      "second open()'s first get()": regot - reopened,
    },
    timeline,
    readAgain,
  };

  /** The SST id a metadata page names (after its magic "TKVS" and 8 bytes, a u64 LE), if it is one. */
  function sstNamed(bytes) {
    const magic = bytes.byteLength >= 20 && String.fromCharCode(...bytes.subarray(0, 4)) === "TKVS";
    return magic ? new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(12, true) : undefined;
  }

  function answer(r) {
    return new Promise((resolve, reject) => {
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
  }

  /** How long at least one of the intervals `xs` was open. */
  function union(xs) {
    let sum = 0;
    let reach = -Infinity;
    for (const { start, end } of [...xs].sort((a, b) => a.start - b.start)) {
      if (end > reach) {
        sum += end - Math.max(start, reach);
        reach = end;
      }
    }
    return sum;
  }
}
