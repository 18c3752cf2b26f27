// Crash and race tests of the Deno KV adapter's commit, on in-memory Deno KVs.
//   deno run --unstable-kv crash.js
// Prints { ops, trials, failures } as JSON: `ops` is how many KV operations each commit takes,
// `trials` how many runs of each kind ended with the store as before and as after the commit,
// `failures` what went wrong in each section (all empty when all is well).
import { denoKvStorage, destroyDenoKvStorage } from "ttlkv/deno-kv";
import { audit, bytes, contents, contentsAfter, dataPage, faultyKv, metaPage, outcome, walPage } from "./support.js";

const PREFIX = ["db", 1];
const failures = {};
const trials = {};
const ops = {};
// The section of the tests running, whose failures `fail` records.
let section;
function begin(name) {
  section = name;
  failures[name] = [];
}
const fail = (message) => failures[section].push(message);

// The store every trial starts from: manifest version 1 and 153 pages.
const BASE = {
  expectedVersion: 0,
  manifest: { version: 1, bytes: bytes(1, 70_000) },
  puts: [
    ...Array.from({ length: 150 }, (_, i) => [dataPage(3, i), bytes(100 + i, 40)]),
    [walPage(1), bytes(2, 1024)],
    [walPage(2), bytes(3, 1024)],
    [metaPage(3), bytes(4, 2048)],
  ],
  deletes: [],
};

// Far above one Deno KV operation's caps (2.9 MiB in 275 pages put or deleted): goes through a
// journal, applied in two slices.
const JOURNALED = {
  expectedVersion: 1,
  manifest: { version: 2, bytes: bytes(5, 100_000) },
  puts: [
    ...Array.from({ length: 120 }, (_, i) => [dataPage(4, i), bytes(1000 + i, 16 * 1024)]),
    [dataPage(5, 0), bytes(6, 1024 * 1024)],
    [walPage(1), bytes(7, 3000)],
    [metaPage(4), bytes(8, 4096)],
  ],
  deletes: [...Array.from({ length: 150 }, (_, i) => dataPage(3, i)), metaPage(3), walPage(9)],
};

// Small enough for one atomic operation, replacing the manifest, a page, and deleting two.
const ONE_OP = {
  expectedVersion: 1,
  manifest: { version: 2, bytes: bytes(9, 1000) },
  puts: [
    [walPage(3), bytes(10, 2000)],
    [walPage(1), bytes(11, 500)],
    [dataPage(3, 0), new Uint8Array(0)],
  ],
  deletes: [dataPage(3, 1), walPage(2), walPage(7)],
};

async function seeded() {
  const kv = await Deno.openKv(":memory:");
  await denoKvStorage(kv, { prefix: PREFIX }).commit(BASE);
  return kv;
}

const expect = (ok, message) => ok || fail(message);

/** The store's state after a fresh adapter recovered it: "before", "after" or "neither". */
async function judge(kv, before, after, what) {
  const state = await contents(denoKvStorage(kv, { prefix: PREFIX }));
  for (const problem of await audit(kv, PREFIX)) fail(`${what}: ${problem}`);
  return state === before ? "before" : state === after ? "after" : "neither";
}

function tally(kind, state) {
  trials[kind] ??= { before: 0, after: 0, neither: 0 };
  trials[kind][state]++;
}

/** How many KV operations `run(kv)` makes on a freshly seeded store. */
async function opsOf(run) {
  const kv = await seeded();
  const counting = faultyKv(kv);
  await run(counting);
  kv.close();
  return counting.count();
}

const commitOn = (kv, commit) => denoKvStorage(kv, { prefix: PREFIX }).commit(commit);

/** How many KV operations a fresh adapter's first call makes after `commit` crashed as `crashAt` says. */
async function recoveryOpsAfter(commit, crashAt) {
  const kv = await seeded();
  await outcome(commitOn(faultyKv(kv, crashAt), commit));
  const counting = faultyKv(kv);
  await denoKvStorage(counting, { prefix: PREFIX }).readManifest();
  kv.close();
  return counting.count();
}

// Every crash point of each commit, in both kinds of crash; for some, a second crash during the
// recovery too; and a single failed request at every point, which the commit must report truly.
begin("crashes");
for (const [name, commit] of Object.entries({ journaled: JOURNALED, oneOp: ONE_OP })) {
  const kv0 = await seeded();
  const before = await contents(denoKvStorage(kv0, { prefix: PREFIX }));
  kv0.close();
  const after = contentsAfter(before, commit);
  ops[name] = await opsOf((kv) => commitOn(kv, commit));

  for (const mode of ["crash", "crash-after"]) {
    for (let at = 1; at <= ops[name]; at++) {
      const kv = await seeded();
      const result = await outcome(commitOn(faultyKv(kv, { at, mode }), commit));
      const what = `${name}, ${mode} at op ${at} (${result})`;
      const state = await judge(kv, before, after, what);
      expect(state !== "neither", `${what}: the store is neither as before nor as after the commit`);
      expect(result !== "resolved" || state === "after", `${what}: resolved, but the commit is not there`);
      tally(`${name} ${mode}`, state);
      kv.close();
    }
  }

  for (let at = 1; at <= ops[name]; at += 5) {
    const crashAt = { at, mode: "crash" };
    const recoveryOps = await recoveryOpsAfter(commit, crashAt);
    for (let second = 1; second <= recoveryOps; second += 3) {
      const kv = await seeded();
      await outcome(commitOn(faultyKv(kv, crashAt), commit));
      await outcome(denoKvStorage(faultyKv(kv, { at: second, mode: "crash" }), { prefix: PREFIX }).readManifest());
      const what = `${name}, crash at op ${at}, then during recovery at op ${second}`;
      const state = await judge(kv, before, after, what);
      expect(state !== "neither", `${what}: the store is neither as before nor as after the commit`);
      tally(`${name} crash, recovery crash`, state);
      kv.close();
    }
  }

  for (const mode of ["refused", "lost-reply"]) {
    for (let at = 1; at <= ops[name] + 1; at++) {
      const kv = await seeded();
      const faulty = faultyKv(kv, { at, mode });
      const adapter = denoKvStorage(faulty, { prefix: PREFIX });
      const result = await outcome(adapter.commit(commit));
      faulty.heal();
      const what = `${name}, one request ${mode} at op ${at} (${result})`;
      const expected = result === "resolved" ? after : before;
      // The engine goes on with the same adapter: it must show what its commit reported.
      expect((await contents(adapter)) === expected, `${what}: the same adapter does not show the store ${result === "resolved" ? "after" : "before"} the commit`);
      const state = await judge(kv, before, after, what);
      expect(state === (result === "resolved" ? "after" : "before"), `${what}: the store is ${state} the commit`);
      tally(`${name} ${mode}`, state);
      kv.close();
    }
  }
}

// A store out of room: QUOTA_EXCEEDED, and nothing of the commit left.
begin("quota");
{
  const kv = await seeded();
  const before = await contents(denoKvStorage(kv, { prefix: PREFIX }));
  const full = faultyKv(kv, { at: 6, mode: "refused", error: new Error("database or disk is full") });
  const result = await outcome(commitOn(full, JOURNALED));
  expect(result === "QUOTA_EXCEEDED", `a full store: the commit's outcome is ${result}, not QUOTA_EXCEEDED`);
  expect((await judge(kv, before, null, "a full store")) === "before", "a full store: the commit left something");
  kv.close();
}

// Fenced: a second adapter that read version 1 commits after another writer made version 2.
begin("fenced");
{
  const kv = await seeded();
  const stale = denoKvStorage(kv, { prefix: PREFIX });
  await stale.readManifest();
  const writer = denoKvStorage(kv, { prefix: PREFIX });
  await writer.commit(ONE_OP);
  const before = await contents(writer);
  for (const commit of [JOURNALED, { ...ONE_OP, manifest: { version: 3, bytes: bytes(12, 10) } }]) {
    const result = await outcome(stale.commit(commit));
    expect(result === "FENCED", `a stale writer's commit: ${result}, not FENCED`);
    expect((await judge(kv, before, null, "a stale writer")) === "before", "a stale writer's commit changed the store");
  }
  kv.close();
}

// Two writers commit on the same version at once: exactly one lands whole, the other is fenced.
begin("racing");
for (const [a, b] of [
  [JOURNALED, { ...JOURNALED, manifest: { version: 2, bytes: bytes(13, 5000) } }],
  [ONE_OP, JOURNALED],
]) {
  const kv = await seeded();
  const before = await contents(denoKvStorage(kv, { prefix: PREFIX }));
  const [first, second] = [denoKvStorage(kv, { prefix: PREFIX }), denoKvStorage(kv, { prefix: PREFIX })];
  await Promise.all([first.readManifest(), second.readManifest()]);
  const results = await Promise.all([outcome(first.commit(a)), outcome(second.commit(b))]);
  const winner = results[0] === "resolved" ? a : b;
  expect(results.sort().join() === "FENCED,resolved", `racing writers: ${results}, not one resolved and one FENCED`);
  const state = await judge(kv, before, contentsAfter(before, winner), "racing writers");
  expect(state === "after", "racing writers: the store is not as the winner left it");
  kv.close();
}

// Commits without a manifest only check the version: two writers' both land.
begin("manifestless");
for (const size of [100, 200_000]) {
  const kv = await seeded();
  const before = await contents(denoKvStorage(kv, { prefix: PREFIX }));
  const writers = [denoKvStorage(kv, { prefix: PREFIX }), denoKvStorage(kv, { prefix: PREFIX })];
  await Promise.all(writers.map((w) => w.readManifest()));
  const commits = [0, 1].map((i) => ({ expectedVersion: 1, manifest: null, puts: [[walPage(20 + i), bytes(20 + i, size * 8)]], deletes: [] }));
  const results = await Promise.all(writers.map((w, i) => outcome(w.commit(commits[i]))));
  expect(results.join() === "resolved,resolved", `two manifest-less commits of ${size * 8} bytes: ${results}`);
  const state = await judge(kv, before, contentsAfter(contentsAfter(before, commits[0]), commits[1]), "manifest-less writers");
  expect(state === "after", `two manifest-less commits of ${size * 8} bytes: not both landed`);
  kv.close();
}

// A new adapter's first call collects the intents it finds, also that of a commit in flight:
// that commit can write no further chunk, and starts again.
begin("collected");
{
  const kv = await seeded();
  const before = await contents(denoKvStorage(kv, { prefix: PREFIX }));
  let intentsSeen = 0;
  const interrupting = faultyKv(kv, {
    onOp: async (n) => {
      if (n !== 8) return;
      intentsSeen = (await Array.fromAsync(kv.list({ prefix: [...PREFIX, "intent"] }))).length;
      await denoKvStorage(kv, { prefix: PREFIX }).readManifest();
    },
  });
  const result = await outcome(commitOn(interrupting, JOURNALED));
  expect(intentsSeen === 1, `a commit in flight had ${intentsSeen} intents when the second adapter started`);
  expect(result === "resolved", `a commit whose intent was collected: ${result}`);
  const state = await judge(kv, before, contentsAfter(before, JOURNALED), "a collected intent");
  expect(state === "after", "a commit whose intent was collected did not land whole after starting again");
  kv.close();
}

// destroyDenoKvStorage deletes one database's keys and no other's.
begin("destroy");
{
  const kv = await seeded();
  await denoKvStorage(kv, { prefix: ["db", 2] }).commit(BASE);
  await destroyDenoKvStorage(kv, { prefix: PREFIX });
  const left = await Array.fromAsync(kv.list({ prefix: PREFIX }));
  expect(left.length === 0, `destroy left ${left.length} keys`);
  const other = await denoKvStorage(kv, { prefix: ["db", 2] }).readManifest();
  expect(other?.version === 1, "destroy of one prefix touched another");
  expect((await denoKvStorage(kv, { prefix: PREFIX }).readManifest()) === null, "a destroyed database still has a manifest");
  // Prefixes may nest: destroying ["db"] leaves ["db", 2] whole.
  await denoKvStorage(kv, { prefix: ["db"] }).commit(BASE);
  await destroyDenoKvStorage(kv, { prefix: ["db"] });
  const nested = await denoKvStorage(kv, { prefix: ["db", 2] }).readManifest();
  expect(nested?.version === 1, "destroying a prefix touched a database under a longer one");
  kv.close();
}

// A head whose manifest version is damaged is CORRUPTION, for a read and for a commit: before,
// a read answered version 0 and every commit failed FENCED, as if another writer held the store.
begin("damaged head");
for (const version of ["1", -1, 2 ** 53, undefined]) {
  const kv = await seeded();
  const key = [...PREFIX, "head"];
  const head = await kv.get(key);
  await kv.set(key, { ...head.value, version });
  const adapter = denoKvStorage(kv, { prefix: PREFIX });
  const read = await outcome(adapter.readManifest());
  expect(read === "CORRUPTION", `a head of version ${version}: readManifest ${read}`);
  const commit = await outcome(adapter.commit({ expectedVersion: 1, manifest: null, puts: [[walPage(9), bytes(9, 10)]], deletes: [] }));
  expect(commit === "CORRUPTION", `a head of version ${version}: commit ${commit}`);
  kv.close();
}

// Arguments the adapter refuses, writing nothing.
begin("arguments");
{
  const kv = await Deno.openKv(":memory:");
  const throws = (f, type, what) => {
    try {
      f();
      fail(`${what}: no error`);
    } catch (e) {
      expect(e instanceof type && e.code === "INVALID_ARGUMENT", `${what}: ${e} (code ${e?.code})`);
    }
  };
  throws(() => denoKvStorage({}), TypeError, "a kv that is not one");
  throws(() => denoKvStorage(kv, { prefix: [] }), TypeError, "an empty prefix");
  throws(() => denoKvStorage(kv, { prefix: "db" }), TypeError, "a prefix that is not an array");
  throws(() => denoKvStorage(kv, { prefix: ["x".repeat(300)] }), RangeError, "a prefix of 300 bytes");
  throws(() => denoKvStorage(kv, { prefix: ["db", "page"] }), RangeError, "a prefix with one of the store's own parts");
  const adapter = denoKvStorage(kv, { prefix: PREFIX });
  const stale = { ...BASE, manifest: { version: 0, bytes: bytes(1, 10) } };
  for (const [what, call] of [
    ["a manifest version not above the expected one", () => adapter.commit(stale)],
    ["a put of a key that is no page key", () => adapter.commit({ ...BASE, puts: [["x/1", bytes(1, 10)]] })],
    ["a put of bytes that are not a Uint8Array", () => adapter.commit({ ...BASE, puts: [[walPage(1), [1, 2]]] })],
    ["getPage of a key that is no page key", () => adapter.getPage("pages/1")],
    ["listPages of a prefix that is no page kind", () => adapter.listPages("x/")],
  ]) {
    const result = await outcome(call());
    expect(result === "INVALID_ARGUMENT", `${what}: ${result}, not INVALID_ARGUMENT`);
  }
  const left = await Array.fromAsync(kv.list({ prefix: PREFIX }));
  expect(left.length === 0, `refused calls wrote ${left.length} keys`);
  kv.close();
}

console.log(JSON.stringify({ ops, trials, failures }));
