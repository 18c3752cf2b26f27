// `ttlkv/keyv`, the Keyv 5 storage adapter, as a user installs it: the packed package in a
// scratch project beside keyv, cache-manager and vitest (linked from the repository's
// node_modules). @keyv/test-suite run by vitest; the quick starts of docs/runtimes.md (Keyv, cache-manager)
// run as written; namespaces, TTLs on a fake clock, native values, batches, iteration, errors and
// cache-manager's verbs. Build the package's JS first: `bash scripts/bundle-js.sh`.
// Run: `node --test tests/runtimes/keyv.test.mjs`.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { root, scratchProject } from "./support/packed.mjs";

for (const file of ["bindings/js/dist/server/node.js", "bindings/js/dist/keyv.js", "bindings/js/dist/adapters/node-fs.js"]) {
  if (!existsSync(path.join(root, file))) throw new Error(`${file} is missing: run \`bash scripts/bundle-js.sh\` first`);
}

// The scratch project: the packed package, this test's scripts, and the repository's other
// packages (keyv, @keyv/test-suite, cache-manager, vitest and their dependencies) linked in.
const sources = path.join(root, "tests/runtimes/keyv");
const project = scratchProject({
  ...Object.fromEntries(readdirSync(sources).map((f) => [f, readFileSync(path.join(sources, f))])),
  "api.mjs": [
    'export { open, destroy, TtlKvError } from "ttlkv";',
    'export { KeyvTtlkv } from "ttlkv/keyv";',
    'export { default as Keyv } from "keyv";',
    'export { createCache } from "cache-manager";',
    "",
  ].join("\n"),
});
for (const name of readdirSync(path.join(root, "node_modules"))) {
  const link = path.join(project, "node_modules", name);
  if (!name.startsWith(".") && !existsSync(link)) symlinkSync(path.join(root, "node_modules", name), link);
}
const { open, destroy, TtlKvError, KeyvTtlkv, Keyv, createCache } = await import(pathToFileURL(path.join(project, "api.mjs")).href);
const scratch = [project];
after(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

/** Run script `file` of the project with node in `cwd`; its stdout, or a failure with its stderr. */
function runScript(file, cwd) {
  const out = spawnSync(process.execPath, [path.join(project, file)], { cwd, encoding: "utf8" });
  assert.equal(out.status, 0, `${file} failed:\n${out.stderr}`);
  return out.stdout;
}

/** A clock standing still at the real time until advanced. */
function fakeClock() {
  let now = Date.now();
  const clock = () => now;
  clock.advance = (ms) => (now += ms);
  return clock;
}

let n = 0;
/** A fresh in-memory database on a fake clock, closed and destroyed after the test. */
async function freshDb(t, options = {}) {
  const name = `keyv-${n++}`;
  const clock = fakeClock();
  const db = await open(name, { storage: "memory", clock, maintenance: "manual", ...options });
  t.after(async () => {
    await db.close();
    await destroy(name, { storage: "memory" });
  });
  return { db, clock, name };
}

/** Keyv 5 wires `iterator()` only for its own dialects: what keyv.d.ts tells apps to do. */
function iterable(keyv) {
  keyv.iterator = keyv.generateIterator(keyv.store.iterator.bind(keyv.store));
  return keyv;
}

test("@keyv/test-suite passes (api, values, namespaces, iterator), run by vitest", (t) => {
  const vitest = path.join(project, "node_modules/vitest/vitest.mjs");
  const out = spawnSync(process.execPath, [vitest, "run", "--reporter=json", "--outputFile=results.json"], { cwd: project, encoding: "utf8" });
  const resultsFile = path.join(project, "results.json");
  assert.ok(existsSync(resultsFile), `vitest wrote no results:\n${out.stdout}${out.stderr}`);
  const results = JSON.parse(readFileSync(resultsFile, "utf8"));
  const tests = results.testResults.flatMap((file) => file.assertionResults);
  const failed = tests.filter((r) => r.status !== "passed");
  t.diagnostic(`${tests.length - failed.length}/${tests.length} passed`);
  assert.deepEqual(
    failed.map((r) => `${r.fullName}: ${r.status} ${(r.failureMessages ?? []).join(" ").split("\n")[0]}`),
    [],
  );
  assert.ok(tests.length >= 40, `only ${tests.length} tests ran`);
  assert.equal(out.status, 0, out.stderr);
});

test("the quick starts of docs/runtimes.md (Keyv; cache-manager on files) run as written", () => {
  const app = mkdtempSync(path.join(tmpdir(), "ttlkv-keyv-quickstart-"));
  scratch.push(app);
  assert.equal(runScript("keyv-quickstart.mjs", app), "{ name: 'Ada' }\nundefined\n");
  assert.equal(runScript("cache-quickstart.mjs", app), "loading user 1\n{ id: 1, name: 'Ada' }\n");
  assert.equal(runScript("cache-quickstart.mjs", app), "{ id: 1, name: 'Ada' }\n", "the second run reads the cache from ./data/cache");
});

test("the declarations type-check with keyv's and cache-manager's", (t) => {
  const tsc = path.join(root, "tests/e2e/node_modules/typescript/bin/tsc");
  if (!existsSync(tsc)) return t.skip("TypeScript is not installed (cd tests/e2e && npm install)");
  const args = ["--noEmit", "--strict", "--skipLibCheck", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "usage.ts"];
  const out = spawnSync(process.execPath, [tsc, ...args], { cwd: project, encoding: "utf8" });
  assert.equal(out.status, 0, `tsc found errors:\n${out.stdout}${out.stderr}`);
});

test("each Keyv namespace is a ttlkv namespace; the key keeps Keyv's TTL, on the database's clock", async (t) => {
  const { db, clock } = await freshDb(t);
  const users = new Keyv({ store: new KeyvTtlkv({ db }), namespace: "users" });
  await users.set("ann", { name: "Ann" }, 1_500);
  await users.set("bob", "Bob");
  await users.set("cy", "Cy", 1.2);
  const keyspace = db.namespace("users");
  assert.equal(await keyspace.ttl("users:ann"), 1_500);
  assert.equal(await keyspace.ttl("users:bob"), -1, "no ttl: no expiry");
  assert.equal(await keyspace.ttl("users:cy"), 2, "a fraction of a ms rounds up");
  assert.equal(await db.get("users:ann"), undefined, "not in the default keyspace");
  assert.deepEqual(await users.get("ann"), { name: "Ann" });
  clock.advance(1_500);
  // Keyv's own `expires` (real time) is still ahead: ttlkv's expiry is what hides the key.
  assert.equal(await users.get("ann"), undefined);
  assert.equal(await users.has("ann"), false);
  assert.equal(await users.get("bob"), "Bob");

  // Keys of no namespace are in the default keyspace.
  const plain = new Keyv({ store: new KeyvTtlkv({ db }), namespace: undefined });
  await plain.set("k", "v");
  assert.equal(typeof (await db.get("k")), "string", "Keyv's serialized entry, kept as a string");
  assert.equal(await plain.get("k"), "v");
});

test("without a ttl from Keyv the database's defaultTtlMs applies; other ttls as Keyv's own store reads them; not a number is INVALID_ARGUMENT", async (t) => {
  const { db } = await freshDb(t, { defaultTtlMs: 60_000 });
  const store = new KeyvTtlkv({ db });
  const keyv = new Keyv({ store });
  const ns = db.namespace("keyv");
  await keyv.set("a", 1);
  assert.equal(await ns.ttl("keyv:a"), 60_000);
  for (const ttl of [Number.NaN, "10"]) {
    await assert.rejects(store.set("keyv:b", "x", ttl), (e) => e instanceof TtlKvError && e.code === "INVALID_ARGUMENT", String(ttl));
  }
  // Infinity never expires; past the longest ttlkv keeps, the longest: the write lands either way
  // (it failed, and the old value stayed where Keyv's Map store would have written the new one).
  await keyv.set("inf", "old");
  assert.equal(await keyv.set("inf", "new", Infinity), true);
  assert.equal(await keyv.get("inf"), "new");
  assert.equal(await ns.ttl("keyv:inf"), -1, "no expiry");
  assert.equal(await keyv.set("huge", "v", Number.MAX_SAFE_INTEGER), true);
  assert.equal(await keyv.get("huge"), "v");
  assert.equal(await ns.ttl("keyv:huge"), Number.MAX_SAFE_INTEGER - 253_402_300_799_999);
  // 0 or less is over already: the key goes, as it would from Keyv's Map store.
  assert.equal(await store.set("keyv:inf", "x", -1), true);
  assert.equal(await keyv.get("inf"), undefined);
  assert.equal(await ns.has("keyv:inf"), false);
  assert.deepEqual(await store.setMany([{ key: "keyv:huge", value: "x", ttl: -5 }, { key: "keyv:c", value: "y", ttl: 1_000 }]), [true, true]);
  assert.equal(await ns.has("keyv:huge"), false);
  assert.equal(await ns.ttl("keyv:c"), 1_000);
});

test("stores opened by the same name share one open database: neither fences the other, and the last disconnect closes it", async (t) => {
  const name = `keyv-two-${n++}`;
  t.after(() => destroy(name, { storage: "memory" }));
  const a = new Keyv({ store: new KeyvTtlkv({ name, storage: "memory" }) });
  const b = new Keyv({ store: new KeyvTtlkv({ name, storage: "memory" }) });
  const errors = [];
  for (const k of [a, b]) k.on("error", (e) => errors.push(e.code));
  assert.equal(await a.set("k", 1), true);
  assert.equal(await b.set("k", 2), true);
  assert.equal(await a.set("k", 3), true);
  assert.equal(await b.get("k"), 3);
  assert.equal(await b.delete("k"), true);
  assert.equal(await a.get("k"), undefined);
  assert.deepEqual(errors, [], "no store was fenced");
  await a.disconnect();
  assert.equal(await b.set("after", "a left"), true, "the other store's database stays open");
  await b.disconnect();
  const db = await open(name, { storage: "memory" });
  assert.equal(typeof (await db.namespace("keyv").get("keyv:after")), "string");
  await db.close();
});

test("clear() removes the keys of its namespace and of no other", async (t) => {
  const { db } = await freshDb(t);
  const a = new Keyv({ store: new KeyvTtlkv({ db }), namespace: "a" });
  const b = new Keyv({ store: new KeyvTtlkv({ db }), namespace: "b" });
  const none = new Keyv({ store: new KeyvTtlkv({ db }), namespace: undefined });
  const errors = [];
  a.on("error", (e) => errors.push(e));
  await a.setMany(Array.from({ length: 500 }, (_, i) => ({ key: `k${i}`, value: i })));
  await b.set("k1", "b");
  await none.set("k1", "none");
  await a.clear();
  assert.deepEqual(errors, [], "clear() failed");
  assert.equal(await a.get("k1"), undefined);
  assert.equal(await a.get("k499"), undefined);
  assert.equal(await b.get("k1"), "b");
  assert.equal(await none.get("k1"), "none");
  await none.clear();
  assert.equal(await none.get("k1"), undefined);
  assert.equal(await b.get("k1"), "b", "clearing the default keyspace leaves namespaces alone");
});

test("with Keyv's serializer off, values are kept natively and read back with ttlkv's expiry", async (t) => {
  const { db, clock } = await freshDb(t);
  const store = new KeyvTtlkv({ db });
  const keyv = new Keyv({ store, serialize: undefined, deserialize: undefined });
  const values = { obj: { a: [1, "two", null] }, str: "text", num: 42, nil: null, no: false, list: [1, 2], bytes: new Uint8Array([1, 2, 3]) };
  for (const [key, value] of Object.entries(values)) assert.equal(await keyv.set(key, value, 10_000), true, key);
  await keyv.set("buffer", Buffer.from("buf"));
  await keyv.set("undef", undefined);
  for (const [key, value] of Object.entries(values)) assert.deepEqual(await keyv.get(key), value, key);
  assert.deepEqual(await keyv.get("buffer"), new Uint8Array(Buffer.from("buf")), "a Buffer reads back as its bytes");
  assert.equal(await keyv.get("undef"), undefined);
  // What the database holds: the value itself, not a string of it.
  const keyspace = db.namespace("keyv");
  assert.deepEqual(await keyspace.get("keyv:obj"), [{ a: [1, "two", null] }]);
  assert.deepEqual(await keyspace.get("keyv:bytes"), new Uint8Array([1, 2, 3]));
  assert.deepEqual(await keyv.getRaw("num"), { value: 42, expires: clock() + 10_000 });
  assert.deepEqual(await keyv.get(["str", "missing", "num"]), ["text", undefined, 42]);

  // What ttlkv cannot keep fails the set, with a hint; Keyv emits it.
  const errors = [];
  keyv.on("error", (e) => errors.push(e));
  assert.equal(await keyv.set("date", new Date(0)), false);
  assert.equal(errors.length, 1);
  assert.equal(errors[0].code, "INVALID_ARGUMENT");
  assert.match(errors[0].message, /serializer off/);
  assert.ok(errors[0].cause instanceof TtlKvError, "the engine's error is the cause");
});

test("setMany is one batch; get, has and delete of many keys", async (t) => {
  const { db } = await freshDb(t);
  const keyv = new Keyv({ store: new KeyvTtlkv({ db }) });
  assert.deepEqual(await keyv.setMany([{ key: "a", value: 1 }, { key: "b", value: "two", ttl: 5_000 }]), [true, true]);
  assert.equal(await db.namespace("keyv").ttl("keyv:b"), 5_000);
  assert.deepEqual(await keyv.get(["a", "b", "c"]), [1, "two", undefined]);
  assert.deepEqual(await keyv.has(["a", "c"]), [true, false]);
  assert.equal(await keyv.delete(["a", "c"]), true, "one of them was there");
  assert.equal(await keyv.delete(["a", "c"]), false);
  // A batch with a bad entry writes nothing.
  assert.deepEqual(await keyv.setMany([{ key: "x", value: 1 }, { key: "y", value: 2, ttl: Number.NaN }]), [false, false]);
  assert.equal(await keyv.get("x"), undefined);
});

test("iterator(namespace) reads one namespace, live keys only, as Keyv's iterator()", async (t) => {
  const { db, clock } = await freshDb(t);
  const store = new KeyvTtlkv({ db });
  const a = iterable(new Keyv({ store, namespace: "a" }));
  await a.set("x", 1);
  await a.set("y", 2, 100);
  await a.set("z", 3);
  const other = new Keyv({ store: new KeyvTtlkv({ db }), namespace: "b" });
  await other.set("x", "other");
  clock.advance(100);
  const raw = [];
  for await (const [key, stored] of store.iterator("a")) raw.push([key, typeof stored]);
  assert.deepEqual(raw, [["a:x", "string"], ["a:z", "string"]]);
  const seen = [];
  for await (const entry of a.iterator()) seen.push(entry);
  assert.deepEqual(seen, [["x", 1], ["z", 3]]);
});

test("{ name, ...openOptions } opens on first use and disconnect() closes it; { db } stays open", async (t) => {
  const name = `keyv-owned-${n++}`;
  t.after(() => destroy(name, { storage: "memory" }));
  const store = new KeyvTtlkv({ name, storage: "memory", maintenance: "manual" });
  const keyv = new Keyv({ store });
  await keyv.set("k", "v");
  await keyv.disconnect();
  await assert.rejects(store.get("keyv:k"), (e) => e.code === "CLOSED");
  const db = await open(name, { storage: "memory" });
  assert.equal(typeof (await db.namespace("keyv").get("keyv:k")), "string", "the store opened the database by its name");
  await db.close();

  const { db: given } = await freshDb(t);
  const shared = new KeyvTtlkv({ db: given });
  await new Keyv({ store: shared }).disconnect();
  assert.equal(await given.put("still", "open"), true, "a database given as { db } is the app's to close");
});

test("errors: bad options throw INVALID_ARGUMENT; a database that cannot open reaches 'error' listeners", async () => {
  for (const bad of [undefined, {}, { name: "" }, { db: {} }, { db: null, name: "x" }]) {
    assert.throws(() => new KeyvTtlkv(bad), (e) => e instanceof TtlKvError && e.code === "INVALID_ARGUMENT", JSON.stringify(bad));
  }
  const db = await open(`keyv-both-${n++}`, { storage: "memory" });
  assert.throws(() => new KeyvTtlkv({ db, name: "x" }), /not both/);
  assert.throws(() => new KeyvTtlkv({ db, storage: "memory" }), /not both/);
  await db.close();

  const store = new KeyvTtlkv({ name: "x", storage: "nowhere" });
  const fromStore = [];
  store.on("error", (e) => fromStore.push(e));
  const keyv = new Keyv({ store });
  const fromKeyv = [];
  keyv.on("error", (e) => fromKeyv.push(e));
  assert.equal(await keyv.set("k", "v"), false);
  assert.equal(fromStore.length, 1);
  assert.equal(fromStore[0].code, "INVALID_ARGUMENT");
  assert.ok(fromKeyv.includes(fromStore[0]), "Keyv passes the store's error on");
  await assert.rejects(store.get("k"), (e) => e.code === "INVALID_ARGUMENT", "the next call tries to open again");
});

test("cache-manager 7: set, get, ttl, mset, mget, del, clear and wrap on a KeyvTtlkv store", async (t) => {
  const { db, clock } = await freshDb(t);
  const cache = createCache({ stores: [new Keyv({ store: new KeyvTtlkv({ db }), namespace: "cm" })] });
  const keyspace = db.namespace("cm");

  assert.deepEqual(await cache.set("user:1", { name: "Ada" }, 60_000), { name: "Ada" });
  assert.deepEqual(await cache.get("user:1"), { name: "Ada" });
  assert.equal(await keyspace.ttl("cm:user:1"), 60_000, "the TTL reaches ttlkv");
  const expires = await cache.ttl("user:1");
  assert.ok(Math.abs(expires - (Date.now() + 60_000)) < 5_000, `ttl() is when it expires: ${expires}`);

  await cache.mset([{ key: "a", value: 1 }, { key: "b", value: 2, ttl: 1_000 }]);
  assert.deepEqual(await cache.mget(["a", "b", "missing"]), [1, 2, undefined]);
  assert.equal(await cache.del("a"), true);
  assert.equal(await cache.get("a"), undefined);

  let loads = 0;
  const load = async () => ({ loaded: ++loads });
  assert.deepEqual(await cache.wrap("w", load, 2_000), { loaded: 1 });
  assert.deepEqual(await cache.wrap("w", load, 2_000), { loaded: 1 }, "served from the store");
  clock.advance(2_000);
  assert.deepEqual(await cache.wrap("w", load, 2_000), { loaded: 2 }, "expired in ttlkv: loaded again");
  assert.equal(await cache.get("b"), undefined, "b's TTL ran out on the database's clock");

  assert.equal(await cache.clear(), true);
  assert.equal(await cache.get("user:1"), undefined);
  assert.equal(await cache.get("w"), undefined);
});
