// `ttlkv/node-fs`, the file storage for Node, as a user installs it: the packed package in a
// scratch project. The core's page-store conformance suite on it; SIGKILL at random moments of a
// writer process (also inside flush and compaction commits), then every acknowledged write is
// checked; a second process fenced; processes contending for one directory; the lock of a dead
// process taken over and a live one's waited for; a crash's journal finished (twice harmlessly);
// damaged files reported as CORRUPTION; a full file system (QUOTA_EXCEEDED, nothing
// half-written, on a small tmpfs where `unshare -rm` can mount one); errors with their causes;
// the quick start of docs/runtimes.md, run as written, and the declarations type-checked. Build the
// package's JS first: `bash scripts/bundle-js.sh`; the conformance test also needs the test build
// of the engine (`bash scripts/build-conformance.sh`).
// Run: `node --test tests/runtimes/node-fs.test.mjs`.
// TTLKV_CRASH_SEED and TTLKV_CRASH_ROUNDS vary or lengthen the crash test.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, watch, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { root, scratchProject } from "./support/packed.mjs";
import { applyOp, clockOf, opAt, valueOf } from "./node-fs/ops.mjs";

const needed = {
  "bindings/js/dist/server/node.js": "bash scripts/bundle-js.sh",
  "bindings/js/dist/adapters/node-fs.js": "bash scripts/bundle-js.sh",
  "target/conformance-pkg/ttlkv_web.js": "bash scripts/build-conformance.sh",
};
for (const [file, build] of Object.entries(needed)) {
  if (!existsSync(path.join(root, file))) throw new Error(`${file} is missing: run \`${build}\` first`);
}

// One scratch project: the packed package in node_modules, the child processes' scripts, and a
// module through which this process imports the package the way the scripts do (by its name).
const sources = path.join(root, "tests/runtimes/node-fs");
const project = scratchProject({
  ...Object.fromEntries(readdirSync(sources).map((f) => [f, readFileSync(path.join(sources, f))])),
  "api.mjs": 'export { open, TtlKvError } from "ttlkv";\nexport { fileStorage } from "ttlkv/node-fs";\n',
});
const { open, fileStorage, TtlKvError } = await import(pathToFileURL(path.join(project, "api.mjs")).href);

/** The directories the tests write, removed at the end (the crash test's holds tens of MB). */
const scratch = [project];
after(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});
const scratchDir = (label) => {
  const dir = mkdtempSync(path.join(tmpdir(), `ttlkv-node-fs-${label}-`));
  scratch.push(dir);
  return dir;
};
/** What a database directory holds besides pages and the manifest: nothing, once a commit is done. */
const leftovers = (dir) => readdirSync(dir).filter((n) => n !== "MANIFEST" && !/^(?:[wm]_[0-9a-f]{16}|d_[0-9a-f]{16}_[0-9a-f]{8})$/.test(n));

/** Run script `file` of the project with node; its stdout, or a failure with its stderr. */
function runScript(file, args = [], cwd = project) {
  const out = spawnSync(process.execPath, [path.join(project, file), ...args], { cwd, encoding: "utf8" });
  assert.equal(out.status, 0, `${file} failed:\n${out.stderr}`);
  return out.stdout;
}

test("the quick start of docs/runtimes.md (Node, files) runs as written, and a second run finds the first's data", () => {
  const app = scratchDir("quickstart");
  assert.equal(runScript("quickstart.mjs", [], app), "visit 1 { user: 'alice' }\n");
  assert.equal(runScript("quickstart.mjs", [], app), "visit 2 { user: 'alice' }\n");
  assert.deepEqual(leftovers(path.join(app, "data/sessions")), []);
});

test("the declarations type-check: fileStorage(dir, options) is a PageStoreAdapter", (t) => {
  const tsc = path.join(root, "tests/e2e/node_modules/typescript/bin/tsc");
  if (!existsSync(tsc)) return t.skip("TypeScript is not installed (cd tests/e2e && npm install)");
  const args = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "usage.ts"];
  const out = spawnSync(process.execPath, [tsc, ...args], { cwd: project, encoding: "utf8" });
  assert.equal(out.status, 0, `tsc found errors:\n${out.stdout}${out.stderr}`);
});

test("the file storage passes the core's page-store conformance suite", async () => {
  const conformance = path.join(root, "target/conformance-pkg");
  const { default: init, pageStoreBehaviours, checkPageStore } = await import(pathToFileURL(path.join(conformance, "ttlkv_web.js")).href);
  await init({ module_or_path: readFileSync(path.join(conformance, "ttlkv_web_bg.wasm")) });
  const base = scratchDir("conformance");
  const names = pageStoreBehaviours();
  assert.ok(names.length >= 19, `the suite has ${names.length} behaviours`);
  for (const name of names) {
    const dir = path.join(base, name);
    await checkPageStore(name, fileStorage(dir));
    assert.deepEqual(leftovers(dir), [], `${name} left files behind`);
  }
});

// ---------------------------------------------------------------------------------------------
// Crash test: SIGKILL at random moments
// ---------------------------------------------------------------------------------------------

/** A seeded PRNG for the test's own choices (when to kill, how), so a failure replays. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Start the writer for `round` and SIGKILL it as `plan` says: "early" (while it opens, and so
 * recovers the last round's crash), "random" (a random moment of its writes), "journal" (the
 * moment a JOURNAL appears: a commit has passed its commit point and is being applied), or
 * "compaction" (inside a compaction, counted by the compact / compacted lines it prints).
 * Resolves with how many writes it acknowledged and where the kill landed.
 */
function killWriter({ dir, seed, round, mode, plan, random }) {
  const child = spawn(process.execPath, ["writer.mjs", dir, String(seed), String(round), mode], { cwd: project, stdio: ["ignore", "pipe", "pipe"] });
  let acked = 0;
  let compacting = 0;
  let compactions = 0;
  let stdout = "";
  let stderr = "";
  let killedInCompaction = false;
  let watcher;
  const kill = () => {
    if (child.exitCode !== null || child.signalCode !== null || child.killed) return;
    killedInCompaction = compacting > 0;
    child.kill("SIGKILL");
  };
  // A writer that never reaches the moment planned is killed anyway.
  const fallback = setTimeout(kill, 3_000);
  child.stderr.on("data", (d) => (stderr += d));
  child.stdout.on("data", (d) => {
    stdout += d;
    const lines = stdout.split("\n");
    stdout = lines.pop();
    for (const line of lines) {
      if (line.startsWith("ack ")) acked = Number(line.slice(4)) + 1;
      else if (line === "compact") {
        compacting++;
        if (plan === "compaction" && ++compactions === 1 + Math.floor(random() * 3)) setTimeout(kill, random() * 15);
      } else if (line === "compacted") compacting--;
      else if (line === "ready") {
        if (plan === "random") setTimeout(kill, 10 + random() * 300);
        if (plan === "journal") {
          watcher = watch(dir, (_, name) => name === "JOURNAL" && kill());
          setTimeout(kill, 1_000);
        }
      }
    }
  });
  if (plan === "early") setTimeout(kill, random() * 150);
  return new Promise((resolve, reject) => {
    child.on("close", (code, signal) => {
      clearTimeout(fallback);
      watcher?.close();
      if (signal !== "SIGKILL") reject(new Error(`the writer of round ${round} exited (${code}) before it was killed:\n${stderr}`));
      else resolve({ acked, killedInCompaction });
    });
  });
}

/** `state` (key -> { value: recipe, expireAt }) after the first `count` writes of `round`. */
function stateAfter(state, seed, round, count) {
  const next = new Map(state);
  for (let i = 0; i < count; i++) applyOp(next, opAt(seed, round, i), clockOf(round));
  return next;
}

/** Why the entries read differ from `state` at time `now` ("" if they do not). */
function difference(entries, state, now) {
  const expected = [...state].filter(([, e]) => e.expireAt === null || e.expireAt > now).sort(([a], [b]) => (a < b ? -1 : 1));
  const found = entries.map((e) => e.key);
  const wanted = expected.map(([key]) => key);
  if (!isDeepStrictEqual(found, wanted)) return `keys ${JSON.stringify(found)}, expected ${JSON.stringify(wanted)}`;
  for (const [n, [key, { value, expireAt }]] of expected.entries()) {
    const entry = entries[n];
    const want = valueOf(value);
    const same =
      want instanceof Uint8Array
        ? entry.value instanceof Uint8Array && Buffer.compare(entry.value, want) === 0
        : isDeepStrictEqual(entry.value, want);
    if (!same) return `${key}: another value (${value.kind} ${value.id})`;
    if (entry.expireAt !== expireAt) return `${key}: expires at ${entry.expireAt}, expected ${expireAt}`;
  }
  return "";
}

test("SIGKILL at random moments, also inside commits, flushes and compactions, loses no acknowledged write", async (t) => {
  const seed = Number(process.env.TTLKV_CRASH_SEED ?? 20_251_124);
  const rounds = Number(process.env.TTLKV_CRASH_ROUNDS ?? 80);
  t.diagnostic(`seed ${seed} (TTLKV_CRASH_SEED sets it: the same writes and kill plans; the moments of the kills vary with timing), ${rounds} rounds`);
  const random = prng(seed);
  const dir = scratchDir("crash");
  let state = new Map();
  const counts = { kills: 0, acked: 0, checkedKeys: 0, unacked: 0, inCompaction: 0, journalLeft: 0, tmpLeft: 0, plans: {} };
  const started = Date.now();
  for (let round = 1; round <= rounds; round++) {
    const mode = round % 3 === 0 ? "compact" : "writes";
    const r = prng(seed + round)();
    const plan = mode === "compact" ? (r < 0.8 ? "compaction" : "random") : r < 0.15 ? "early" : r < 0.5 ? "journal" : "random";
    const { acked, killedInCompaction } = await killWriter({ dir, seed, round, mode, plan, random });
    counts.kills++;
    counts.acked += acked;
    counts.plans[plan] = (counts.plans[plan] ?? 0) + 1;
    if (killedInCompaction) counts.inCompaction++;
    const names = readdirSync(dir);
    if (names.includes("JOURNAL")) counts.journalLeft++;
    if (names.some((n) => n.endsWith(".tmp"))) counts.tmpLeft++;

    // Reopen (finishing or dropping what the kill interrupted) and read everything back.
    const now = clockOf(round) + 1;
    const db = await open("crash", { storage: fileStorage(dir), clock: () => now, maintenance: "manual" });
    const entries = [];
    for await (const entry of db.scan()) entries.push(entry);
    if (round % 8 === 0) {
      // Every page of the recovered tree is read and rewritten: compaction finds none missing,
      // and changes nothing that can be read.
      await db.flush();
      await db.compact();
      const again = [];
      for await (const entry of db.scan()) again.push(entry);
      assert.deepEqual(again, entries, `round ${round}: compacting the recovered database changed what it holds`);
    }
    await db.close();
    assert.deepEqual(leftovers(dir), [], `round ${round}: the reopen left files behind`);

    // Every acknowledged write is there; the ones after it may be too (the one in flight at the
    // kill; on a system where a pipe is written asynchronously, a few whose ack line was lost),
    // each whole or not at all (a batch included), in order, and nothing else is.
    let why = "";
    let matched;
    for (let count = acked; count <= acked + 3 && !matched; count++) {
      const candidate = stateAfter(state, seed, round, count);
      const differs = difference(entries, candidate, now);
      if (differs === "") {
        matched = candidate;
        counts.unacked += count - acked;
      } else if (count === acked) why = differs;
    }
    assert.ok(matched, `round ${round} (${mode}, killed ${plan} after ${acked} acknowledged writes): ${why}`);
    state = matched;
    counts.checkedKeys += entries.length;
  }
  t.diagnostic(`${JSON.stringify(counts)} in ${Date.now() - started} ms`);
  assert.equal(counts.kills, rounds);
  assert.ok(counts.acked > rounds * 5, `only ${counts.acked} writes were acknowledged`);
  if (rounds >= 30) {
    assert.ok(counts.inCompaction > 0, "no kill landed inside a compaction");
    assert.ok(counts.journalLeft + counts.tmpLeft > 0, "no kill landed inside a commit");
  }
});

// ---------------------------------------------------------------------------------------------
// Other processes
// ---------------------------------------------------------------------------------------------

test("a second process that opens the directory fences the first, and sees what it wrote", async () => {
  const dir = scratchDir("fence");
  const first = await open("fenced", { storage: fileStorage(dir) });
  await first.put("first", "written by the first process");
  const seen = JSON.parse(runScript("second-writer.mjs", [dir]));
  assert.deepEqual(seen, { first: "written by the first process" });
  await assert.rejects(first.put("late", "x"), (e) => e instanceof TtlKvError && e.code === "FENCED");
  await first.close().catch(() => {});
  const again = await open("fenced", { storage: fileStorage(dir) });
  assert.equal(await again.get("first"), "written by the first process");
  assert.equal(await again.get("second"), "written by the second process");
  assert.equal(await again.get("late"), undefined, "a fenced write wrote nothing");
  await again.close();
});

test("processes taking turns on one directory: every write that resolved is there", async (t) => {
  const dir = scratchDir("contend");
  const processes = 4;
  const each = 12;
  const outputs = await Promise.all(
    Array.from({ length: processes }, (_, id) =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ["contender.mjs", dir, String(id), String(each)], { cwd: project });
        let out = "";
        let err = "";
        child.stdout.on("data", (d) => (out += d));
        child.stderr.on("data", (d) => (err += d));
        child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`contender ${id} failed:\n${err}`))));
      }),
    ),
  );
  const acked = outputs.flatMap((out) => out.split("\n").filter((l) => l.startsWith("ack ")).map((l) => l.slice(4)));
  const fenced = outputs.map((out) => Number(/fenced (\d+)/.exec(out)[1])).reduce((a, b) => a + b);
  t.diagnostic(`${acked.length} writes acknowledged, ${fenced} fenced and retried`);
  assert.equal(acked.length, processes * each);
  const db = await open("contended", { storage: fileStorage(dir) });
  for (const key of acked) {
    const [id, i] = key.slice(1).split("-").map(Number);
    assert.deepEqual(await db.get(key), { id, i }, key);
  }
  await db.close();
  assert.deepEqual(leftovers(dir), []);
});

// ---------------------------------------------------------------------------------------------
// The lock
// ---------------------------------------------------------------------------------------------

/** The pid of a process that has exited. */
function deadPid() {
  const child = spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" });
  return Number(child.stdout.trim());
}

/** The first commit of an empty directory, as the engine would make it. */
const firstCommit = {
  expectedVersion: 0,
  manifest: { version: 1, bytes: new Uint8Array([1, 2, 3]) },
  puts: [["w/0000000000000001", new Uint8Array([7])]],
  deletes: [],
};
const lockRecord = (fields) => JSON.stringify({ pid: process.pid, start: null, host: hostname(), token: "someone", ...fields });

test("the lock of a process that died is taken over at once, also past a breaker that died too", async () => {
  const dir = scratchDir("stale");
  mkdirSync(dir, { recursive: true });
  const dead = deadPid();
  writeFileSync(path.join(dir, "LOCK"), lockRecord({ pid: dead, token: "dead-holder" }));
  // A process that died while removing that lock left its marker.
  writeFileSync(path.join(dir, "LOCK.dead-holder.break.0"), lockRecord({ pid: dead, token: "dead-breaker" }));
  writeFileSync(path.join(dir, `LOCK.${dead}-x.new`), "{");
  const started = Date.now();
  await fileStorage(dir).commit(firstCommit);
  assert.ok(Date.now() - started < 1_000, "a dead holder is not waited for");
  assert.deepEqual(leftovers(dir), [], "the lock, the marker and the record of the dead are tidied");
  assert.deepEqual(await fileStorage(dir).getPage("w/0000000000000001"), new Uint8Array([7]));
});

test("a process that reuses a dead holder's pid does not keep its lock (Linux: start time from /proc)", async (t) => {
  if (!existsSync(`/proc/${process.pid}/stat`)) return t.skip("no /proc here");
  const dir = scratchDir("reused");
  mkdirSync(dir, { recursive: true });
  // This process's pid, with a start time it does not have: the holder was an earlier process.
  writeFileSync(path.join(dir, "LOCK"), lockRecord({ start: "1" }));
  await fileStorage(dir).commit(firstCommit);
  assert.deepEqual(leftovers(dir), []);
});

test("a lock held by a live process is waited for, then an error naming it; nothing is written", async () => {
  const dir = scratchDir("live");
  mkdirSync(dir, { recursive: true });
  const lock = path.join(dir, "LOCK");
  for (const [record, says] of [
    [lockRecord({}), `process ${process.pid}`],
    [lockRecord({ pid: deadPid(), host: "another-host" }), "another-host"],
    ["not a lock record", "unreadable"],
  ]) {
    writeFileSync(lock, record);
    const storage = fileStorage(dir, { lockTimeoutMs: 200 });
    const e = await storage.commit(firstCommit).catch((e) => e);
    assert.ok(e instanceof Error, "the commit failed");
    assert.equal(e.code, "STORAGE");
    assert.match(e.message, new RegExp(says));
    assert.deepEqual(leftovers(dir), ["LOCK"], "nothing was written");
  }
  // Through the engine: a STORAGE TtlKvError whose cause is the adapter's error.
  const e = await open("locked", { storage: fileStorage(dir, { lockTimeoutMs: 100 }) }).catch((e) => e);
  assert.ok(e instanceof TtlKvError && e.code === "STORAGE", String(e));
  assert.match(e.cause.message, /unreadable/);
  // Once the holder lets go, commits go through.
  rmSync(lock);
  const db = await open("locked", { storage: fileStorage(dir) });
  await db.put("k", "v");
  await db.close();
});

test("a dead holder's lock that a live process (or an unreadable marker) is breaking is waited for, within the timeout", async () => {
  const dir = scratchDir("breaking");
  mkdirSync(dir, { recursive: true });
  const marker = path.join(dir, "LOCK.dead-holder.break.0");
  // This live process is the breaker; then a marker that cannot be read (a power loss).
  for (const breaker of [lockRecord({ token: "breaker" }), ""]) {
    writeFileSync(path.join(dir, "LOCK"), lockRecord({ pid: deadPid(), token: "dead-holder" }));
    writeFileSync(marker, breaker);
    // The loop used to spin on the marker, past its timeout, forever.
    let timer;
    const hung = new Promise((resolve) => (timer = setTimeout(() => resolve("still waiting after 10 s"), 10_000)));
    const e = await Promise.race([fileStorage(dir, { lockTimeoutMs: 200 }).commit(firstCommit).catch((e) => e), hung]);
    clearTimeout(timer);
    assert.equal(e?.code, "STORAGE", String(e));
    assert.deepEqual(leftovers(dir).sort(), ["LOCK", "LOCK.dead-holder.break.0"], "nothing was written");
    rmSync(marker);
  }
});

test("a journal left by a crash is finished by the next reader, and running it twice loses no page it put", async () => {
  const dir = scratchDir("journal");
  const [one, two] = ["w_0000000000000001", "w_0000000000000002"];
  writeFileSync(path.join(dir, one), "old");
  writeFileSync(path.join(dir, two), "deleted by the commit");
  writeFileSync(path.join(dir, `${one}.tmp`), "new");
  // A journal that also deletes the page it puts (as an older writer of this format did).
  const journal = JSON.stringify({ renames: [[`${one}.tmp`, one]], deletes: [one, two] });
  writeFileSync(path.join(dir, "JOURNAL"), journal);
  assert.deepEqual(await fileStorage(dir).listPages("w/"), ["w/0000000000000001"]);
  assert.deepEqual(leftovers(dir), []);
  // The same journal again, as after a crash while it ran: the page it put stays.
  writeFileSync(path.join(dir, "JOURNAL"), journal);
  assert.equal(Buffer.from(await fileStorage(dir).getPage("w/0000000000000001")).toString(), "new");
  assert.deepEqual(leftovers(dir), []);
});

test("a damaged manifest or journal is CORRUPTION", async () => {
  const dir = scratchDir("damaged");
  writeFileSync(path.join(dir, "MANIFEST"), "not a manifest");
  await assert.rejects(fileStorage(dir).readManifest(), (e) => e.code === "CORRUPTION");
  const e = await open("damaged", { storage: fileStorage(dir) }).catch((e) => e);
  assert.ok(e instanceof TtlKvError && e.code === "CORRUPTION", String(e));
  writeFileSync(path.join(dir, "JOURNAL"), "{ torn");
  await assert.rejects(fileStorage(dir).getPage("w/0000000000000001"), (e) => e.code === "CORRUPTION" && e.cause instanceof SyntaxError);
  // A journal that parses but names what no commit writes: a path out of the directory, a step
  // that is no pair. Running it would rename or delete outside the store, or fail at every access.
  const base = scratchDir("journal");
  const store = path.join(base, "store");
  mkdirSync(store);
  const outside = path.join(base, "outside-the-store");
  writeFileSync(outside, "kept");
  const page = "w_0000000000000001";
  for (const journal of [
    { renames: [], deletes: ["../outside-the-store"] },
    { renames: [["../outside-the-store", page]], deletes: [] },
    { renames: [[`${page}.tmp`, "../outside-the-store"]], deletes: [] },
    { renames: [page], deletes: [] },
    { renames: [], deletes: [7] },
  ]) {
    writeFileSync(path.join(store, "JOURNAL"), JSON.stringify(journal));
    await assert.rejects(fileStorage(store).getPage("w/0000000000000001"), (e) => e.code === "CORRUPTION", JSON.stringify(journal));
    assert.equal(readFileSync(outside, "utf8"), "kept", `${JSON.stringify(journal)} touched a file outside the store`);
  }
});

test("the first commit makes the directories it created durable: each one's entry in its parent, and its own entries", () => {
  const dir = scratchDir("dir-sync");
  assert.deepEqual(JSON.parse(runScript("dir-sync.mjs", [dir])), { commits: ["ok"], synced: [".", "data", "data/sessions"] });
  // A parent the process may write into but not read cannot be synced: the commit goes on.
  assert.deepEqual(JSON.parse(runScript("dir-sync.mjs", [scratchDir("dir-sync-unreadable"), "unreadable"])), { commits: ["ok"], synced: [".", "data/sessions"] });
  // A sync that fails fails the commit; the next commit syncs the parents again.
  assert.deepEqual(JSON.parse(runScript("dir-sync.mjs", [scratchDir("dir-sync-fails"), "fails-once"])), { commits: ["STORAGE", "ok", "ok"], synced: [".", "data", "data/sessions"] });
});

test("errors keep their cause; bad arguments are INVALID_ARGUMENT", async () => {
  const file = path.join(scratchDir("errors"), "a-file");
  writeFileSync(file, "");
  const e = await open("x", { storage: fileStorage(path.join(file, "db")) }).catch((e) => e);
  assert.ok(e instanceof TtlKvError, String(e));
  assert.equal(e.code, "STORAGE");
  assert.equal(e.cause.code, "STORAGE", "the cause is the adapter's error");
  assert.equal(e.cause.cause.code, "ENOTDIR", "whose cause is the file system's");
  for (const [bad, Type] of [
    [() => fileStorage(""), TypeError],
    [() => fileStorage(42), TypeError],
    [() => fileStorage("d", { lockTimeoutMs: 0 }), RangeError],
    [() => fileStorage("d", { lockTimeoutMs: 1.5 }), RangeError],
    [() => fileStorage("d", { lockTimeoutMs: "5s" }), TypeError],
    [() => fileStorage("d", { lockTimeout: 5 }), TypeError],
  ]) {
    assert.throws(bad, (e) => e instanceof Type && e.code === "INVALID_ARGUMENT", String(bad));
  }
  assert.equal(typeof fileStorage(pathToFileURL(scratchDir("url"))).getPage, "function", "a file: URL is a directory");
});

test("a full file system: QUOTA_EXCEEDED, nothing half-written, every resolved write still read back", async (t) => {
  const probe = spawnSync("unshare", ["-rm", "true"]);
  if (probe.status !== 0) return t.skip("unshare -rm (a user and mount namespace for a small tmpfs) is not available here");
  const dir = scratchDir("quota");
  const script = 'mount -t tmpfs -o size=6m ttlkv-quota "$1" && exec "$2" quota.mjs "$1"';
  const out = spawnSync("unshare", ["-rm", "sh", "-c", script, "sh", dir, process.execPath], { cwd: project, encoding: "utf8" });
  assert.equal(out.status, 0, out.stderr);
  const report = JSON.parse(out.stdout);
  t.diagnostic(JSON.stringify(report));
  assert.ok(report.acked > 5, `only ${report.acked} writes fit`);
  assert.equal(report.name, "TtlKvError");
  assert.equal(report.code, "QUOTA_EXCEEDED", report.message);
  assert.equal(report.causeCode, "QUOTA_EXCEEDED");
  assert.ok(["ENOSPC", "EDQUOT"].includes(report.rootCause), `root cause ${report.rootCause}`);
  assert.deepEqual(report.leftovers, [], "no temporary file, journal or lock is left");
  assert.ok(report.here, "every resolved write reads back, and the failed one is absent");
  assert.ok(report.again, "… also after reopening");
});
