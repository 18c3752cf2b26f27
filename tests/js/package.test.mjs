// The npm package's API (index.d.ts) on Node: memory storage and a page-store adapter, on a fake
// clock. Build first: `bash scripts/build-package.sh`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fsAdapter } from "../../bindings/web/tests/support/fs_adapter.mjs";
// TTLKV_PACKAGE points these tests at an installed copy of the package (the end-to-end tests
// run them against the packed tarball); by default they test the working tree.
import { fakeClock, mapAdapter, T0 } from "./helpers.mjs";
const { open, destroy, init, TtlKvError } = await import(process.env.TTLKV_PACKAGE ?? "../../bindings/js/node.js");

// Garbage collection on demand, for the tests of what is freed when the app drops an object.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");

/** Collect garbage (and let finalizers run) until `done()` holds, or give up after 50 rounds. */
async function collectUntil(done) {
  for (let round = 0; round < 50 && !(await done()); round++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let n = 0;
const fresh = (opts = {}) => {
  const clock = fakeClock();
  const name = `t${n++}`;
  return open(name, { storage: "memory", clock, maintenance: "manual", ...opts }).then((db) => ({ db, clock, name }));
};

async function rejects(promise, code) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof TtlKvError, `not a TtlKvError: ${e}`);
    assert.ok(e instanceof Error);
    assert.equal(e.name, "TtlKvError");
    assert.equal(e.code, code, e.message);
    return true;
  });
}

test("values keep their type: string, Uint8Array, JSON", async () => {
  const { db } = await fresh();
  await db.put("s", "hello");
  await db.put("b", new Uint8Array([1, 2, 3]));
  await db.put("j", { a: [1, 2.5, null, true], b: { c: "d" } });
  await db.put("n", 42);
  await db.put("z", null);
  assert.equal(await db.get("s"), "hello");
  assert.deepEqual(await db.get("b"), new Uint8Array([1, 2, 3]));
  assert.deepEqual(await db.get("j"), { a: [1, 2.5, null, true], b: { c: "d" } });
  assert.equal(await db.get("n"), 42);
  assert.equal(await db.get("z"), null);
  assert.equal(await db.get("missing"), undefined);
});

test("every read gives each kind of value back alike, from the memtable, an SST and an adapter", async () => {
  // Text values come out of the engine decoded, other values as tagged bytes: each read path
  // must give the same value, and a leading U+FEFF is text, not a byte-order mark to drop.
  const values = {
    s: "hello",
    empty: "",
    bom: "\uFEFFafter a BOM",
    wide: "h\u00e9llo \u{1F600}",
    b: new Uint8Array([0, 2, 255]),
    nob: new Uint8Array(0),
    j: { a: [1, 2.5, null, true], "\uFEFFk": "\uFEFFv" },
    n: 42,
    z: null,
    f: false,
  };
  for (const opts of [{}, { storage: mapAdapter() }]) {
    const { db } = await fresh(opts);
    for (const [k, v] of Object.entries(values)) await db.put(`\uFEFF${k}`, v);
    for (const stage of ["memtable", "sst"]) {
      if (stage === "sst") await db.flush();
      const snap = await db.snapshot();
      const scanned = [];
      for await (const e of db.scan()) scanned.push([e.key, e.value]);
      assert.deepEqual(scanned, Object.entries(values).map(([k, v]) => [`\uFEFF${k}`, v]).sort(([a], [b]) => (a < b ? -1 : 1)), stage);
      assert.deepEqual(await db.getMany(Object.keys(values).map((k) => `\uFEFF${k}`)), Object.values(values), stage);
      for (const [k, v] of Object.entries(values)) {
        assert.deepEqual(await db.get(`\uFEFF${k}`), v, `${stage} get ${k}`);
        assert.deepEqual(await snap.get(`\uFEFF${k}`), v, `${stage} snapshot get ${k}`);
        assert.deepEqual((await db.getEntry(`\uFEFF${k}`)).value, v, `${stage} getEntry ${k}`);
        assert.deepEqual(await db.getEx(`\uFEFF${k}`, { ttlMs: 60_000 }), v, `${stage} getEx ${k}`);
      }
      snap.release();
    }
    await db.close();
  }
});

test("__proto__ keys round-trip as plain data and touch no prototype", async () => {
  const { db } = await fresh();
  const value = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}');
  await db.put("p", value);
  const back = await db.get("p");
  assert.equal(({}).polluted, undefined);
  assert.equal(Object.getPrototypeOf(back), Object.prototype);
  assert.deepEqual(Object.keys(back), ["__proto__", "x"]);
  assert.equal(back.polluted, undefined);
});

test("a JSON value is read once: what passed the check is what is stored, whatever its getters and proxies answer next", async () => {
  // Checked and then encoded by a second read, a getter's second answer was stored: 1 then NaN
  // was stored as null, 2 then a Date as the date's text, [2] then undefined as nothing at all.
  const { db } = await fresh();
  const answers = (first, then) => {
    let reads = 0;
    return { get reads() { return reads; }, next: () => (reads++ === 0 ? first : then) };
  };
  for (const [first, then] of [[1, NaN], [2, new Date(0)], [[2], undefined], ["s", () => 1]]) {
    const x = answers(first, then);
    await db.put("getter", { a: 1, get x() { return x.next(); } });
    assert.deepEqual(await db.get("getter"), { a: 1, x: first });
    assert.equal(x.reads, 1);
    const y = answers(first, then);
    await db.batch([{ type: "put", key: "batched", value: [0, { get y() { return y.next(); } }] }]);
    assert.deepEqual(await db.get("batched"), [0, { y: first }]);
    assert.equal(y.reads, 1);
  }
  // The first answer is the one judged: a bad one is refused, and nothing is stored.
  const bad = answers(NaN, 1);
  await rejects(db.put("bad", { get x() { return bad.next(); } }), "INVALID_ARGUMENT");
  assert.equal(await db.get("bad"), undefined);
  // A proxy's traps: each property is read once.
  const gets = [];
  const proxy = new Proxy({ n: 1, list: [1, 2] }, { get: (target, k, receiver) => (gets.push(k), Reflect.get(target, k, receiver)) });
  await db.put("proxy", proxy);
  assert.deepEqual(await db.get("proxy"), { n: 1, list: [1, 2] });
  assert.deepEqual(gets, ["toJSON", "n", "list"]);
});

test("options are read once: the checks and the call see the same answers, whatever a getter says next", async () => {
  // `answers(first, then)`: a getter's answers, the first one and every later one, with a count.
  const answers = (first, then) => {
    let reads = 0;
    return { get reads() { return reads; }, next: () => (reads++ === 0 ? first : then) };
  };
  const { db, clock, name } = await fresh();
  // A put's: ttlMs absent when the one-of check looked, then 1,000: the put took it over expireAt.
  const ttlMs = answers(undefined, 1_000);
  await db.put("k", "v", { expireAt: clock() + 50_000, get ttlMs() { return ttlMs.next(); } });
  assert.equal(await db.ttl("k"), 50_000);
  assert.equal(ttlMs.reads, 1);
  // A scan's: a limit of 2 when checked, then 0: the scan returned nothing.
  for (const key of ["a", "b", "c"]) await db.put(key, key);
  const limit = answers(2, 0);
  const got = [];
  for await (const entry of db.scan({ get limit() { return limit.next(); } })) got.push(entry.key);
  assert.deepEqual(got, ["a", "b"]);
  assert.equal(limit.reads, 1);
  await db.close();
  // open's: a default TTL of 1,000 when checked, then -5 (the engine was handed that, and the
  // open failed); and the expire hook is the one open was given, not the one the app's object
  // names later.
  const defaultTtlMs = answers(1_000, -5);
  const heard = [];
  const options = { storage: "memory", clock, maintenance: "manual", get defaultTtlMs() { return defaultTtlMs.next(); }, onExpire: ({ key }) => void heard.push(`given ${key}`) };
  const again = await open(name, options);
  options.onExpire = ({ key }) => void heard.push(`changed ${key}`);
  await again.put("short", "v");
  assert.equal(await again.ttl("short"), 1_000);
  assert.equal(defaultTtlMs.reads, 1);
  clock.advance(1_001);
  await again.purgeExpired();
  assert.ok(heard.includes("given short") && !heard.some((h) => h.startsWith("changed")), heard.join(", "));
  await again.close();
  // The hook is called as a method of the app's options object: a class's hook reaches its own.
  class Renewing {
    storage = "memory";
    maintenance = "manual";
    clock = clock;
    #renewed = [];
    get renewed() {
      return this.#renewed;
    }
    onExpire({ key, value }) {
      this.#renewed.push(key);
      return { value: `${value}!`, ttlMs: 1_000 };
    }
  }
  const renewing = new Renewing();
  const third = await open(`${name}-hook`, renewing);
  await third.put("r", "v", { ttlMs: 10 });
  clock.advance(11);
  await third.purgeExpired();
  assert.deepEqual(renewing.renewed, ["r"]);
  assert.equal(await third.get("r"), "v!");
  await third.close();
});

test("a JSON value's copy defines its properties: a setter on Object.prototype, or the prototype frozen, changes nothing stored", async () => {
  // Assigned into the copy, a property Object.prototype has an accessor for went to its setter
  // and was left out, and with the prototype frozen a key such as toString was refused.
  const { db } = await fresh();
  const taken = [];
  Object.defineProperty(Object.prototype, "ttlkvTestId", { get() { return undefined; }, set(v) { taken.push(v); }, configurable: true });
  try {
    await db.put("k", { ttlkvTestId: 42, name: "a", nested: [{ ttlkvTestId: 7 }] });
    assert.deepEqual(JSON.parse(JSON.stringify(await db.get("k"))), { ttlkvTestId: 42, name: "a", nested: [{ ttlkvTestId: 7 }] });
    assert.deepEqual(taken, []);
  } finally {
    delete Object.prototype.ttlkvTestId;
  }
  const entry = process.env.TTLKV_PACKAGE ?? new URL("../../bindings/js/node.js", import.meta.url).href;
  const script = `
    const { open } = await import(${JSON.stringify(entry)});
    Object.freeze(Object.prototype);
    const db = await open("frozen", { storage: "memory", maintenance: "manual" });
    await db.put("k", { toString: "x", constructor: 1, valueOf: [true], hasOwnProperty: { a: 1 } });
    console.log(JSON.stringify(await db.get("k")));
    await db.close();
  `;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(child.status, 0, `the process died: ${child.stderr}`);
  assert.deepEqual(JSON.parse(child.stdout), { toString: "x", constructor: 1, valueOf: [true], hasOwnProperty: { a: 1 } });
});

test("a JSON value's toJSON method is called once, as JSON.stringify calls it, and its answer is checked as any value", async () => {
  // After 9d8e967 toJSON was left out and the value stored as itself; before it, JSON.stringify
  // stored toJSON's answer unchecked (NaN as null).
  const { db } = await fresh();
  let calls = 0;
  const keys = [];
  const answering = (answer) => {
    const value = [1, 2];
    Object.defineProperty(value, "toJSON", { value: (key) => (calls++, keys.push(key), answer), enumerable: false });
    return value;
  };
  await db.put("k", { list: answering([3, 4]), inArray: [answering({ b: 2 })] });
  assert.deepEqual(await db.get("k"), { list: [3, 4], inArray: [{ b: 2 }] });
  assert.equal(calls, 2);
  assert.deepEqual(keys, ["list", "0"]);
  class Tagged extends Array {
    toJSON() { return { tagged: [...this] }; }
  }
  await db.batch([{ type: "put", key: "tagged", value: Tagged.from([5]) }]);
  assert.deepEqual(await db.get("tagged"), { tagged: [5] });
  // An answer that is not JSON is refused, and nothing is written.
  for (const answer of [NaN, undefined, () => 1, new Date(0), { nested: NaN }]) {
    await rejects(db.put("bad", answering(answer)), "INVALID_ARGUMENT");
    await rejects(db.batch([{ type: "put", key: "bad", value: { a: answering(answer) } }]), "INVALID_ARGUMENT");
  }
  assert.equal(await db.get("bad"), undefined);
  // A class instance is refused before its toJSON is asked, a Date too.
  await rejects(db.put("date", new Date(0)), "INVALID_ARGUMENT");
});

test("a key or value given as bytes is copied when the call is made: its array changed later, or a length it lies about, changes nothing stored", async () => {
  const { db, clock } = await fresh();
  // A key changed by an option's getter, read after the key.
  const key = new Uint8Array([7, 7, 7]);
  await db.put(key, "v", { get ttlMs() { key[0] = 9; return 1_000; } });
  assert.equal(await db.get(new Uint8Array([7, 7, 7])), "v");
  assert.equal(await db.get(new Uint8Array([9, 7, 7])), undefined);
  // A namespace's call reaches the engine after it returns.
  const ns = db.namespace("bytes");
  const later = new Uint8Array([1]);
  const put = ns.put(later, "x");
  later[0] = 2;
  await put;
  assert.equal(await ns.get(new Uint8Array([1])), "x");
  assert.equal(await ns.get(new Uint8Array([2])), undefined);
  // A scan's bounds, changed while the scan goes on (it reads in pages of its own), or lying
  // about their length (an empty prefix bounds nothing; this one is not empty).
  for (let i = 0; i < 600; i++) await db.put(`${i < 300 ? "a" : "b"}${String(i).padStart(4, "0")}`, "v");
  const prefix = new TextEncoder().encode("a");
  let seen = 0;
  for await (const entry of db.scan({ prefix })) {
    assert.ok(entry.key.startsWith("a"), entry.key);
    if (++seen === 10) prefix[0] = 0x62;
  }
  assert.equal(seen, 300);
  class Short extends Uint8Array {
    get length() { return 0; }
  }
  let shortSeen = 0;
  for await (const entry of db.scan({ prefix: new Short([0x61]) })) {
    assert.ok(entry.key.startsWith("a"), entry.key);
    shortSeen++;
  }
  assert.equal(shortSeen, 300);
  // A value whose length says 5, then 40: what is stored is its 5 bytes.
  class Lying extends Uint8Array {
    #reads = 0;
    get length() { return this.#reads++ === 0 ? 5 : 40; }
  }
  await db.put("lying", new Lying([1, 2, 3, 4, 5]));
  assert.deepEqual(await db.get("lying"), new Uint8Array([1, 2, 3, 4, 5]));
  await db.batch([{ type: "put", key: "lying", value: new Lying([5, 4, 3, 2, 1]) }]);
  assert.deepEqual(await db.get("lying"), new Uint8Array([5, 4, 3, 2, 1]));
  void clock;
});

test("a string key or value with a lone surrogate is INVALID_ARGUMENT and writes nothing; one with a surrogate pair round-trips", async () => {
  // A lone surrogate has no UTF-8: encoded as U+FFFD, "\uDC00" and "\uFFFD" were one key.
  const { db } = await fresh();
  const lone = ["\uDC00", "\uD800", "a\uD83D", "\uDE00b", "x".repeat(200) + "\uD800"];
  for (const s of lone) {
    await rejects(db.put(s, "v"), "INVALID_ARGUMENT");
    await rejects(db.put("k", s), "INVALID_ARGUMENT");
    await rejects(db.get(s), "INVALID_ARGUMENT");
    await rejects(db.getMany(["k", s]), "INVALID_ARGUMENT");
    await rejects(db.batch([{ type: "put", key: "b", value: s }]), "INVALID_ARGUMENT");
    await rejects(db.batch([{ type: "put", key: s, value: 1 }]), "INVALID_ARGUMENT");
    await rejects(db.delete(s), "INVALID_ARGUMENT");
  }
  await rejects(db.put("big", "y".repeat(100_000) + "\uDC00"), "INVALID_ARGUMENT");
  // Nor are names: "x\uD800" and "x\uFFFD" were one database, and one namespace.
  await rejects(open("x\uD800", { storage: "memory" }), "INVALID_ARGUMENT");
  await rejects(destroy("x\uD800", { storage: "memory" }), "INVALID_ARGUMENT");
  assert.throws(() => db.namespace("\uDC00"), (e) => e instanceof TtlKvError && e.code === "INVALID_ARGUMENT");
  await rejects(db.dropNamespace("\uDC00"), "INVALID_ARGUMENT");
  assert.equal(await db.get("\uFFFD"), undefined);
  const written = [];
  for await (const e of db.scan()) written.push(e.key);
  assert.deepEqual(written, [], "nothing was written");
  const pair = "\uD83D\uDE00 and 日本";
  await db.put(pair, pair);
  assert.equal(await db.get(pair), pair);
  assert.deepEqual(await db.getEntry(pair), { key: pair, value: pair, expireAt: null });
  // Inside JSON a lone surrogate is written as its escape, and comes back as it was.
  await db.put("json", { s: "\uDC00" });
  assert.deepEqual(await db.get("json"), { s: "\uDC00" });
});

test("a string key and its UTF-8 bytes are the same key; entries give keys back by type", async () => {
  const { db } = await fresh();
  await db.put("k", "v");
  assert.equal(await db.get(new TextEncoder().encode("k")), "v");
  await db.put(new Uint8Array([0xff]), "bin");
  const entries = [];
  for await (const e of db.scan()) entries.push(e);
  assert.deepEqual(entries.map((e) => e.key), ["k", new Uint8Array([0xff])]);
  assert.deepEqual(await db.getEntry("k"), { key: "k", value: "v", expireAt: null });
  // getEntry gives the key back by the type it was written with, like scan.
  assert.deepEqual(await db.getEntry(new TextEncoder().encode("k")), { key: "k", value: "v", expireAt: null });
  assert.deepEqual((await db.getEntry(new Uint8Array([0xff]))).key, new Uint8Array([0xff]));
  const snap = await db.snapshot();
  assert.equal((await snap.getEntry(new TextEncoder().encode("k"))).key, "k");
  snap.release();
  // An empty prefix or start bounds nothing.
  for (const opts of [{ prefix: "" }, { start: "" }, { prefix: new Uint8Array(0) }]) {
    const keys = [];
    for await (const e of db.scan(opts)) keys.push(e.key);
    assert.deepEqual(keys, ["k", new Uint8Array([0xff])], JSON.stringify(opts));
  }
});

test("values of exactly 16 MiB are accepted, one byte more is VALUE_TOO_LARGE", async () => {
  const { db } = await fresh();
  const limit = 16 * 1024 * 1024;
  assert.equal(await db.put("bytes", new Uint8Array(limit).fill(7)), true);
  assert.equal((await db.get("bytes")).length, limit);
  assert.equal(await db.put("text", "x".repeat(limit)), true);
  await rejects(db.put("bytes", new Uint8Array(limit + 1)), "VALUE_TOO_LARGE");
  await rejects(db.put("text", "x".repeat(limit + 1)), "VALUE_TOO_LARGE");
  await rejects(db.batch([{ type: "put", key: "b", value: new Uint8Array(limit + 1) }]), "VALUE_TOO_LARGE");
  assert.equal((await db.get("bytes")).length, limit, "the refused put changed nothing");
});

test("a string too long to store is refused by its size in UTF-8, counted exactly, by put, batch and get alike", async () => {
  // Past the limit in UTF-16 units a string is too large whatever it holds, and is refused by
  // its counted size without being encoded first.
  const { db } = await fresh();
  const limit = 16 * 1024 * 1024;
  const text = "é".repeat(limit) + "😀";
  const expect = (code, size) => (e) => e instanceof TtlKvError && e.code === code && e.message.includes(` of ${size} bytes`);
  await assert.rejects(db.put("k", text), expect("VALUE_TOO_LARGE", 2 * limit + 4));
  await assert.rejects(db.batch([{ type: "put", key: "k", value: text + "\uD800" }]), expect("VALUE_TOO_LARGE", 2 * limit + 4 + 3));
  const key = "é".repeat(4_200) + "😀" + "\uDC00";
  await assert.rejects(db.get(key), expect("KEY_TOO_LARGE", 8_400 + 4 + 3));
  await assert.rejects(db.put(key, 1), expect("KEY_TOO_LARGE", 8_400 + 4 + 3));
  await assert.rejects(db.batch([{ type: "delete", key }]), expect("KEY_TOO_LARGE", 8_400 + 4 + 3));
  assert.equal(await db.has("k"), false);
});

test("getMany refuses a hole in its array of keys as it refuses undefined", async () => {
  const { db } = await fresh();
  await db.put("a", 1);
  await rejects(db.getMany([, "a"]), "INVALID_ARGUMENT"); // eslint-disable-line no-sparse-arrays
  await rejects(db.getMany(new Array(2)), "INVALID_ARGUMENT");
  await rejects(db.getMany([undefined]), "INVALID_ARGUMENT");
  assert.deepEqual(await db.getMany(["a", "b"]), [1, undefined]);
});

test("limits past 2^32 mean what they say: a purge or a snapshot's scan of 2^32 + 1 is not cut to 32 bits", async () => {
  // The engine's bindings took limits as machine words: 2^32 + 1 became 1.
  const { db, clock } = await fresh();
  await db.batch(Array.from({ length: 5 }, (_, i) => ({ type: "put", key: `k${i}`, value: i, ttlMs: 10 })));
  const snap = await db.snapshot();
  const keys = [];
  for await (const e of snap.scan({ limit: 2 ** 32 + 1 })) keys.push(e.key);
  assert.deepEqual(keys, ["k0", "k1", "k2", "k3", "k4"]);
  snap.release();
  clock.advance(10);
  assert.equal(await db.purgeExpired({ limit: 2 ** 32 + 1 }), 5);
  await db.batch(Array.from({ length: 3 }, (_, i) => ({ type: "put", key: `j${i}`, value: i, ttlMs: 10 })));
  clock.advance(10);
  assert.equal(await db.purgeExpired({ limit: 2 ** 32 }), 3, "2^32 is not 0");
});

test("an onExpire replacement with a field it does not know lets the key expire, reported, instead of rewriting it with the default TTL", async () => {
  const reported = [];
  const { error } = console;
  console.error = (...args) => reported.push(args.map(String).join(" "));
  try {
    const { db, clock } = await fresh({ onExpire: ({ value }) => ({ value: `${value} renewed`, ttl: 60_000 }) });
    const heard = [];
    db.on("expire", (e) => heard.push(e.key));
    await db.put("session", "v", { ttlMs: 10 });
    clock.advance(10);
    assert.equal(await db.purgeExpired(), 1);
    assert.equal(await db.get("session"), undefined, "not rewritten without its TTL");
    assert.deepEqual(heard, ["session"]);
    assert.ok(reported.some((r) => /onExpire/.test(r) && /unknown onExpire replacement option "ttl"/.test(r)), reported.join("\n"));
  } finally {
    console.error = error;
  }
});

test("options on Object.prototype are no options: a polluted prototype neither changes the storage nor gives a TTL", async () => {
  Object.prototype.storage = "indexeddb";
  Object.prototype.defaultTtlMs = 1;
  try {
    // With the pollution read, Node (no IndexedDB) would refuse, and every key would expire at once.
    const db = await open(`polluted-${n++}`, { clock: fakeClock(), maintenance: "manual" });
    await db.put("k", "v");
    assert.equal(await db.ttl("k"), -1, "no default TTL");
    await db.close();
  } finally {
    delete Object.prototype.storage;
    delete Object.prototype.defaultTtlMs;
  }
});

test("getMany keeps the order of its keys; stats describes the tree; off removes a listener", async () => {
  const { db, clock } = await fresh();
  await db.put("a", 1);
  await db.put("b", "two", { ttlMs: 1_000 });
  assert.deepEqual(await db.getMany(["b", "missing", "a", "b"]), ["two", undefined, 1, "two"]);
  await db.flush();
  const stats = await db.stats();
  assert.equal(typeof stats.memtableBytes, "number");
  assert.equal(typeof stats.walBytes, "number");
  for (const key of ["cacheBytes", "rowCacheBytes", "rowCacheHits", "rowCacheMisses", "pointIndexBytes"]) assert.equal(typeof stats[key], "number", key);
  const ssts = stats.levels.flatMap((l) => l.ssts);
  assert.ok(ssts.length >= 1);
  for (const key of ["id", "bytes", "rows", "minExpireAt", "maxExpireAt", "expiryPercentiles"]) assert.ok(key in ssts[0], key);
  const seen = [];
  const listener = (e) => seen.push(e.key);
  db.on("expire", listener);
  db.off("expire", listener);
  clock.advance(2_000);
  assert.equal(await db.purgeExpired(), 1);
  assert.deepEqual(seen, [], "a removed listener hears nothing");
  assert.deepEqual(await db.getMany(["a", "b"]), [1, undefined]);
});

test("ttl: expiry on a fake clock, -1 and -2, defaultTtlMs", async () => {
  const { db, clock } = await fresh({ defaultTtlMs: 5_000 });
  await db.put("a", "1", { ttlMs: 1_000 });
  await db.put("d", "2");
  await db.put("p", "3", { noExpiry: true });
  assert.equal(await db.ttl("a"), 1_000);
  assert.equal(await db.ttl("d"), 5_000);
  assert.equal(await db.ttl("p"), -1);
  assert.equal(await db.ttl("none"), -2);
  clock.advance(1_000);
  assert.equal(await db.get("a"), undefined);
  assert.equal(await db.has("a"), false);
  assert.deepEqual(await db.getEntry("d"), { key: "d", value: "2", expireAt: T0 + 5_000 });
});

test("put options: expireAt in the past leaves the key absent; keepTtl; ifAbsent / ifPresent", async () => {
  const { db, clock } = await fresh();
  await db.put("k", "v");
  assert.equal(await db.put("k", "v2", { expireAt: T0 - 1 }), true);
  assert.equal(await db.get("k"), undefined);
  await db.put("t", "1", { ttlMs: 100 });
  clock.advance(40);
  await db.put("t", "2", { keepTtl: true });
  assert.equal(await db.ttl("t"), 60);
  assert.equal(await db.put("t", "3", { ifAbsent: true }), false);
  assert.equal(await db.put("new", "1", { ifPresent: true }), false);
  assert.equal(await db.put("new", "1", { ifAbsent: true }), true);
});

test("expire / expireAt with nx xx gt lt, persist, getEx", async () => {
  const { db, clock } = await fresh();
  await db.put("k", "v");
  assert.equal(await db.expire("k", 100, { gt: true }), false, "no TTL counts as infinite");
  assert.equal(await db.expire("k", 100, { lt: true }), true);
  assert.equal(await db.expire("k", 50, { nx: true }), false);
  assert.equal(await db.expire("k", 200, { xx: true, gt: true }), true);
  assert.equal(await db.expireAt("k", T0 + 150, { lt: true }), true);
  assert.equal(await db.ttl("k"), 150);
  assert.equal(await db.persist("k"), true);
  assert.equal(await db.persist("k"), false);
  assert.equal(await db.getEx("k", { ttlMs: 30 }), "v");
  assert.equal(await db.ttl("k"), 30);
  clock.advance(20);
  assert.equal(await db.getEx("k", { ttlMs: 30 }), "v", "sliding session");
  clock.advance(20);
  assert.equal(await db.get("k"), "v");
  assert.equal(await db.getEx("k", { persist: true }), "v");
  assert.equal(await db.ttl("k"), -1);
  assert.equal(await db.getEx("missing", { ttlMs: 5 }), undefined);
});

test("expire with ms <= 0 deletes the key and tells whether it existed, as PEXPIRE does", async () => {
  const { db } = await fresh();
  await db.put("k", "v");
  await db.put("t", "v", { ttlMs: 60_000 });
  assert.equal(await db.expire("k", 0), true);
  assert.equal(await db.expire("t", -1_000), true);
  assert.deepEqual(await db.getMany(["k", "t"]), [undefined, undefined]);
  assert.equal(await db.expire("k", 0), false, "absent: nothing to delete");
  assert.equal(await db.expire("never", -5), false);
});

test("expire refuses a ttlMs that is not a finite integer", async () => {
  const { db } = await fresh();
  await db.put("k", "v");
  for (const ms of [1.5, -0.5, NaN, Infinity, -Infinity, "10", 2 ** 60, undefined]) await rejects(db.expire("k", ms), "INVALID_ARGUMENT");
  assert.equal(await db.get("k"), "v");
  assert.equal(await db.ttl("k"), -1, "nothing changed");
});

test("a TTL whose expiry a JS number could not hold exactly is INVALID_ARGUMENT; the longest one gives an exact expiry", async () => {
  // The longest TTL: 2^53 - 1 less the last plausible time (the end of the year 9999), so that
  // now + TTL is at most Number.MAX_SAFE_INTEGER for any plausible now. Before, a longer one
  // gave an expiry past it, which getEntry reported rounded and put refused when given back.
  const longest = Number.MAX_SAFE_INTEGER - 253_402_300_799_999;
  const { db } = await fresh();
  await db.put("k", "v");
  for (const ms of [longest + 1, Number.MAX_SAFE_INTEGER]) {
    await rejects(db.put("a", "v", { ttlMs: ms }), "INVALID_ARGUMENT");
    await rejects(db.batch([{ type: "put", key: "a", value: "v", ttlMs: ms }]), "INVALID_ARGUMENT");
    await rejects(db.expire("k", ms), "INVALID_ARGUMENT");
    await rejects(db.getEx("k", { ttlMs: ms }), "INVALID_ARGUMENT");
    await rejects(open(`too-long-${n++}`, { storage: "memory", defaultTtlMs: ms }), "INVALID_ARGUMENT");
    for (const options of [{ defaultTtlMs: ms }, { maxTtlMs: ms }]) {
      assert.throws(() => db.namespace("n", options), (e) => e instanceof TtlKvError && e.code === "INVALID_ARGUMENT");
    }
  }
  assert.equal(await db.get("a"), undefined, "nothing was written");
  assert.equal(await db.ttl("k"), -1, "nothing changed");
  await assert.rejects(db.put("a", "v", { ttlMs: longest + 1 }), (e) => e.message === `ttlMs must be at most ${longest}`);
  await db.put("a", "v", { ttlMs: longest });
  const { expireAt } = await db.getEntry("a");
  assert.equal(expireAt, T0 + longest, "the expiry reads back exactly");
  assert.ok(Number.isSafeInteger(expireAt));
  assert.equal(await db.expire("k", longest), true);
  assert.equal((await db.getEntry("k")).expireAt, T0 + longest);
});

test("getEx with no option is a plain get: the value, and the TTL left as it was", async () => {
  const { db, clock } = await fresh();
  await db.put("k", "v", { ttlMs: 1_000 });
  clock.advance(400);
  assert.equal(await db.getEx("k"), "v");
  assert.equal(await db.getEx("k", {}), "v");
  assert.equal(await db.getEx("k", { ttlMs: undefined }), "v");
  assert.equal(await db.ttl("k"), 600, "the TTL is untouched");
  assert.equal(await db.getEx("missing"), undefined);
  await rejects(db.getEx("k", { ttlMs: 5, persist: true }), "INVALID_ARGUMENT");
  await rejects(db.getEx("k", { persist: false }), "INVALID_ARGUMENT");
});

test("scan: prefix, start/end, reverse, limit, across pages", async () => {
  const { db } = await fresh();
  for (let i = 0; i < 600; i++) await db.put(`user:${String(i).padStart(4, "0")}`, i);
  await db.put("other", 0);
  const keys = async (opts) => {
    const out = [];
    for await (const e of db.scan(opts)) out.push(e.key);
    return out;
  };
  assert.equal((await keys({ prefix: "user:" })).length, 600);
  assert.deepEqual(await keys({ start: "user:0010", end: "user:0013" }), ["user:0010", "user:0011", "user:0012"]);
  assert.deepEqual(await keys({ prefix: "user:", reverse: true, limit: 2 }), ["user:0599", "user:0598"]);
  const all = await keys({ reverse: true });
  assert.equal(all.length, 601);
  assert.equal(all[0], "user:0599");
});

test("batch is atomic: a failed condition writes nothing", async () => {
  const { db } = await fresh();
  await db.batch([
    { type: "put", key: "a", value: 1 },
    { type: "put", key: "b", value: 2, ttlMs: 50 },
    { type: "delete", key: "c" },
  ]);
  assert.equal(await db.get("a"), 1);
  await rejects(db.batch([{ type: "put", key: "x", value: 1 }, { type: "put", key: "a", value: 9, ifAbsent: true }]), "INVALID_ARGUMENT");
  assert.equal(await db.get("x"), undefined);
  assert.equal(await db.get("a"), 1);
});

test("a batch put's options are its own fields beside type, key and value; its value is read once", async () => {
  const { db } = await fresh({ defaultTtlMs: 5_000 });
  let reads = 0;
  const counted = { type: "put", key: "counted", ttlMs: 1_000, get value() { reads++; return "v"; } };
  // An enumerable field the op only inherits is not an option: the put takes the default TTL.
  const inherited = Object.assign(Object.create({ ttlMs: 7 }), { type: "put", key: "inherited", value: 2 });
  await db.batch([
    { type: "put", key: "plain", value: 1 },
    counted,
    inherited,
    { type: "put", key: "forever", value: 3, noExpiry: true },
  ]);
  assert.equal(reads, 1);
  assert.equal(await db.get("counted"), "v");
  assert.deepEqual(
    await Promise.all(["plain", "counted", "inherited", "forever"].map((k) => db.ttl(k))),
    [5_000, 1_000, 5_000, -1],
  );
});

test("a batch keeps every key and value as given: non-ASCII, bytes, JSON, deletes, large values", async () => {
  const { db } = await fresh();
  await db.put("gone", "soon");
  const big = "é".repeat(200_000); // 400 KB of UTF-8: more than the batch's first buffer
  const ops = [
    { type: "put", key: "ascii", value: "plain" },
    { type: "put", key: "clé 🔑", value: "valeur ☃ 🎉" },
    { type: "put", key: new Uint8Array([0, 255, 7]), value: new Uint8Array([1, 2, 3]) },
    { type: "put", key: "json", value: JSON.parse('{"a":[1,"ü",null],"__proto__":{"b":true}}') },
    { type: "put", key: "empty", value: "" },
    { type: "put", key: "big", value: big, ttlMs: 60_000 },
    { type: "delete", key: "gone" },
    { type: "put", key: "k".repeat(4096), value: new Uint8Array(0) },
  ];
  await db.batch(ops);
  assert.equal(await db.get("ascii"), "plain");
  assert.equal(await db.get("clé 🔑"), "valeur ☃ 🎉");
  assert.deepEqual(await db.get(new Uint8Array([0, 255, 7])), new Uint8Array([1, 2, 3]));
  assert.deepEqual(await db.get("json"), JSON.parse('{"a":[1,"ü",null],"__proto__":{"b":true}}'));
  assert.equal(await db.get("empty"), "");
  assert.equal(await db.get("big"), big);
  assert.equal(await db.ttl("big"), 60_000);
  assert.equal(await db.get("gone"), undefined);
  assert.deepEqual(await db.get("k".repeat(4096)), new Uint8Array(0));
  // A key given as a string comes back as one from a scan; bytes stay bytes.
  const keys = [];
  for await (const e of db.scan()) keys.push(e.key);
  assert.ok(keys.includes("clé 🔑"));
  assert.ok(keys.some((k) => k instanceof Uint8Array && k.length === 3));
});

test("a get finds a string key whoever encodes it: the engine's glue (short keys) or the entry (long ones)", async () => {
  // A get hands a string key of at most a third of 4096 units to the engine as it is; puts, and
  // gets of longer keys, encode it here. Either side of that bound, and for non-ASCII keys, the
  // key is the same bytes; a lone surrogate is refused on either side.
  const { db } = await fresh();
  const keys = [
    "a".repeat(1365), "a".repeat(1366), "é".repeat(1365), "€".repeat(1365), "🔑".repeat(682) + "x",
    "plain", "é", "€".repeat(1364) + "ab",
  ];
  // A namespace handle's get takes no shortcut: its keys are always encoded here.
  const ns = db.namespace("other");
  for (const [i, key] of keys.entries()) {
    await db.put(key, `v${i}`);
    await ns.put(key, `n${i}`);
  }
  for (const [i, key] of keys.entries()) {
    assert.equal(await db.get(key), `v${i}`, `key ${i} of ${key.length} units`);
    assert.equal(await db.get(new TextEncoder().encode(key)), `v${i}`, `key ${i} as bytes`);
    assert.equal(await ns.get(key), `n${i}`, `key ${i} in a namespace`);
  }
  await rejects(db.get("x\uDBFF"), "INVALID_ARGUMENT");
  await rejects(db.get("€".repeat(1365) + "\uDBFF"), "INVALID_ARGUMENT");
  await rejects(ns.get("x\uDBFF"), "INVALID_ARGUMENT");
  await rejects(db.get(""), "INVALID_ARGUMENT");
  await rejects(db.get("€".repeat(1366)), "KEY_TOO_LARGE");
  await rejects(db.get("a".repeat(4097)), "KEY_TOO_LARGE");
  assert.equal(await db.get("a".repeat(4096)), undefined);
});

test("strings of any length either side of where their encoding changes method come back as written", async () => {
  // Short strings are copied unit by unit (falling back to TextEncoder at the first non-ASCII
  // unit), longer ones go to TextEncoder whole; where the bound lies depends on the runtime's entry.
  const { db } = await fresh();
  const unique = new Set();
  for (let length = 1; length <= 200; length++) {
    const ascii = "abcdefghij".repeat(20).slice(0, length);
    unique.add(ascii);
    // One non-ASCII unit (or a surrogate pair) at the start, in the middle, at the end.
    for (const at of [0, length >> 1, length - 1]) {
      unique.add(ascii.slice(0, at) + "é" + ascii.slice(at + 1));
      unique.add(ascii.slice(0, at) + "🔑" + ascii.slice(at + 1));
    }
  }
  const strings = [...unique];
  const batch = [];
  for (const [i, s] of strings.entries()) {
    if (i % 2 === 0) await db.put(`one:${s}`, s);
    else batch.push({ type: "put", key: `batch:${s}`, value: s });
  }
  await db.batch(batch);
  for (const [i, s] of strings.entries()) {
    const key = `${i % 2 === 0 ? "one" : "batch"}:${s}`;
    assert.equal(await db.get(key), s, `a string of ${s.length} units`);
  }
  // The keys too, as a scan gives them back (a get would encode its key the same way).
  for (const [prefix, step] of [["one:", 0], ["batch:", 1]]) {
    const keys = [];
    for await (const e of db.scan({ prefix })) keys.push(e.key);
    const written = strings.filter((_, i) => i % 2 === step).map((s) => prefix + s);
    assert.deepEqual(keys.sort(), written.sort());
  }
});

test("a bad op anywhere in a batch is its error code, and nothing of the batch is written", async () => {
  const { db } = await fresh();
  const ok = { type: "put", key: "first", value: "x" };
  const cases = [
    [{ type: "put", key: "", value: 1 }, "INVALID_ARGUMENT"],
    [{ type: "put", key: "é".repeat(2049), value: 1 }, "KEY_TOO_LARGE"],
    [{ type: "put", key: new Uint8Array(4097), value: 1 }, "KEY_TOO_LARGE"],
    [{ type: "delete", key: 42 }, "INVALID_ARGUMENT"],
    [{ type: "put", key: "k", value: undefined }, "INVALID_ARGUMENT"],
    [{ type: "put", key: "k", value: new Uint8Array(16 * 1024 * 1024 + 1) }, "VALUE_TOO_LARGE"],
    [{ type: "put", key: "k", value: "é".repeat(8 * 1024 * 1024) + "x" }, "VALUE_TOO_LARGE"],
    [{ type: "put", key: "k", value: "x".repeat(16 * 1024 * 1024 + 1) }, "VALUE_TOO_LARGE"],
    [{ type: "put", key: "k", value: 1, ttlMs: 0 }, "INVALID_ARGUMENT"],
    [{ type: "put", key: "k", value: 1, ttl: 5 }, "INVALID_ARGUMENT"],
    [{ type: "put", key: "k", value: 1, ttlMs: 5, noExpiry: true }, "INVALID_ARGUMENT"],
    [{ type: "upsert", key: "k", value: 1 }, "INVALID_ARGUMENT"],
    [{ type: "upsert", key: "" }, "INVALID_ARGUMENT"],
  ];
  for (const [bad, code] of cases) {
    await rejects(db.batch([ok, bad, ok]), code).catch((e) => assert.fail(`${JSON.stringify(bad).slice(0, 80)}: ${e.message}`));
  }
  assert.equal(await db.get("first"), undefined);
});

test("the engine refuses a packed batch whose op table does not add up, and stays usable", async () => {
  // The engine's own entry points, through the wasm-bindgen glue of the working tree (the package
  // ships it bundled); initialising it again is a no-op when the tested entry already did.
  const wasm = await import("../../bindings/js/pkg/ttlkv_web.js");
  await wasm.default({ module_or_path: readFileSync(new URL("../../bindings/js/pkg/ttlkv_web_bg.wasm", import.meta.url)) });
  // Against an installed package this glue is a second instance: it makes its errors with the
  // class the loader hands it, as the package's own loader does.
  wasm.useErrorClass(TtlKvError);
  const raw = await wasm.openDb("packed-raw", "memory", { durability: "durable" });
  const bytes = new TextEncoder().encode("keyvalue");
  const cases = [
    [[0, 3, 5, 0, 0]], // not six numbers per op
    [[0, 3, 6, 0, 0, 0]], // value runs past the bytes
    [[0, -1, 5, 0, 0, 0]],
    [[0, 1.5, 5, 0, 0, 0]],
    [[0, NaN, 5, 0, 0, 0]],
    [[0, 2 ** 60, 5, 0, 0, 0]],
    [[0, 3, 4, 0, 0, 0]], // a byte no op accounts for
    [[7, 3, 5, 0, 0, 0]], // unknown op type
    [[0, 3, 5, 9, 0, 0]], // unknown TTL kind
    [[0, 3, 5, 2, -5, 0]], // ttlMs must be > 0
    [[0, 3, 5, 0, 0, 3]], // unknown condition
  ];
  for (const [ops] of cases) await rejects(raw.batch(bytes, new Float64Array(ops)), "INVALID_ARGUMENT");
  assert.equal(await raw.get(new TextEncoder().encode("key")), undefined);
  assert.equal(await raw.batch(bytes, new Float64Array([0, 3, 5, 0, 0, 0])), true);
  assert.deepEqual(await raw.get(new TextEncoder().encode("key")), new TextEncoder().encode("value"));
  await rejects(raw.batch(new Uint8Array(0), new Float64Array([0, 0, 0, 0, 0, 0])), "INVALID_ARGUMENT");
});

test("snapshots read at their own time, expiry included", async () => {
  const { db, clock } = await fresh();
  await db.put("k", "v", { ttlMs: 100 });
  const snap = await db.snapshot();
  clock.advance(100);
  await db.put("k2", "later");
  assert.equal(await db.get("k"), undefined);
  assert.equal(await snap.get("k"), "v");
  assert.equal(await snap.has("k2"), false);
  snap.release();
  await rejects(snap.get("k"), "CLOSED");
});

test("a snapshot's scan over more entries than a page gives every entry in order, as the database's own scan does", async () => {
  const { db } = await fresh();
  const keys = Array.from({ length: 600 }, (_, i) => `k${String(i).padStart(4, "0")}`);
  await db.batch(keys.map((key, i) => ({ type: "put", key, value: i })));
  const snap = await db.snapshot();
  await db.put("k9999", "after the snapshot");
  const all = async (iterable) => {
    const out = [];
    for await (const e of iterable) out.push(e.key);
    return out;
  };
  assert.deepEqual(await all(snap.scan()), keys);
  assert.deepEqual(await all(snap.scan({ reverse: true })), [...keys].reverse());
  assert.deepEqual(await all(snap.scan({ limit: 300 })), keys.slice(0, 300));
  assert.deepEqual(await all(snap.scan({ reverse: true, limit: 257 })), [...keys].reverse().slice(0, 257));
  assert.deepEqual(await all(snap.scan({ start: "k0100", end: "k0500" })), keys.slice(100, 500));
  assert.deepEqual(await all(snap.scan()), keys, "a snapshot's scan can run again, and does not release it");
  snap.release();
});

test("namespaces: separate keyspaces, default and max TTL, drop", async () => {
  const { db } = await fresh();
  const otp = db.namespace("otp", { defaultTtlMs: 1_000, maxTtlMs: 5_000 });
  await otp.put("code", "123");
  await db.put("code", "default ns");
  assert.equal(await otp.get("code"), "123");
  assert.equal(await otp.ttl("code"), 1_000);
  await otp.put("long", "x", { ttlMs: 60_000 });
  assert.equal(await otp.ttl("long"), 5_000);
  assert.equal(await db.dropNamespace("otp"), true);
  await rejects(otp.get("code"), "CLOSED");
  assert.equal(await db.get("code"), "default ns");
});

test("clear() empties one keyspace in one commit, whatever its size; the handle keeps working", async () => {
  const adapter = mapAdapter();
  const clock = fakeClock();
  const db = await open("clear", { storage: adapter, clock, maintenance: "manual" });
  const sessions = db.namespace("sessions");
  const events = [];
  db.on("expire", (e) => events.push(e.key));
  await db.batch(Array.from({ length: 2_000 }, (_, i) => ({ type: "put", key: `k${i}`, value: i, ...(i < 10 ? { ttlMs: 1_000 } : {}) })));
  await sessions.put("s", "kept");
  await db.flush();
  clock.advance(2_000);
  const commits = adapter.commits;
  await db.clear();
  // The ten keys that had expired are reported (the clear purges what is due first); the purge
  // and the clear are the only commits.
  assert.equal(events.length, 10);
  assert.ok(adapter.commits - commits <= 2, `${adapter.commits - commits} commits`);
  assert.equal(await db.get("k500"), undefined);
  assert.equal(await sessions.get("s"), "kept");
  await db.put("k1", "again");
  const keys = [];
  for await (const e of db.scan()) keys.push(e.key);
  assert.deepEqual(keys, ["k1"]);
  await sessions.clear();
  assert.equal(await sessions.get("s"), undefined);
  assert.equal(events.length, 10, "no events for the keys a clear removed");
  await db.close();
  const reopened = await open("clear", { storage: adapter, clock, maintenance: "manual" });
  assert.equal(await reopened.get("k1"), "again");
  assert.equal(await reopened.get("k2"), undefined);
  await reopened.close();
});

test("a close() beside one under way settles once that one has committed, as it does", async () => {
  const clock = fakeClock();
  for (const fails of [false, true]) {
    const adapter = mapAdapter();
    const db = await open(`close-twice-${fails}`, { storage: adapter, clock, maintenance: "manual", durability: "relaxed" });
    await db.put("k", "v");
    // The adapter's commits wait until let through (and then fail, in the second round).
    let letThrough;
    adapter.hold = new Promise((resolve) => (letThrough = resolve));
    if (fails) adapter.failure = new Error("the disk went away");
    const settled = [];
    const first = db.close().then(
      () => settled.push("first"),
      (e) => settled.push(`first ${e.code}`),
    );
    const second = db.close().then(
      () => settled.push("second"),
      (e) => settled.push(`second ${e.code}`),
    );
    for (let i = 0; i < 100; i++) await null;
    assert.deepEqual(settled, [], "neither close answers while the commit waits");
    letThrough();
    await Promise.all([first, second]);
    assert.deepEqual(settled.sort(), fails ? ["first STORAGE", "second STORAGE"] : ["first", "second"]);
    await assert.rejects(db.get("k"), { code: "CLOSED" });
    adapter.hold = adapter.failure = null;
    if (!fails) {
      const reopened = await open("close-twice-false", { storage: adapter, clock, maintenance: "manual" });
      assert.equal(await reopened.get("k"), "v");
      await reopened.close();
    }
  }
});

test("namespace() handles made by the thousand do not pile up engine handles", async () => {
  const { db } = await fresh();
  for (let i = 0; i < 50_000; i++) await db.namespace("hot").put("k", i);
  await collectUntil(async () => (await db.stats()).namespaceHandles < 100);
  const { namespaceHandles } = await db.stats();
  assert.ok(namespaceHandles < 100, `${namespaceHandles} engine handles for 50,000 dropped namespace handles`);
  assert.equal(await db.namespace("hot").get("k"), 49_999);
});

test("a namespace handle made before dropNamespace stays closed; one made after opens the new keyspace", async () => {
  const { db } = await fresh();
  const before = db.namespace("otp", { defaultTtlMs: 1_000 });
  await before.put("code", "1");
  assert.equal(await db.dropNamespace("otp"), true);
  const after = db.namespace("otp");
  assert.equal(await after.get("code"), undefined, "the new keyspace is empty");
  await after.put("code", "2");
  await rejects(before.get("code"), "CLOSED");
  await rejects(before.put("code", "3"), "CLOSED");
  assert.equal(await db.namespace("otp").get("code"), "2");
  assert.equal(await after.ttl("code"), -1, "the dropped namespace's TTL rules went with it");
});

test("a scan the app walks away from releases its snapshot once the iterator is garbage-collected", async () => {
  const { db } = await fresh();
  for (let i = 0; i < 600; i++) await db.put(`k${String(i).padStart(3, "0")}`, i);
  // Read the first entry of a scan and drop it: no break, no return().
  await (async () => {
    const entries = db.scan()[Symbol.asyncIterator]();
    assert.equal((await entries.next()).value.key, "k000");
    assert.equal((await db.stats()).snapshots, 1, "the scan in progress holds a snapshot");
  })();
  await collectUntil(async () => (await db.stats()).snapshots === 0);
  assert.equal((await db.stats()).snapshots, 0, "the abandoned scan's snapshot was released");
  // Finished and broken-off scans release theirs at once, as before.
  for await (const _ of db.scan({ prefix: "k1" })) void _;
  for await (const _ of db.scan()) break;
  assert.equal((await db.stats()).snapshots, 0);
});

test("a snapshot the app drops without release() is released once it is garbage-collected", async () => {
  const { db } = await fresh();
  await db.put("k", "v");
  await (async () => {
    const snap = await db.snapshot();
    assert.equal(await snap.get("k"), "v");
  })();
  const kept = await db.snapshot();
  assert.equal((await db.stats()).snapshots, 2);
  await collectUntil(async () => (await db.stats()).snapshots === 1);
  assert.equal((await db.stats()).snapshots, 1, "only the snapshot still referenced is open");
  assert.equal(await kept.get("k"), "v");
  kept.release();
  assert.equal((await db.stats()).snapshots, 0);
});

test("purgeExpired fires one expire event per key; onExpire can rewrite a key", async () => {
  const events = [];
  const { db, clock } = await fresh({
    onExpire: (e) => (e.key === "renew" ? { value: "renewed", ttlMs: 1_000 } : undefined),
  });
  db.on("expire", (e) => events.push(e));
  await db.put("a", { session: 1 }, { ttlMs: 10 });
  await db.put("renew", "old", { ttlMs: 10 });
  clock.advance(10);
  assert.equal(await db.purgeExpired(), 1);
  assert.deepEqual(events, [{ key: "a", value: { session: 1 }, expireAt: T0 + 10 }]);
  assert.equal(await db.get("renew"), "renewed");
  assert.equal(await db.purgeExpired(), 0);
  assert.equal(events.length, 1, "exactly once");
});

test("a throwing expire listener or onExpire hook is reported and does not take the process down", () => {
  // A child process: an error thrown where nothing can catch it ends a Node process.
  const entry = process.env.TTLKV_PACKAGE ?? new URL("../../bindings/js/node.js", import.meta.url).href;
  const script = `
    const { open } = await import(${JSON.stringify(entry)});
    let now = 1_767_225_600_000;
    const onExpire = (e) => {
      if (e.key === "b") throw new Error("hook bug");
    };
    const db = await open("throwing-listener", { storage: "memory", maintenance: "manual", clock: () => now, onExpire });
    const heard = [];
    db.on("expire", () => { throw new Error("listener bug"); });
    db.on("expire", (e) => heard.push(e.key));
    await db.put("a", 1, { ttlMs: 10 });
    await db.put("b", 2, { ttlMs: 10 });
    now += 10;
    const removed = await db.purgeExpired();
    await new Promise((resolve) => setTimeout(resolve, 20));
    console.log(JSON.stringify({ removed, heard, after: await db.get("a") ?? null }));
    await db.close();
  `;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(child.status, 0, `the process died: ${child.stderr}`);
  assert.deepEqual(JSON.parse(child.stdout), { removed: 2, heard: ["a", "b"], after: null }, "the other listener heard every event");
  assert.match(child.stderr, /expire listener threw for key a\b[\s\S]*listener bug/, "the error is reported with its key");
  assert.match(child.stderr, /onExpire threw for key b\b[\s\S]*hook bug/, "so is an onExpire hook's, and its key expires");
});

test("an engine that runs out of memory stops: the write that trapped and every later call fail STORAGE at once, none hangs, nothing is thrown uncaught", () => {
  // A child process fills memory storage with 16 MiB values until the engine's WebAssembly
  // memory (4 GiB at most) cannot grow and it traps. A trap leaves the instance part-way through
  // a step: before, each later call entered it again, never settled, and trapped in a microtask
  // (an uncaught RuntimeError: the process died).
  const entry = process.env.TTLKV_PACKAGE ?? new URL("../../bindings/js/node.js", import.meta.url).href;
  const script = `
    const uncaught = [];
    process.on("uncaughtException", (e) => uncaught.push(String(e)));
    process.on("unhandledRejection", (e) => uncaught.push(String(e)));
    const { open, destroy, TtlKvError } = await import(${JSON.stringify(entry)});
    const db = await open("full-memory", { storage: "memory", maintenance: "manual" });
    const big = new Uint8Array(16 * 1024 * 1024).fill(7);
    let puts = 0;
    let failure;
    for (; puts < 400 && !failure; puts++) await db.put("k" + puts, big).catch((e) => (failure = e));
    const outcome = (p) =>
      Promise.race([
        Promise.resolve(p).then(() => "resolved", (e) => (e instanceof TtlKvError ? e.code : "not a TtlKvError: " + e)),
        new Promise((resolve) => setTimeout(() => resolve("pending after 2 s"), 2_000)),
      ]);
    const later = {
      get: await outcome(db.get("k0")),
      has: await outcome(db.has("k1")),
      put: await outcome(db.put("small", 1)),
      scan: await outcome(db.scan()[Symbol.asyncIterator]().next()),
      stats: await outcome(db.stats()),
      open: await outcome(open("another", { storage: "memory" })),
      destroy: await outcome(destroy("another", { storage: "memory" })),
    };
    await new Promise((resolve) => setTimeout(resolve, 100));
    console.log(JSON.stringify({ trapped: puts > 100, code: failure?.code, cause: failure?.cause?.constructor.name, later, uncaught }));
  `;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(child.status, 0, `the process died: ${child.stderr}`);
  const storage = { get: "STORAGE", has: "STORAGE", put: "STORAGE", scan: "STORAGE", stats: "STORAGE", open: "STORAGE", destroy: "STORAGE" };
  assert.deepEqual(JSON.parse(child.stdout), { trapped: true, code: "STORAGE", cause: "RuntimeError", later: storage, uncaught: [] });
});

test("a database closed and destroyed gives its memory back: opened, filled and closed again and again, the engine does not grow", () => {
  // A child process: the engine's memory (which never shrinks) is read from its instance,
  // caught as the package makes it (bench/engine-memory.mjs). The rounds follow each other in
  // one run of microtasks, as a loop of awaited calls on memory storage does: no task runs
  // between them, so nothing a collector's finalizers would free is freed, and the memory must
  // come back at close() itself. A closed handle the collector could never free (the engine
  // holding a closure that reaches it) kept its data for good: each round added its 30 MB.
  const entry = process.env.TTLKV_PACKAGE ?? new URL("../../bindings/js/node.js", import.meta.url).href;
  // The bench's probe of the engine's memory, which must be loaded before the package.
  const probe = new URL("../../bench/engine-memory.mjs", import.meta.url).href;
  const script = `
    const { engineMemoryBytes } = await import(${JSON.stringify(probe)});
    const { open, destroy } = await import(${JSON.stringify(entry)});
    const value = "v".repeat(10_000);
    const sizes = [];
    for (let round = 0; round < 8; round++) {
      const db = await open("given-back", { storage: "memory", onExpire: () => undefined });
      db.on("expire", () => db.stats());
      for (let i = 0; i < 3_000; i += 500) {
        const ops = [];
        for (let j = i; j < i + 500; j++) ops.push({ type: "put", key: "k" + j, value: value + j, ttlMs: 3_600_000 });
        await db.batch(ops);
      }
      await db.flush();
      for (let j = 0; j < 3_000; j += 7) if ((await db.get("k" + j)) !== value + j) throw new Error("wrong value");
      await db.close();
      await destroy("given-back", { storage: "memory" });
      sizes.push(engineMemoryBytes());
    }
    console.log(JSON.stringify(sizes));
  `;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(child.status, 0, `the process failed: ${child.stderr}`);
  const sizes = JSON.parse(child.stdout);
  // Its first rounds grow the memory to what one round needs at its peak (about 100 MB, with
  // the room a 30 MB buffer needs in one piece); from the third round on the rounds reuse it.
  const grown = sizes[sizes.length - 1] - sizes[2];
  assert.ok(grown < 30_000_000, `the engine's memory grew by ${grown} bytes over the last five rounds: ${sizes.join(", ")}`);
});

test("automatic maintenance fires expire events with no call from the app", async () => {
  const events = [];
  const db = await open(`auto${n++}`, { storage: "memory" });
  db.on("expire", (e) => events.push(e.key));
  await db.put("soon", "v", { ttlMs: 30 });
  await new Promise((r) => setTimeout(r, 150));
  assert.deepEqual(events, ["soon"]);
  await db.close();
});

test("automatic maintenance runs even when the app never yields to the timer queue", async () => {
  // Awaited calls on memory storage resolve in microtasks alone, so a loop of them starves every
  // timer. Flushed tables must still be compacted, not pile up in level 0.
  const clock = fakeClock();
  const db = await open(`starved${n++}`, { storage: "memory", clock }); // maintenance: "auto"
  const value = "v".repeat(1000);
  for (let b = 0; b < 24; b++) {
    await db.batch(Array.from({ length: 1000 }, (_, i) => ({ type: "put", key: `k${b}-${i}`, value })));
    clock.advance(100);
  }
  for (let i = 0; i < 50; i++) {
    await db.get("k0-0");
    clock.advance(100);
  }
  const levels = (await db.stats()).levels;
  const level0 = levels.find((l) => l.level === 0)?.ssts.length ?? 0;
  assert.ok(levels.some((l) => l.level > 0 && l.ssts.length > 0), JSON.stringify(levels.map((l) => [l.level, l.ssts.length])));
  assert.ok(level0 <= 4, `level 0 holds ${level0} tables`);
  assert.equal(await db.get("k23-999"), value);
  await db.close();
});

test("1,000 concurrent mixed calls on one db are safe", async () => {
  const { db } = await fresh();
  const calls = [];
  for (let i = 0; i < 1_000; i++) {
    const k = `k${i % 50}`;
    switch (i % 5) {
      case 0: calls.push(db.put(k, i, { ttlMs: 1_000 + i })); break;
      case 1: calls.push(db.get(k)); break;
      case 2: calls.push(db.delete(k)); break;
      case 3: calls.push(db.expire(k, 500)); break;
      default: calls.push(db.put(k, { i }, { ifAbsent: true }));
    }
  }
  const results = await Promise.allSettled(calls);
  assert.equal(results.filter((r) => r.status === "rejected").length, 0);
});

/**
 * Run `check(db, label)` on a fresh database's default keyspace, on a namespace of it and on a
 * database over a JS adapter (named `adapterName`); the fresh database, for more checks.
 */
async function inEachKeyspaceAndOnAnAdapter(check, adapterName) {
  const { db } = await fresh();
  await check(db, "default keyspace");
  await check(db.namespace("ns"), "namespace");
  const adapted = await open(adapterName, { storage: mapAdapter(), clock: fakeClock(), maintenance: "manual" });
  await check(adapted, "adapter");
  await adapted.close();
  return db;
}

test("gets made back to back without waiting each answer for their own key, in the default keyspace, a namespace and on an adapter", async () => {
  // Keys of many lengths, each encoded where the one before it was (the default keyspace's gets
  // hand their key over in place): a get that read its key late would answer for another.
  const key = (i) => `key ${i} `.padEnd(8 + (i % 90), String.fromCharCode(97 + (i % 26)));
  const check = async (db, label) => {
    for (let i = 0; i < 300; i++) await db.put(key(i), `value ${i}`);
    const gets = [];
    for (let i = 0; i < 300; i++) gets.push(db.get(key(i)));
    const answers = await Promise.all(gets);
    for (let i = 0; i < 300; i++) assert.equal(answers[i], `value ${i}`, `${label}, ${key(i)}`);
  };
  await inEachKeyspaceAndOnAnAdapter(check, "in-place-gets-adapter");
});

test("a clock that calls the database while a get reads it: the inner calls wait their turn and answer, the get answers", async () => {
  // The server's engine answers a get of a key read lately from its row cache, the clock read
  // in the middle of it; the browser's searches its tables. Either way the clock's own calls
  // must not run inside the engine's, nor be lost.
  const base = fakeClock();
  let inner;
  let reenter = false;
  const clock = () => {
    if (reenter) {
      reenter = false;
      inner = Promise.all([db.get("k"), db.put("j", "w"), db.get("j")]);
    }
    return base();
  };
  const db = await open(`clock-calls-${n++}`, { storage: "memory", clock, maintenance: "manual" });
  await db.put("k", "v", { ttlMs: 1_000 });
  for (let i = 0; i < 3; i++) assert.equal(await db.get("k"), "v");
  const hits = (await db.stats()).rowCacheHits;
  reenter = true;
  assert.equal(await db.get("k"), "v");
  assert.ok(inner instanceof Promise, "the clock was read");
  const stats = await db.stats();
  // The server's engine answered both gets of "k" from its row cache (the browser's has none):
  // the outer one at once (its `get` answers every hit so, unless the engine is running), the
  // clock's own once its turn came.
  if (stats.rowCacheBytes > 0) assert.equal(stats.rowCacheHits, hits + 2);
  assert.deepEqual(await inner, ["v", true, "w"]);
  base.advance(1_000);
  assert.equal(await db.get("k"), undefined);
  await db.close();
});

test("puts made back to back without waiting each keep their own value, in the default keyspace, a namespace and on an adapter", async () => {
  // Values over 64 bytes, so that each is encoded where the next is (the default keyspace's
  // calls hand it over in place) and any call that read it late would store another's bytes.
  const value = (i) => `value ${i} `.padEnd(80 + (i % 200), String.fromCharCode(97 + (i % 26)));
  const check = async (db, label) => {
    const puts = [];
    for (let i = 0; i < 300; i++) puts.push(db.put(`key${i}`, value(i)));
    await Promise.all(puts);
    for (let i = 0; i < 300; i++) assert.equal(await db.get(`key${i}`), value(i), `${label}, key${i}`);
  };
  const db = await inEachKeyspaceAndOnAnAdapter(check, "in-place-adapter");
  // Options whose getter makes another put while the first is being encoded.
  const first = value(1);
  const second = value(2);
  let inner;
  await db.put("outer", first, {
    get ttlMs() {
      inner = db.put("inner", second);
      return 60_000;
    },
  });
  await inner;
  assert.equal(await db.get("outer"), first);
  assert.equal(await db.get("inner"), second);
  // A byte key of the app's own class, whose length getter would read another key while the
  // put's arguments are handed to the engine: the key is copied when the call is made, by the
  // array's own length, so the getter never runs.
  let lengthReads = 0;
  class Sneaky extends Uint8Array {
    get length() {
      if (++lengthReads === 2) db.has("z".repeat(90));
      return super.length;
    }
  }
  await db.put(new Sneaky([1, 2, 3]), first);
  assert.equal(lengthReads, 0);
  assert.equal(await db.get(new Uint8Array([1, 2, 3])), first);
});

test("batches made back to back without waiting, and one packed inside another's packing, each keep their own ops", async () => {
  // Batches are packed into buffers kept from one to the next: each of these, of another size
  // than the one before it, would store another batch's bytes if a call read them late.
  const value = (b, i) => `batch ${b} op ${i} `.padEnd(60 + ((b * 7 + i) % 150), String.fromCharCode(97 + (b % 26)));
  const ops = (b, prefix) => Array.from({ length: 5 + (b % 40) }, (_, i) => ({ type: "put", key: `${prefix}${b}.${i}`, value: value(b, i) }));
  const check = async (db, label) => {
    const batches = [];
    for (let b = 0; b < 60; b++) batches.push(db.batch(ops(b, "k")));
    await Promise.all(batches);
    for (let b = 0; b < 60; b++) {
      for (const op of ops(b, "k")) assert.equal(await db.get(op.key), op.value, `${label}, ${op.key}`);
    }
    // An op whose value getter makes a batch of its own while the outer one is being packed.
    let inner;
    const outer = ops(41, "outer");
    const sneaky = { type: "put", key: "sneaky", get value() { inner = db.batch(ops(42, "inner")); return value(43, 0); } };
    await db.batch([...outer.slice(0, 20), sneaky, ...outer.slice(20)]);
    await inner;
    for (const op of [...outer, ...ops(42, "inner"), { key: "sneaky", value: value(43, 0) }]) {
      assert.equal(await db.get(op.key), op.value, `${label}, ${op.key}`);
    }
    // An op whose getter adds to the array being read, after a larger batch left room in the
    // kept buffers: refused, nothing written, as it is where there is no room.
    const growing = ops(7, "growing");
    growing.push({ type: "put", key: "grower", get value() { growing.push({ type: "put", key: "added", value: "x" }); return "y"; } });
    await rejects(db.batch(growing), "INVALID_ARGUMENT");
    for (const key of ["growing7.0", "grower", "added"]) assert.equal(await db.get(key), undefined, `${label}, ${key}`);
    // A batch that fails while packed gives its buffers back: the next one keeps its ops.
    await rejects(db.batch([...ops(3, "bad"), { type: "put", key: 5, value: "x" }]), "INVALID_ARGUMENT");
    assert.equal(await db.get("bad3.0"), undefined);
    await db.batch(ops(4, "after"));
    for (const op of ops(4, "after")) assert.equal(await db.get(op.key), op.value, `${label}, ${op.key}`);
  };
  await inEachKeyspaceAndOnAnAdapter(check, "packed-batches-adapter");
});

test("a page-store adapter persists the data across close and reopen", async () => {
  const adapter = mapAdapter();
  const clock = fakeClock();
  const db = await open("a", { storage: adapter, clock, maintenance: "manual" });
  await db.put("k", "v", { ttlMs: 10_000 });
  await db.flush();
  await db.put("wal-only", [1, 2]);
  await db.close();
  await rejects(db.get("k"), "CLOSED");
  await rejects(db.getMany([]), "CLOSED");
  const again = await open("a", { storage: adapter, clock, maintenance: "manual" });
  assert.equal(await again.get("k"), "v");
  assert.deepEqual(await again.get("wal-only"), [1, 2]);
  assert.equal(await again.ttl("k"), 10_000);
  assert.ok(adapter.commits > 2);
});

test("a file adapter (node:fs) keeps data across reopen and finishes a commit a crash interrupted", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "ttlkv-js-fs-"));
  try {
    const clock = fakeClock();
    const db = await open("files", { storage: fsAdapter(dir), clock, maintenance: "manual" });
    const ops = [];
    for (let i = 0; i < 500; i++) ops.push({ type: "put", key: `k${i}`, value: { i }, ttlMs: i % 2 ? 60_000 : undefined });
    await db.batch(ops);
    await db.flush();
    await db.put("wal-only", "v");
    await db.close();

    // A crash after the commit point: the journal is there, its steps are not done.
    const crashed = fsAdapter(dir);
    const manifest = await crashed.readManifest();
    writeFileSync(path.join(dir, "w_ffffffffffffff00.tmp"), new Uint8Array([1]));
    writeFileSync(path.join(dir, "JOURNAL"), JSON.stringify({ renames: [["w_ffffffffffffff00.tmp", "w_ffffffffffffff00"]], deletes: [] }));
    const recovered = fsAdapter(dir);
    assert.deepEqual(await recovered.listPages("w/"), [...(await crashed.listPages("w/")).filter((k) => k !== "w/ffffffffffffff00"), "w/ffffffffffffff00"].sort());
    assert.deepEqual(await recovered.readManifest(), manifest);
    rmSync(path.join(dir, "w_ffffffffffffff00"));

    const again = await open("files", { storage: fsAdapter(dir), clock, maintenance: "manual" });
    assert.deepEqual(await again.get("k7"), { i: 7 });
    assert.equal(await again.ttl("k7"), 60_000);
    assert.equal(await again.get("wal-only"), "v");
    clock.advance(60_000);
    assert.equal(await again.get("k7"), undefined);
    assert.deepEqual(await again.get("k8"), { i: 8 });
    assert.equal(await again.purgeExpired(), 250);
    await again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a storage failure is STORAGE with the adapter's own error as cause", async () => {
  const adapter = mapAdapter();
  const db = await open("c", { storage: adapter, maintenance: "manual" });
  const failure = (adapter.failure = new Error("disk on fire"));
  const e = await db.put("k", "v").catch((e) => e);
  assert.ok(e instanceof TtlKvError);
  assert.equal(e.code, "STORAGE");
  assert.equal(e.cause, failure);
  adapter.failure = null;
  assert.equal(await db.get("k"), undefined, "nothing of the failed write is visible");
  await db.put("k", "v2");
  assert.equal(await db.get("k"), "v2");
});

test("a damaged page is CORRUPTION naming the page, and other keys still read", async () => {
  const adapter = mapAdapter();
  const clock = fakeClock();
  const db = await open("damaged", { storage: adapter, clock, maintenance: "manual" });
  await db.put("k", "v");
  await db.flush();
  await db.close();
  const [dataPage] = [...adapter.pages.keys()].filter((k) => k.startsWith("d/"));
  adapter.pages.get(dataPage)[10] ^= 0x40;
  const again = await open("damaged", { storage: adapter, clock, maintenance: "manual" });
  const e = await again.get("k").catch((e) => e);
  assert.ok(e instanceof TtlKvError);
  assert.equal(e.code, "CORRUPTION");
  assert.match(e.message, /page sst\/\d+\/data\/0/);
  await again.put("other", "fine");
  assert.equal(await again.get("other"), "fine", "keys outside the damaged page still work");
});

test("a second writer on the same adapter fences the first", async () => {
  const adapter = mapAdapter();
  const first = await open("f", { storage: adapter, maintenance: "manual" });
  await first.put("k", "1");
  const second = await open("f", { storage: adapter, maintenance: "manual" });
  await rejects(first.put("k", "2"), "FENCED");
  assert.equal(await second.get("k"), "1");
});

test("an adapter out of room gives QUOTA_EXCEEDED and nothing half-written", async () => {
  const adapter = mapAdapter();
  const db = await open("q", { storage: adapter, maintenance: "manual" });
  await db.put("small", "v");
  adapter.quota = adapter.bytes + 100;
  const before = adapter.bytes;
  await rejects(db.put("big", "x".repeat(1000)), "QUOTA_EXCEEDED");
  assert.equal(adapter.bytes, before, "nothing half-written");
  assert.equal(await db.get("big"), undefined);
  assert.equal(await db.get("small"), "v");
  adapter.quota = Infinity;
  await db.put("big", "ok");
  assert.equal(await db.get("big"), "ok");
});

test("out of room, a write first reclaims expired data (purge, then compaction) and retries once", async () => {
  const adapter = mapAdapter();
  const clock = fakeClock();
  const db = await open("reclaim", { storage: adapter, clock, maintenance: "manual" });
  const events = [];
  db.on("expire", (e) => events.push(e.key));
  const ops = [];
  for (let i = 0; i < 40; i++) ops.push({ type: "put", key: `cache:${i}`, value: "x".repeat(2_000), ttlMs: 1_000 });
  await db.batch(ops);
  await db.put("keep", "forever");
  await db.flush();
  clock.advance(5_000); // every cache entry is due, none purged yet
  const full = adapter.bytes;
  adapter.quota = full + 4_000; // room for a purge's small commit, not for the next put
  assert.equal(await db.put("big", "y".repeat(10_000)), true, "the retry after the reclaim succeeds");
  assert.equal(events.length, 40, "the reclaim's purge fired one expire event per key");
  assert.ok(adapter.bytes < full, `storage shrank: ${adapter.bytes} < ${full}`);
  assert.equal(await db.get("big"), "y".repeat(10_000));
  assert.equal(await db.get("keep"), "forever");

  // Nothing left to reclaim: the error reaches the caller, and nothing was half-written.
  adapter.quota = adapter.bytes + 100;
  const before = adapter.bytes;
  await rejects(db.put("huge", "z".repeat(50_000)), "QUOTA_EXCEEDED");
  assert.equal(adapter.bytes, before);
  assert.equal(await db.get("huge"), undefined);
  assert.equal(await db.get("keep"), "forever", "reads keep working");
});

test("storage that refuses every write once it ran out of room (as Firefox does) still reports QUOTA_EXCEEDED, nothing written", async () => {
  const adapter = mapAdapter();
  // The store captures the adapter's functions when it opens: switch behaviour inside them.
  const commit = adapter.commit.bind(adapter);
  let refusing = false;
  let full = false;
  adapter.commit = async (c) => {
    if (!refusing) return commit(c);
    if (full) throw Object.assign(new Error("A mutation operation was attempted on a database that did not allow mutations."), { name: "InvalidStateError" });
    full = true;
    throw Object.assign(new Error("quota"), { code: "QUOTA_EXCEEDED" });
  };
  const db = await open("refusing", { storage: adapter, maintenance: "manual" });
  await db.put("small", "v");
  refusing = true;
  const before = adapter.bytes;
  const e = await db.put("big", "x".repeat(1000)).then(() => undefined, (e) => e);
  assert.equal(e?.code, "QUOTA_EXCEEDED", e?.message);
  assert.match(e.message, /tried again after reclaiming/);
  assert.equal(adapter.bytes, before, "nothing written");
  refusing = false;
  assert.equal(await db.get("small"), "v", "reads keep working");
  await db.put("big", "ok");
  assert.equal(await db.get("big"), "ok");
});

test("memory storage reopens by name until destroy", async () => {
  const db = await open("named", { storage: "memory", maintenance: "manual" });
  await db.put("k", "v");
  await db.close();
  assert.equal(await (await open("named", { storage: "memory" })).get("k"), "v");
  await destroy("named");
  assert.equal(await (await open("named", { storage: "memory" })).get("k"), undefined);
});

test("bad input is a TtlKvError with the right code, never a crash", async () => {
  const { db } = await fresh();
  await rejects(db.put("", "v"), "INVALID_ARGUMENT");
  await rejects(db.put("x".repeat(4097), "v"), "KEY_TOO_LARGE");
  await rejects(db.put(42, "v"), "INVALID_ARGUMENT");
  await rejects(db.put("k", undefined), "INVALID_ARGUMENT");
  await rejects(db.put("k", NaN), "INVALID_ARGUMENT");
  await rejects(db.put("k", { d: new Date() }), "INVALID_ARGUMENT");
  const cyclic = {};
  cyclic.self = cyclic;
  await rejects(db.put("k", cyclic), "INVALID_ARGUMENT");
  for (const ttlMs of [0, -1, 1.5, NaN, Infinity, "10"]) await rejects(db.put("k", "v", { ttlMs }), "INVALID_ARGUMENT");
  await rejects(db.put("k", "v", { ttlMs: 10, noExpiry: true }), "INVALID_ARGUMENT");
  await rejects(db.put("k", "v", { ifAbsent: true, ifPresent: true }), "INVALID_ARGUMENT");
  await rejects(db.put("k", "v", { bogus: 1 }), "INVALID_ARGUMENT");
  await rejects(db.expire("k", 10, { nx: true, gt: true }), "INVALID_ARGUMENT");
  await rejects(open("", {}), "INVALID_ARGUMENT");
  await rejects(open("x", { storage: "indexeddb" }), "UNSUPPORTED");
  await rejects(open("x", { maintenance: "sometimes" }), "INVALID_ARGUMENT");
  await rejects(db.put("k", "x".repeat(16 * 1024 * 1024 + 1)), "VALUE_TOO_LARGE");
  await db.put("still", "works");
  assert.equal(await db.get("still"), "works");
  await db.close();
  await rejects(db.put("k", "v"), "CLOSED");
});

test("get settles by itself: a bad key or a closed database is a rejection with its code, never a throw", async () => {
  const { db } = await fresh();
  const call = (key) => {
    let answer;
    assert.doesNotThrow(() => {
      answer = db.get(key);
    });
    assert.ok(answer instanceof Promise, "get always answers with a Promise");
    return answer;
  };
  for (const [key, code] of [["", "INVALID_ARGUMENT"], ["x".repeat(4097), "KEY_TOO_LARGE"], [42, "INVALID_ARGUMENT"], [undefined, "INVALID_ARGUMENT"]]) {
    await rejects(call(key), code);
  }
  await db.put("k", "v");
  assert.equal(await call("k"), "v", "an answer the engine has at once");
  assert.equal(await call("absent"), undefined);
  await db.close();
  await rejects(call("k"), "CLOSED");
});

test("init() takes exactly one of module, bytes, url, each of its type; once the engine is loaded it changes nothing", async () => {
  await rejects(init(), "INVALID_ARGUMENT");
  await rejects(init({}), "INVALID_ARGUMENT");
  await rejects(init({ module: {} }), "INVALID_ARGUMENT");
  await rejects(init({ bytes: "wasm" }), "INVALID_ARGUMENT");
  await rejects(init({ url: 42 }), "INVALID_ARGUMENT");
  await rejects(init({ bytes: new Uint8Array(8), url: "x.wasm" }), "INVALID_ARGUMENT");
  await rejects(init({ wasm: new Uint8Array(8) }), "INVALID_ARGUMENT");
  const { db } = await fresh();
  // Loaded already: not bytes that are no engine at all make it fail now.
  await init({ bytes: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]) });
  await db.put("k", "v");
  assert.equal(await db.get("k"), "v");
  await db.close();
});

/** A file of the built package's server entries (`dist/server/`). */
const serverFile = (file) => new URL(`../../bindings/js/dist/server/${file}`, import.meta.url);

/**
 * Runs `f(pkg, dir)` on a fresh copy of the package's Node entry and core (their own module
 * instance, so no engine is loaded yet) in a directory of its own, without the engine file beside
 * them; the directory is removed after.
 */
async function withEntryCopy(prefix, f) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  try {
    for (const file of ["node.js", "core.js"]) writeFileSync(path.join(dir, file), readFileSync(serverFile(file)));
    await f(await import(path.join(dir, "node.js")), dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Puts a key on a fresh memory database of `pkg` and reads it back. */
async function roundTrips(pkg, name) {
  const db = await pkg.open(name, { storage: "memory" });
  await db.put("k", "v");
  assert.equal(await db.get("k"), "v");
  await db.close();
}

test("init({ bytes }) before the first open() is how the engine is loaded; a bad one is UNSUPPORTED and the next init loads", async () => {
  await withEntryCopy("ttlkv-init-", async (pkg) => {
    const bad = await pkg.init({ bytes: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]) }).then(() => undefined, (e) => e);
    assert.equal(bad?.code, "UNSUPPORTED");
    assert.ok(bad.cause, "the cause is kept");
    // The failed source stays the one open() loads from, until init() is given another.
    const opened = await pkg.open("init-bad", { storage: "memory" }).then(() => undefined, (e) => e);
    assert.equal(opened?.code, "UNSUPPORTED");
    await pkg.init({ bytes: readFileSync(serverFile("pkg/ttlkv_web_bg.wasm")) });
    await roundTrips(pkg, "init-bytes");
  });
});

test("the other entry's engine build is refused with UNSUPPORTED, naming the engine each entry takes", async () => {
  // The server entries (here Node's) link only the server build; the browser's is another build.
  await withEntryCopy("ttlkv-other-build-", async (pkg) => {
    const browserEngine = readFileSync(new URL("../../bindings/js/dist/pkg/ttlkv_web_bg.wasm", import.meta.url));
    const refused = await pkg.init({ bytes: browserEngine }).then(() => undefined, (e) => e);
    assert.equal(refused?.code, "UNSUPPORTED");
    assert.ok(refused.cause instanceof WebAssembly.LinkError, `cause: ${refused.cause}`);
    assert.match(refused.message, /dist\/server\/pkg\/ttlkv_web_bg\.wasm/);
    await pkg.init({ bytes: readFileSync(serverFile("pkg/ttlkv_web_bg.wasm")) });
    await roundTrips(pkg, "other-build");
  });
});

test("the server entries' engine given to the browser entry is refused with UNSUPPORTED, naming the engine each entry takes", async () => {
  // The browser entry's glue leaves out the JS modules only the server's engine imports: the
  // instantiation fails on a missing module (a TypeError), not a missing function (a LinkError).
  const dir = mkdtempSync(path.join(tmpdir(), "ttlkv-browser-entry-"));
  try {
    const dist = new URL("../../bindings/js/dist/", import.meta.url);
    for (const file of ["index.js", "core.js"]) writeFileSync(path.join(dir, file), readFileSync(new URL(file, dist)));
    const pkg = await import(path.join(dir, "index.js"));
    const refused = await pkg.init({ bytes: readFileSync(serverFile("pkg/ttlkv_web_bg.wasm")) }).then(() => undefined, (e) => e);
    assert.equal(refused?.code, "UNSUPPORTED");
    assert.ok(refused.cause, "the cause is kept");
    assert.match(refused.message, /is it the engine of another entry\?.*dist\/pkg\/ttlkv_web_bg\.wasm/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an engine that cannot be loaded is UNSUPPORTED with its cause, and the next open() loads it again", async () => {
  await withEntryCopy("ttlkv-load-", async (pkg, dir) => {
    const failed = await pkg.open("load-retry", { storage: "memory" }).then(
      () => undefined,
      (e) => e,
    );
    assert.ok(failed instanceof pkg.TtlKvError, `not a TtlKvError: ${failed}`);
    assert.equal(failed.code, "UNSUPPORTED", failed.message);
    assert.equal(failed.cause?.code, "ENOENT", "the cause is kept");
    // The engine file is there now: the failed load was not kept.
    mkdirSync(path.join(dir, "pkg"));
    writeFileSync(path.join(dir, "pkg", "ttlkv_web_bg.wasm"), readFileSync(serverFile("pkg/ttlkv_web_bg.wasm")));
    await roundTrips(pkg, "load-retry");
  });
});

test("relaxed writes lost to a failed commit make later writes and close() reject with its error; reopened, the database takes writes again", async () => {
  const adapter = mapAdapter();
  const clock = fakeClock();
  const name = `lost-${n++}`;
  const db = await open(name, { storage: adapter, clock, maintenance: "manual", durability: "relaxed" });
  await db.put("kept", "v");
  await db.flush();
  await db.put("lost", "v");
  adapter.failure = new Error("the disk is gone");
  await assert.rejects(db.flush(), { code: "STORAGE" });
  adapter.failure = null;
  // The relaxed write was acknowledged and is gone: no later write may land after it.
  assert.equal(await db.get("lost"), undefined);
  await assert.rejects(db.put("after", "v"), { code: "STORAGE", message: /^relaxed writes were lost; reopen the database: / });
  assert.equal(await db.get("kept"), "v", "reads go on");
  await assert.rejects(db.close(), { code: "STORAGE", message: /^relaxed writes were lost; reopen the database: / });
  const reopened = await open(name, { storage: adapter, clock, maintenance: "manual", durability: "relaxed" });
  assert.equal(await reopened.get("kept"), "v");
  assert.equal(await reopened.get("lost"), undefined);
  assert.equal(await reopened.get("after"), undefined);
  await reopened.put("again", "v");
  await reopened.close();
});

test("a maintenance step that failed is not retried at every call while storage keeps failing", async () => {
  const adapter = mapAdapter();
  const clock = fakeClock();
  // Durable: a failed commit of durable writes (the purge's) leaves the database writable, so a
  // step can be tried again (a failed commit of relaxed writes stops every later write instead).
  const db = await open(`spin-${n++}`, { storage: adapter, clock });
  const settle = () => new Promise((r) => setTimeout(r, 0));
  // Reads look at a starved maintenance timer every 32nd call.
  const reads = async () => {
    for (let i = 0; i < 32; i++) await db.get("k");
    await settle();
  };
  try {
    await db.put("k", "v", { ttlMs: 100 });
    adapter.failure = new Error("the disk is gone");
    // The key's purge is overdue: the next look at the timer starts the step, whose commit fails.
    clock.advance(200);
    await reads();
    assert.equal(adapter.failed, 1, "the overdue step ran, and failed");
    // Calls keep coming, 100 ms apart on the engine's clock: the failed step waits its second.
    for (let i = 0; i < 9; i++) {
      clock.advance(100);
      await reads();
    }
    assert.equal(adapter.failed, 1, "no retry at every call");
    // Its second come, the step is tried again.
    clock.advance(200);
    await reads();
    assert.equal(adapter.failed, 2, "tried again after its second");
  } finally {
    adapter.failure = null;
    await db.close().catch(() => {});
  }
});

test("in Node the server engine seals long pages with zlib.crc32, checked first (one that lies is refused), and the browser's engine reads them", async () => {
  const browser = await import(new URL("../../bindings/js/dist/index.js", import.meta.url).href);
  await browser.init({ bytes: readFileSync(new URL("../../bindings/js/dist/pkg/ttlkv_web_bg.wasm", import.meta.url)) });
  const adapterUrl = new URL("../../bindings/web/tests/support/fs_adapter.mjs", import.meta.url).href;
  for (const lies of [false, true]) {
    const dir = mkdtempSync(path.join(tmpdir(), "ttlkv-crc-"));
    try {
      // Node's zlib.crc32, as the engine finds it (process.getBuiltinModule), wrapped to count
      // its calls, or to lie.
      const script = `
        import zlib from "node:zlib";
        import { fsAdapter } from ${JSON.stringify(adapterUrl)};
        const real = zlib.crc32;
        let calls = 0;
        zlib.crc32 = (data, value) => {
          calls++;
          const sum = real(data, value);
          return ${lies} ? (sum ^ 1) >>> 0 : sum;
        };
        const { open } = await import(${JSON.stringify(serverFile("node.js").href)});
        const db = await open("crc", { storage: fsAdapter(${JSON.stringify(dir)}), maintenance: "manual" });
        // 20,000 keys: the engine's memory grows after the samples were summed, so the view of it
        // the host's sums read must be made again.
        for (let i = 0; i < 20000; i += 1000) {
          await db.batch(Array.from({ length: 1000 }, (_, j) => ({ type: "put", key: "k" + (i + j), value: "v".repeat(100) + (i + j) })));
        }
        await db.flush();
        await db.close();
        console.log(calls);
      `;
      const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
      assert.equal(child.status, 0, `the process died: ${child.stderr}`);
      const calls = Number(child.stdout.trim());
      if (lies) assert.equal(calls, 1, "a host that lies is asked once, for the first sample, and never again");
      else assert.ok(calls > 4 + 10, `four samples checked, then the WAL page and every 16 KiB data page: ${calls} calls`);
      const db = await browser.open("crc", { storage: fsAdapter(dir), maintenance: "manual" });
      for (let i = 0; i < 20000; i += 97) assert.equal(await db.get("k" + i), "v".repeat(100) + i);
      await db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
