// The package in Deno, for real: the packed tarball installed in a scratch project (resolved by
// Deno through package.json's export conditions, with `nodeModulesDir: "manual"`), the scripts of
// tests/runtimes/deno/ run by the Deno binary, their JSON output checked here. Memory storage
// with no permission flag; the Deno KV adapter (ttlkv/deno-kv) through the core's conformance
// suite, above Deno KV's size caps, across crashes at every KV operation of a commit, and across
// a process restart.
//
// Build first: `bash scripts/bundle-js.sh` (the conformance suite's engine build,
// target/conformance-pkg, comes from `bash scripts/build-conformance.sh`).
// Run: node --test tests/runtimes/
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { binaries, root, scratchProject } from "./support/packed.mjs";

const run = promisify(execFile);
const T0 = 1_767_225_600_000;
const CONFORMANCE = path.join(root, "target/conformance-pkg");

let dir;
// One Deno run of crash.js, shared by the tests of its sections, and one of engine_crash.js.
let crashRun;
let engineCrashRun;
const crashes = () => (crashRun ??= denoJson(["--unstable-kv"], "crash.js"));
const engineCrashes = () => (engineCrashRun ??= denoJson(["--unstable-kv"], "engine_crash.js"));

before(() => {
  for (const [file, build] of [
    ["bindings/js/dist/adapters/deno-kv.js", "bash scripts/bundle-js.sh"],
    ["target/conformance-pkg/ttlkv_web_bg.wasm", "bash scripts/build-conformance.sh"],
  ]) {
    assert.ok(existsSync(path.join(root, file)), `${file} is missing: run ${build}`);
  }
  dir = scratchProject({ "deno.json": JSON.stringify({ nodeModulesDir: "manual" }) });
  cpSync(path.join(root, "tests/runtimes/deno"), dir, { recursive: true });
  // The glue, the wasm and the JS snippets the glue imports (snippets/).
  cpSync(CONFORMANCE, dir, { recursive: true });
  // The two long runs (about 10 s each) start now, beside the short tests, on a second core.
  crashes().catch(() => {});
  engineCrashes().catch(() => {});
});

after(() => rmSync(dir, { recursive: true, force: true }));

/** Run `deno <command> <flags> <script> <args>` in the scratch project: its stdout. */
async function deno(command, flags, script, ...args) {
  try {
    const { stdout } = await run(binaries.deno, [command, ...flags, script, ...args], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } catch (e) {
    assert.fail(`deno ${command} ${script} ${args.join(" ")} failed (exit ${e.code}):\n${e.stderr}`);
  }
}

/** Run a script that prints JSON; `flags` are its permissions. */
async function denoJson(flags, script, ...args) {
  return JSON.parse(await deno("run", ["--no-prompt", ...flags], script, ...args));
}

/** Flags for a Deno KV file in a fresh directory `name` of the scratch project; returns [flags, file]. */
function kvDir(name) {
  mkdirSync(path.join(dir, name));
  return [["--unstable-kv", `--allow-read=${name}`, `--allow-write=${name}`], `${name}/kv.sqlite`];
}

test("the package runs in Deno with no permission flag: TTL puts, expiry on a fake clock, purge with events, scan, compact, close", async () => {
  const out = await denoJson([], "memory.js");
  assert.deepEqual(out.fresh, { a: "alice", b: { user: "bob", roles: ["admin"] }, config: [1, 2, 3], ttlA: 1000, ttlConfig: -1 });
  assert.deepEqual(out.afterA, { a: "undefined", hasA: false, ttlA: -2 }, "session:a is gone 1.5 s after its 1 s TTL, before any purge");
  assert.equal(out.purgedFirst, 1);
  assert.deepEqual(out.eventsFirst, ["session:a"]);
  assert.equal(out.purgedSecond, 201, "session:b (expireAt) and the 200 bulk keys");
  assert.equal(out.events.length, 202, "one expire event per expired key");
  assert.deepEqual(out.events[0], { key: "session:a", value: "alice", expireAt: T0 + 1000 });
  assert.deepEqual(
    out.events.find((e) => e.key === "session:b"),
    { key: "session:b", value: { user: "bob", roles: ["admin"] }, expireAt: T0 + 5000 },
  );
  assert.deepEqual(out.scanned, [{ key: "session:c", value: "carol", expireAt: T0 + 60_000 }]);
  assert.deepEqual(out.bulkLeft, []);
  assert.deepEqual(out.afterCompact, { c: "carol", config: [1, 2, 3] });
  assert.equal(out.afterClose, "CLOSED");
});

test("text values come back as stored in Deno, ASCII ones sliced from the engine's memory, before and after it grows", async () => {
  const out = await denoJson([], "ascii.js");
  assert.deepEqual(out.first, out.values, "first read");
  assert.deepEqual(out.afterGrowth, out.values, "after a 12 MiB value made the engine's memory grow");
  assert.equal(out.largeIntact, true, "the 12 MiB value itself");
});

test("the Deno KV adapter passes every behaviour of the core's page-store conformance suite in Deno", async (t) => {
  const results = [];
  let total = Infinity;
  // A failing behaviour ends its process (the engine instance is unusable after a panic): go on
  // from the next one in a new process.
  while (results.length < total) {
    const out = await denoJson(["--unstable-kv"], "conformance.js", String(results.length));
    total = out.total;
    results.push(...out.results);
  }
  assert.ok(total >= 19, `the suite has ${total} behaviours`);
  for (const { name, ok, error } of results) {
    await t.test(name, () => assert.ok(ok, error));
  }
});

test("the conformance harness fails adapters that break the contract (a FENCED answer swallowed, deletes dropped)", async () => {
  for (const [breaker, behaviour] of [
    ["swallowsFenced", "stale_precondition_fails_fenced_and_writes_nothing"],
    ["dropsDeletes", "commit_deletes_pages_and_missing_deletes_are_fine"],
  ]) {
    const { results } = await denoJson(["--unstable-kv"], "conformance.js", "broken", breaker, behaviour);
    assert.equal(results.length, 1);
    assert.equal(results[0].ok, false, `${behaviour} passed on an adapter that ${breaker}`);
    assert.match(results[0].error, /panicked at/);
  }
});

test("a database on Deno KV commits far above its caps (a 5 MiB value, over 1,000 pages and 20 MB in one commit) and a new process finds everything", async () => {
  const [flags, file] = kvDir("kv-sizes");
  const { largest } = await denoJson(flags, "sizes.js", "write", file);
  assert.ok(largest.pages > 1000, `the largest commit put or deleted ${largest.pages} pages`);
  assert.ok(largest.bytes > 20_000_000, `the largest commit held ${largest.bytes} bytes`);
  const { found, wrong } = await denoJson(flags, "sizes.js", "read", file);
  assert.deepEqual(wrong, []);
  assert.equal(found, 1 + 3 * 700);
});

test("the Deno KV adapter packs a commit under the size Deno KV counts for one atomic operation (each set's key twice): many small pages, and a long prefix, land whole", async () => {
  assert.deepEqual(await denoJson(["--unstable-kv"], "budget.js"), { failed: [], read: [] });
});

test("a database on Deno KV survives a process restart: acknowledged writes without close(), TTLs, deletes, namespaces, expire events", async () => {
  const [flags, file] = kvDir("kv-restart");
  await deno("run", ["--no-prompt", ...flags], "restart.js", "write", file);
  const out = await denoJson(flags, "restart.js", "read", file);
  assert.deepEqual(out, {
    keep: { plan: "pro", seats: 3 },
    short: "undefined",
    long: "expires in 60 s",
    longTtl: 50_000,
    gone: "undefined",
    cart: ["apple", "pear"],
    b1: "one",
    b2: [2, 2],
    afterFlush: "in the WAL only",
    purged: 1,
    events: [{ key: "short", value: "expires in 5 s" }],
  });
});


test("a commit crashed at every KV operation (before or after the operation lands) leaves the store exactly as before or after it, with nothing orphaned after recovery", async () => {
  const { ops, trials, failures } = await crashes();
  assert.deepEqual(failures.crashes, []);
  assert.ok(ops.journaled > 20, `a journaled commit took only ${ops.journaled} KV operations`);
  assert.ok(ops.oneOp <= 6, `a small commit took ${ops.oneOp} KV operations: it should be one atomic operation`);
  for (const name of ["journaled", "oneOp"]) {
    for (const mode of ["crash", "crash-after", "refused", "lost-reply"]) {
      const { before, after, neither } = trials[`${name} ${mode}`];
      const expected = mode === "refused" || mode === "lost-reply" ? ops[name] + 1 : ops[name];
      assert.equal(before + after + neither, expected, `${name} ${mode}: every KV operation was a fault point`);
      assert.equal(neither, 0, `${name} ${mode}: a fault left a state neither before nor after the commit`);
      assert.ok(before > 0 && after > 0, `${name} ${mode}: faults both before and after the commit point (${before}, ${after})`);
    }
  }
  const twice = trials["journaled crash, recovery crash"];
  assert.ok(twice.before + twice.after >= 50, "crashes during the recovery of a crashed commit");
});

test("a single failed KV request makes a commit reject exactly when the commit did not land, and the same adapter shows it", async () => {
  // crash.js checks this at every operation, in the "refused" and "lost-reply" modes of "crashes".
  const { failures, trials } = await crashes();
  assert.deepEqual(failures.crashes, []);
  assert.ok(trials["journaled lost-reply"].after > 0 && trials["oneOp lost-reply"].after > 0);
});

test("a commit on a full store fails with QUOTA_EXCEEDED and leaves nothing behind", async () => {
  assert.deepEqual((await crashes()).failures.quota, []);
});

test("a writer that another writer got ahead of is FENCED and writes nothing (small and journaled commits)", async () => {
  assert.deepEqual((await crashes()).failures.fenced, []);
});

test("two writers committing on one version at once: exactly one lands whole, the other is FENCED", async () => {
  assert.deepEqual((await crashes()).failures.racing, []);
});

test("two writers' commits without a manifest on the same version both land", async () => {
  assert.deepEqual((await crashes()).failures.manifestless, []);
});

test("a new adapter collects the intent of a commit in flight, and that commit starts again and lands whole", async () => {
  assert.deepEqual((await crashes()).failures.collected, []);
});

test("destroyDenoKvStorage deletes one database's keys and leaves another prefix's alone", async () => {
  assert.deepEqual((await crashes()).failures.destroy, []);
});

test("a head whose manifest version is damaged is CORRUPTION for a read and for a commit, not version 0 and FENCED", async () => {
  assert.deepEqual((await crashes()).failures["damaged head"], []);
});

test("the adapter refuses bad arguments (not a KV, an empty or oversized prefix, a manifest version not above the expected one, keys that are no page keys), writing nothing", async () => {
  assert.deepEqual((await crashes()).failures.arguments, []);
});

test("a durable database on Deno KV loses no acknowledged put when the KV dies at any of 80 points of a workload", async () => {
  const { ops, trials, failures } = await engineCrashes();
  assert.deepEqual(failures, []);
  assert.ok(ops > 100, `the workload took ${ops} KV operations`);
  assert.deepEqual(trials, { crash: 40, "crash-after": 40 });
});

test("the Deno KV quick start of docs/runtimes.md runs as written", async () => {
  const out = await deno("run", ["--no-prompt", "--unstable-kv", "--allow-read=.", "--allow-write=."], "quickstart.js");
  assert.equal(out, '{ user: "ada" }\n');
});

test("ttlkv/deno-kv's declarations type-check against a real Deno.Kv (deno check)", async () => {
  await deno("check", ["--unstable-kv"], "types.ts");
});
