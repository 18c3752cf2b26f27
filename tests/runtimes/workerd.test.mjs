// The npm package in workerd, Cloudflare's runtime, as a user deploys it: the packed package in a
// scratch project, each worker bundled the way wrangler bundles it (support/workerd.mjs) and
// served by the workerd binary. Build the package's JS first: `bash scripts/bundle-js.sh`; the
// conformance test also needs the test build of the engine (`bash scripts/build-conformance.sh`).
// Run: `node --test tests/runtimes/`.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { filesOf, root, scratchProject } from "./support/packed.mjs";
import { startWorkerd, wranglerOptions } from "./support/workerd.mjs";

const needed = {
  "bindings/js/dist/server/workerd.js": "bash scripts/bundle-js.sh",
  "bindings/js/dist/adapters/durable-object.js": "bash scripts/bundle-js.sh",
  "target/conformance-pkg/ttlkv_web.js": "bash scripts/build-conformance.sh",
};
for (const [file, build] of Object.entries(needed)) {
  if (!existsSync(path.join(root, file))) throw new Error(`${file} is missing: run \`${build}\` first`);
}

// One scratch project for every worker: the packed package in node_modules, the worker sources,
// and the conformance build of the engine beside them.
const sources = path.join(root, "tests/runtimes/workerd");
const conformance = path.join(root, "target/conformance-pkg");
const project = scratchProject({
  ...Object.fromEntries(readdirSync(sources).map((f) => [f, readFileSync(path.join(sources, f))])),
  ...filesOf(conformance, "conformance"),
});
const workerSource = (name) => path.join(project, name);
// The quick starts' wrangler configs, as workerd configs: the Worker's serves every stateless
// worker here; the Durable Object's, with the test's own classes added, the objects' worker.
const workerConfig = wranglerOptions(path.join(sources, "quickstart-worker.wrangler.jsonc"));
const objectsConfig = wranglerOptions(path.join(sources, "quickstart-durable-object.wrangler.jsonc"));

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const post = (body) => ({ method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });

/** What workerd printed that is a complaint: warnings, errors, cross-request or hung promises. */
function complaints(printed) {
  return printed.split("\n").filter((line) => /warn|error|exception|cross-request|different request|hung|never/i.test(line));
}

/** Asserts workerd printed no complaint since `from` (an offset into its output). */
function assertQuiet(worker, from = 0) {
  assert.deepEqual(complaints(worker.output().slice(from)), [], "workerd printed complaints");
}

/** The Durable Objects worker, started by the first test that needs it and kept for the rest. */
let objectsWorker;
async function durableObjects() {
  objectsWorker ??= startWorkerd(workerSource("durable-objects.js"), {
    ...objectsConfig,
    durableObjects: [
      ...objectsConfig.durableObjects,
      { className: "Conformance", binding: "CONFORMANCE", sqlite: true },
      { className: "Lab", binding: "LAB", sqlite: true },
    ],
  });
  return objectsWorker;
}
/** The same worker served with workerd's test hooks (`experimental`), for the full-storage test. */
let hooksWorker;
function durableObjectsWithTestHooks() {
  hooksWorker ??= startWorkerd(workerSource("durable-objects.js"), {
    ...objectsConfig,
    compatibilityFlags: [...(objectsConfig.compatibilityFlags ?? []), "experimental"],
    experimental: true,
    durableObjects: [...objectsConfig.durableObjects, { className: "Lab", binding: "LAB", sqlite: true }],
  });
  return hooksWorker;
}
after(async () => {
  await (await objectsWorker)?.close();
  await (await hooksWorker)?.close();
  rmSync(project, { recursive: true, force: true });
});

test("a worker in workerd serves requests from one database opened at module level (TTL verbs, expire events, scan, compact, stats, close)", async (t) => {
  const worker = await startWorkerd(workerSource("memory-worker.js"), workerConfig);
  t.after(() => worker.close());
  /** `db[method](...args)` in the worker, one request each. */
  async function call(method, ...args) {
    const answer = await worker.json("/call", post({ method, args }));
    if (answer.error) throw Object.assign(new Error(`${method}: ${answer.error.message}`), answer.error);
    return answer.undefined ? undefined : answer.result;
  }
  /** The worker's other routes: advance (the fake clock), scan, events, info. */
  const route = async (name, body = {}) => (await worker.json(`/${name}`, post(body))).result;
  const { now: T0 } = await route("info");

  // Expiry given three ways, then read back.
  assert.equal(await call("put", "session:ann", { user: "ann" }, { ttlMs: 1000 }), true);
  assert.equal(await call("put", "session:bob", "bob", { expireAt: T0 + 5000 }), true);
  assert.equal(await call("put", "plain", "p"), true);
  assert.equal(await call("ttl", "session:ann"), 1000);
  assert.equal(await call("ttl", "session:bob"), 5000);
  assert.equal(await call("ttl", "plain"), -1);
  assert.equal(await call("ttl", "missing"), -2);
  assert.equal(await call("expire", "plain", 3000), true);
  assert.equal(await call("ttl", "plain"), 3000);
  assert.equal(await call("persist", "plain"), true);
  assert.equal(await call("ttl", "plain"), -1);
  assert.equal(await call("expireAt", "missing", T0 + 10), false, "no expiry for an absent key");
  // getEx slides the session: 2 s from now instead of 1.
  assert.deepEqual(await call("getEx", "session:ann", { ttlMs: 2000 }), { user: "ann" });
  assert.equal(await call("ttl", "session:ann"), 2000);

  // Time passes in the worker: expired keys read as absent at once, events wait for a purge.
  await route("advance", { ms: 2500 });
  assert.equal(await call("get", "session:ann"), undefined);
  assert.equal(await call("ttl", "session:ann"), -2);
  assert.equal(await call("get", "session:bob"), "bob");
  assert.deepEqual(await route("events"), [], "manual maintenance: no purge, no event yet");
  assert.equal(await call("purgeExpired"), 1);
  assert.deepEqual(await route("events"), [{ key: "session:ann", value: { user: "ann" }, expireAt: T0 + 2000 }]);
  assert.deepEqual(await route("scan", { options: { prefix: "session:" } }), [{ key: "session:bob", value: "bob", expireAt: T0 + 5000 }]);

  // Enough keys to flush into SSTs and compact them.
  for (let round = 0; round < 4; round++) {
    const ops = Array.from({ length: 50 }, (_, i) => ({ type: "put", key: `item:${round}:${i}`, value: { round, i }, ...(i % 2 ? { ttlMs: 10_000 } : {}) }));
    await call("batch", ops);
    await call("flush");
  }
  const flushed = await call("stats");
  assert.equal(flushed.memtableBytes, 0, "flushed: nothing left in the memtable");
  const ssts = (stats) => stats.levels.flatMap((l) => l.ssts);
  assert.ok(ssts(flushed).length >= 4, `four flushes, four SSTs at least: ${JSON.stringify(flushed.levels)}`);
  await call("compact");
  const compacted = await call("stats");
  assert.ok(ssts(compacted).length < ssts(flushed).length, "compaction merged SSTs");
  const rows = (stats) => ssts(stats).reduce((n, s) => n + s.rows, 0);
  assert.equal(compacted.levels[0].ssts.length, 0, "level 0 compacted into the levels below");
  assert.ok(rows(compacted) >= 200 && rows(compacted) <= rows(flushed), `every item kept, no row gained: ${rows(flushed)} -> ${rows(compacted)}`);
  assert.equal((await route("scan", { options: { prefix: "item:" } })).length, 200);

  // The items with a TTL expire together: one purge, one event each.
  await route("advance", { ms: 10_000 });
  assert.equal(await call("purgeExpired"), 101, "the 100 items with a TTL and session:bob");
  const events = await route("events");
  assert.equal(events.length, 101);
  assert.ok(events.every((e) => e.expireAt <= T0 + 12_500 && !("namespace" in e)));
  assert.equal((await route("scan", {})).length, 101, "100 items without TTL, and plain");

  assert.equal((await route("info")).opens, 1, "every request used the database the first one opened");
  assert.equal(await call("close"), undefined);
  await assert.rejects(call("get", "plain"), (e) => e.code === "CLOSED");
  assertQuiet(worker);
});

test("the Worker quick start of docs/runtimes.md stores values with a TTL in workerd", async (t) => {
  const worker = await startWorkerd(workerSource("quickstart-worker.js"), workerConfig);
  t.after(() => worker.close());
  assert.equal((await worker.fetch("/greeting?ttl=60000", { method: "PUT", body: "hello" })).status, 204);
  assert.equal((await worker.fetch("/brief?ttl=50", { method: "PUT", body: "gone soon" })).status, 204);
  const greeting = await worker.fetch("/greeting");
  assert.equal(await greeting.text(), "hello");
  assert.equal((await worker.fetch("/nothing")).status, 404);
  await sleep(150);
  assert.equal((await worker.fetch("/brief")).status, 404, "expired after its 50 ms");
  assert.equal(await (await worker.fetch("/greeting")).text(), "hello");
  assertQuiet(worker);
});

test("automatic maintenance in workerd: a stateless worker purges overdue keys on the next write; a Durable Object on its timer", async (t) => {
  const worker = await startWorkerd(workerSource("auto-worker.js"), workerConfig);
  t.after(() => worker.close());
  const memory = (route) => worker.json(`/memory/${route}`);

  await t.test("the timer armed by a request ends with it; the next write runs the overdue purge", async () => {
    await memory("put?key=a&ttl=300");
    await memory("put?key=b&ttl=300");
    await memory("put?key=keep");
    await sleep(700);
    assert.deepEqual((await memory("events")).expired, [], "the purge timer of the first requests never fired");
    // A read hides expired keys at once but runs no overdue step (only every 32nd read looks).
    assert.deepEqual(await memory("get?key=a"), { result: null, expired: [] });
    // A write finds the timer overdue and runs the maintenance step during its request.
    await memory("put?key=c");
    assert.deepEqual((await memory("events")).expired, ["a", "b"], "the overdue purge ran for the write");
    assert.equal((await memory("purge")).result, 0, "nothing left to purge");
    assert.equal((await memory("get?key=keep")).result, "v");
  });

  await t.test("a timer fires while the request that armed it is still running", async () => {
    const { expired } = await memory("put-and-wait?key=d&ttl=100&wait=500");
    assert.deepEqual(expired, ["a", "b", "d"]);
  });

  await t.test("concurrent requests share the database without cross-request complaints", async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => worker.fetch(`/memory/put?key=k${i}&ttl=100`)));
    assert.deepEqual(answers.map((a) => a.status), Array(20).fill(200));
    await sleep(300);
    await memory("put?key=trigger");
    assert.equal((await memory("events")).expired.filter((k) => k.startsWith("k")).length, 20);
    assertQuiet(worker);
  });

  await t.test("in a Durable Object the maintenance timer outlives the request that armed it", async () => {
    const objects = await durableObjects();
    assert.deepEqual((await objects.json("/lab/auto/put?key=x&ttl=200")).expired, []);
    await sleep(700);
    assert.deepEqual((await objects.json("/lab/auto/events")).expired, ["x"], "purged by the timer, no request running");
  });

  await t.test(
    "a maintenance step started during one request does not wedge the database for the next (adapter with async I/O)",
    async () => {
      const slow = (route) => worker.fetch(`/slow/${route}`, { signal: AbortSignal.timeout(5_000) });
      const from = worker.output().length;
      assert.equal((await slow("put?key=a&ttl=100")).status, 200);
      await sleep(300);
      assert.equal((await slow("put?key=b")).status, 200, "this write starts the overdue step");
      const next = await slow("put?key=c");
      assert.equal(next.status, 200, `the next write failed: ${complaints(worker.output().slice(from)).join("\n")}`);
      assertQuiet(worker, from);
    },
  );
});

test("the Durable Objects adapter passes the core's page-store conformance suite inside workerd", async (t) => {
  const objects = await durableObjects();
  const behaviours = await objects.json("/conformance/behaviours");
  assert.ok(behaviours.length >= 19, `the suite names its behaviours: ${behaviours}`);
  for (const name of behaviours) {
    await t.test(name, async () => {
      const { ok, error, violations } = await objects.json(`/conformance/check?behaviour=${name}`);
      assert.deepEqual(violations, [], "no storage call over the platform's limits");
      assert.ok(ok, `${name} failed: ${error}\nworkerd printed:\n${objects.output()}`);
    });
  }
  // Last: a failing behaviour leaves the suite's engine unusable.
  await t.test("the suite inside workerd catches an adapter without the version check", async () => {
    const from = objects.output().length;
    const { ok } = await objects.json("/conformance/broken?behaviour=stale_precondition_fails_fenced_and_writes_nothing");
    assert.equal(ok, false);
    assert.match(objects.output().slice(from), /must fail with Fenced/);
  });
});

test("a database on a Durable Object survives a workerd restart: keys, values and TTLs (the quick start of docs/runtimes.md)", async () => {
  const objects = await durableObjects();
  const from = objects.output().length;
  const put = (key, value, query = "") => objects.fetch(`/sessions/${key}?user=ann${query}`, { method: "PUT", body: JSON.stringify(value) });
  const entry = async (key, user = "ann") => {
    const answer = await objects.fetch(`/sessions/${key}?user=${user}`);
    return answer.status === 404 ? undefined : answer.json();
  };
  assert.equal((await put("cart", { items: [1, 2] })).status, 204);
  assert.equal((await put("token", "t-123", "&ttl=3600000")).status, 204);
  const shortLived = Date.now();
  assert.equal((await put("otp", "4321", "&ttl=400")).status, 204);
  const cart = await entry("cart");
  const token = await entry("token");
  assert.deepEqual(cart, { key: "cart", value: { items: [1, 2] }, expireAt: null });
  assert.equal(token.value, "t-123");
  assert.ok(token.expireAt > Date.now() + 3_500_000);
  assert.equal((await entry("otp")).value, "4321");
  assert.equal(await entry("cart", "bob"), undefined, "another user's object holds another database");

  await objects.restart();
  await sleep(Math.max(0, shortLived + 600 - Date.now()));
  assert.deepEqual(await entry("cart"), cart);
  assert.deepEqual(await entry("token"), token, "the same expiry after the restart");
  assert.equal(await entry("otp"), undefined, "its 400 ms passed across the restart");
  assertQuiet(objects, from);
});

test("the Durable Objects adapter's commit is atomic when the transaction fails at any storage operation", async () => {
  const objects = await durableObjects();
  const from = objects.output().length;
  const { problems, runs } = await objects.json("/lab/crash", { method: "POST" });
  assert.deepEqual(problems, []);
  for (const when of ["before", "after"]) {
    const { failed, operations } = runs[when];
    assert.ok(operations >= 10, `a large commit takes many storage operations (${operations})`);
    assert.equal(failed, operations, `a failure ${when} every one of its ${operations} operations`);
  }
  assertQuiet(objects, from);
});

test("a Durable Object whose storage is full: the platform starts the object again, which finds nothing of the failed commit and writes what fits", async () => {
  // workerd's test hook caps the object's SQLite database (`experimental` only), as the
  // platform's storage limit does. SQLITE_FULL breaks the object's output gate: the request
  // fails before any JavaScript sees the error, and the next one reaches the object started again.
  const objects = await durableObjectsWithTestHooks();
  const from = objects.output().length;
  const response = await objects.fetch("/lab/full", { method: "POST" });
  assert.equal(response.status, 500);
  assert.match(objects.output().slice(from), /broken\.outputGateBroken; jsg\.Error: database or disk is full: SQLITE_FULL/);
  assert.deepEqual(await objects.json("/lab/full/after", { method: "POST" }), { kept: "before", big: null, after: "fits" });
});

test("a read beside a Durable Objects commit in flight sees the store as it was, not the commit's uncommitted writes", async () => {
  const objects = await durableObjects();
  const seen = await objects.json("/lab/isolation", { method: "POST" });
  assert.deepEqual(seen, { failed: true, manifestVersion: 1, added: null, deletedStillThere: true, listedAsBefore: true });
});

test("a Durable Object whose manifest head lost its version: the adapter reads and commits CORRUPTION, not version 0 and FENCED", async () => {
  const objects = await durableObjects();
  const outcomes = await objects.json("/lab/damaged-head", { method: "POST" });
  const corrupt = ["CORRUPTION", "CORRUPTION"];
  assert.deepEqual(outcomes, { 1: corrupt, "-1": corrupt, 9007199254740992: corrupt, null: corrupt });
});

test("the Durable Objects adapter goes past the platform's limits: a 5 MiB value and a commit of 1,500 pages round-trip", async () => {
  const objects = await durableObjects();
  const from = objects.output().length;
  const report = await objects.json("/lab/sizes", { method: "POST" });
  assert.deepEqual(report.violations, [], "no storage call over 128 keys, a 2 KiB key or a 128 KiB value");
  assert.equal(report.fromWal, true, "the value reads back from the WAL after a reopen");
  assert.equal(report.fromSst, true, "and from an SST after a flush, a compaction and a reopen");
  assert.ok(report.mostChunks >= 40, `the value's pages were cut into chunks (${report.mostChunks} at most)`);
  assert.deepEqual(report.problems, []);
  assert.deepEqual(report.left, ["pages/manifest", "pages/manifest/0"], "deleting every page leaves no chunk behind");
  assertQuiet(objects, from);
});
