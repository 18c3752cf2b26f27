// Hostile input: every API method called with random arguments (wrong types, huge and empty keys,
// NaN / Infinity / negative TTLs, deep and cyclic objects, `__proto__` keys, proxies and getters
// that throw, ...). The instance must never panic (a panic poisons the wasm instance), every
// failure must be a TtlKvError with a stable code, and the data written before must be intact
// afterwards. Seeded, so a failure reproduces: TTLKV_API_FUZZ_SEED, TTLKV_API_FUZZ_CASES.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fakeClock, mapAdapter } from "./helpers.mjs";
import { rng } from "../../bench/workloads.mjs"; // the seeded PRNG the benchmarks use too
const { open, destroy, TtlKvError, CODES } = await import(process.env.TTLKV_PACKAGE ?? "../../bindings/js/node.js");

const CASES = Number(process.env.TTLKV_API_FUZZ_CASES ?? 3000);
const SEED = Number(process.env.TTLKV_API_FUZZ_SEED ?? 0x7711c0de);

function deep(depth) {
  let o = { leaf: 1 };
  for (let i = 0; i < depth; i++) o = { o };
  return o;
}

/** A generator of hostile values. */
function hostile(random) {
  const pick = (xs) => xs[Math.floor(random() * xs.length)];
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  const cyclicArray = [1];
  cyclicArray.push(cyclicArray);
  const throwingGetter = Object.defineProperty({}, "ttlMs", {
    enumerable: true,
    get() {
      throw new Error("getter throws");
    },
  });
  const throwingProxy = new Proxy({}, {
    get() { throw new Error("proxy get throws"); },
    ownKeys() { throw new Error("proxy ownKeys throws"); },
    has() { throw new Error("proxy has throws"); },
    getOwnPropertyDescriptor() { throw new Error("proxy descriptor throws"); },
    getPrototypeOf() { throw new Error("proxy getPrototypeOf throws"); },
  });
  const makers = [
    () => undefined,
    () => null,
    () => NaN,
    () => Infinity,
    () => -Infinity,
    () => -1,
    () => 0,
    () => -0,
    () => 1.5,
    () => 2 ** 53,
    () => Number.MAX_VALUE,
    () => Math.floor(random() * 100_000) + 1,
    () => 10n,
    () => true,
    () => false,
    () => "",
    () => "k" + Math.floor(random() * 50),
    () => "__proto__",
    () => "constructor",
    () => "\uD800",
    () => "é😀\u0000",
    () => "x".repeat(4097),
    () => "y".repeat(4096),
    () => new Uint8Array(0),
    () => new Uint8Array([1, 2, 3]),
    () => new Uint8Array(4097),
    () => new ArrayBuffer(4),
    () => new DataView(new ArrayBuffer(2)),
    () => new Uint16Array([1, 2]),
    () => Symbol("s"),
    () => () => 1,
    () => async () => 1,
    () => new Date(0),
    () => new Map([[1, 2]]),
    () => new Set([1]),
    () => Promise.resolve(1),
    () => new (class Point { constructor() { this.x = 1; } })(),
    () => Object.create(null),
    () => JSON.parse('{"__proto__": {"polluted": true}, "a": 1}'),
    () => ({ constructor: { prototype: { polluted: true } } }),
    () => deep(300),
    () => deep(50),
    () => cyclic,
    () => cyclicArray,
    () => throwingGetter,
    () => throwingProxy,
    () => [1, "two", null, { three: [3] }],
    () => new Array(5),
    () => ({ ttlMs: pick([NaN, -5, 0, 1.5, Infinity, "5", 5, 2 ** 60]) }),
    () => ({ expireAt: pick([NaN, -5, 0, 1.5, 1e300, "5", Date.now()]) }),
    () => ({ ttlMs: 5, expireAt: 5 }),
    () => ({ keepTtl: pick([true, false, 1, "yes"]), noExpiry: pick([true, undefined]) }),
    () => ({ ifAbsent: pick([true, 1, "x"]), ifPresent: pick([true, false, null]) }),
    () => ({ nx: true, xx: true, gt: pick([true, 1]), lt: true }),
    () => ({ persist: pick([true, false, "true"]) }),
    () => ({ prefix: pick(["", "k", 5, null, new Uint8Array(0)]), limit: pick([-1, 0, 1.5, NaN, 3]), reverse: pick([true, "no", 1]) }),
    () => ({ start: pick(["b", 1, ""]), end: pick(["a", "", null]) }),
    () => ({ limit: pick([0, -1, 2, NaN, "1", 1e12]) }),
    () => ({ defaultTtlMs: pick([NaN, -1, 0, 5, null]), maxTtlMs: pick([NaN, -1, 0, 5, Infinity]) }),
    () => ({ unknownOption: 1 }),
    () => ({ storage: pick(["memory", "indexeddb", "auto", "disk", 5, {}, null]), clock: pick([5, () => NaN, () => "x", undefined]), maintenance: pick(["auto", "manual", "sometimes", 1]), durability: pick(["durable", "relaxed", "eventual", 0]) }),
    () => [{ type: "put", key: "k1", value: 1 }, { type: pick(["put", "delete", "merge", 5]), key: pick(["k2", "", 5, null]), value: pick([1, undefined, NaN]) }],
    () => [{ type: "delete" }],
    () => new Array(3).fill({ type: "put", key: "same", value: "v" }),
  ];
  return () => pick(makers)();
}

test(`API fuzz: random arguments to every method never panic, reject with codes, and lose nothing`, async () => {
  const random = rng(SEED);
  const value = hostile(random);
  const clock = fakeClock();
  const adapter = mapAdapter();
  const db = await open("fuzz", { storage: adapter, clock, maintenance: "manual" });
  const baseline = new Map();
  for (let i = 0; i < 200; i++) baseline.set(`\u0001base:${i}`, i % 3 === 0 ? { i, tags: ["a"] } : i % 3 === 1 ? `v${i}` : new Uint8Array([i % 256, 1]));
  await db.batch([...baseline].map(([key, v]) => ({ type: "put", key, value: v })));
  await db.flush();

  const codes = new Map();
  let calls = 0;
  let resolved = 0;
  let released = [];
  const handles = [db];
  const methods = [
    (h, a) => h.put(a(), a(), a()),
    (h, a) => h.put(a(), a()),
    (h, a) => h.get(a()),
    (h, a) => h.getMany(a()),
    (h, a) => h.getMany([a(), a()]),
    (h, a) => h.getEntry(a()),
    (h, a) => h.has(a()),
    (h, a) => h.delete(a()),
    (h, a) => h.ttl(a()),
    (h, a) => h.expire(a(), a(), a()),
    (h, a) => h.expireAt(a(), a(), a()),
    (h, a) => h.persist(a()),
    (h, a) => h.getEx(a(), a()),
    async (h, a) => {
      const out = [];
      for await (const e of h.scan(a())) if (out.push(e) > 20) break;
      return out;
    },
    (h, a) => h.batch(a()),
    (h, a) => h.batch([{ type: "put", key: a(), value: a(), ttlMs: a() }, { type: "delete", key: a() }]),
    async (h, a) => {
      const s = await h.snapshot();
      released.push(s);
      await s.get(a());
      await s.ttl(a());
      for await (const _ of s.scan(a())) break;
      s.release();
      return s.get("k1");
    },
    async (h, a) => {
      const ns = h.namespace(a(), a());
      handles.push(ns);
      return ns.put(a(), a(), a());
    },
    (h, a) => h.dropNamespace?.(a()),
    (h, a) => h.purgeExpired(a()),
    (h) => h.flush(),
    (h) => h.compact(),
    (h) => h.stats(),
    (h, a) => h.on(a(), a()),
    (h, a) => h.off(a(), a()),
    (_, a) => open(a(), a()),
    (_, a) => destroy(a(), a()),
    (_, a) => open("fuzz-side", a()).then((d) => d.close()),
    async () => {
      clock.advance(Math.floor(random() * 5_000));
    },
  ];

  for (let i = 0; i < CASES; i++) {
    const handle = handles[Math.floor(random() * handles.length)];
    const method = methods[Math.floor(random() * methods.length)];
    calls++;
    let outcome;
    try {
      outcome = await method(handle, value);
      resolved++;
    } catch (e) {
      assert.ok(!(e instanceof WebAssembly.RuntimeError), `case ${i}: the wasm instance trapped: ${e}`);
      assert.ok(e instanceof TtlKvError, `case ${i}: a rejection that is not a TtlKvError: ${e?.name}: ${e?.message}`);
      assert.ok(CODES.includes(e.code), `case ${i}: unknown code ${e.code}`);
      codes.set(e.code, (codes.get(e.code) ?? 0) + 1);
      if (process.env.TTLKV_API_FUZZ_SHOW === e.code) console.log(`case ${i}: ${e.code}: ${e.message} ${String(e.cause?.stack ?? e.stack).split("\n").slice(0, 6).join(" / ")}`);
      if (e.code === "CLOSED" && handle === db) assert.fail(`case ${i}: the main handle was closed: ${e.message}`);
    }
    void outcome;
    // A namespace handle closes the whole database (documented); keep the fuzz on live handles.
    if (handles.length > 20) handles.splice(1, handles.length - 20);
  }

  // Nothing written before is lost or changed, and the instance still works.
  for (const [key, v] of baseline) assert.deepEqual(await db.get(key), v, `baseline key ${key}`);
  assert.equal(await db.put("after-fuzz", "ok"), true);
  assert.equal(await db.get("after-fuzz"), "ok");
  await db.close();
  const reopened = await open("fuzz", { storage: adapter, clock, maintenance: "manual" });
  for (const [key, v] of baseline) assert.deepEqual(await reopened.get(key), v, `baseline key ${key} after reopen`);
  await reopened.close();
  assert.equal(Object.prototype.polluted, undefined, "no prototype was polluted");
  const summary = [...codes].sort().map(([c, n]) => `${c} ${n}`).join(", ");
  console.log(`API fuzz: ${CASES} cases (seed ${SEED}), ${calls} calls, ${resolved} resolved, rejected: ${summary}`);
});
