// The Durable Objects worker of workerd.test.mjs: the Sessions object of docs/runtimes.md (/sessions/…), the
// core's page-store conformance suite over `ttlkv/durable-object` (/conformance/…), and a lab
// object (/lab/…) for what the suite does not reach: commits failing at each storage operation,
// sizes past the platform's limits, and automatic maintenance inside an object.
import { DurableObject } from "cloudflare:workers";
import { open } from "ttlkv";
import { durableObjectStorage } from "ttlkv/durable-object";
import quickstart from "./quickstart-durable-object.js";
import { enforceLimits, failingAt, InjectedFault } from "./storage-wrappers.js";
import initConformance, { checkPageStore, pageStoreBehaviours } from "./conformance/ttlkv_web.js";
import conformanceEngine from "./conformance/ttlkv_web_bg.wasm";

export { Sessions } from "./quickstart-durable-object.js";

/** `len` pseudo-random bytes of `seed` (xorshift32): pages that differ by seed. */
function bytes(seed, len) {
  const out = new Uint8Array(len);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < len; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

const hex = (n, width) => n.toString(16).padStart(width, "0");
const dataPage = (file, index) => `d/${hex(file, 16)}/${hex(index, 8)}`;
const walPage = (file) => `w/${hex(file, 16)}`;

function sameBytes(a, b) {
  return a instanceof Uint8Array && b instanceof Uint8Array && a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The suite's engine (a test build), instantiated once per isolate from its wasm module. */
let conformanceReady;

export class Conformance extends DurableObject {
  async fetch(request) {
    const url = new URL(request.url);
    conformanceReady ??= initConformance({ module_or_path: conformanceEngine });
    await conformanceReady;
    if (url.pathname.endsWith("/behaviours")) return Response.json(pageStoreBehaviours());
    const name = url.searchParams.get("behaviour");
    const violations = [];
    // Each behaviour on an empty store: a prefix of its own.
    let adapter = durableObjectStorage(enforceLimits(this.ctx.storage, violations), { prefix: `conformance/${name}/` });
    if (url.pathname.endsWith("/broken")) adapter = withoutVersionCheck(adapter);
    try {
      await untilPanic(checkPageStore(name, adapter));
      return Response.json({ ok: true, violations });
    } catch (e) {
      return Response.json({ ok: false, error: String(e?.message ?? e), violations });
    }
  }
}

/**
 * `check`, or a rejection with the panic message once the suite's engine panics. A panic traps
 * (the wasm aborts) inside a task of the engine's own, so `check` would never settle; the panic
 * hook prints the message with console.error first, which is where it is caught.
 */
async function untilPanic(check) {
  const print = console.error;
  let panicked;
  const panic = new Promise((_, reject) => {
    panicked = reject;
  });
  console.error = (...args) => {
    print(...args);
    const text = args.join(" ");
    if (text.includes("panicked at")) panicked(new Error(text));
  };
  try {
    return await Promise.race([check, panic]);
  } finally {
    console.error = print;
  }
}

/** The adapter with its fencing taken out: every commit claims the version it finds stored. */
function withoutVersionCheck(adapter) {
  return {
    ...adapter,
    async commit(commit) {
      const stored = await adapter.readManifest();
      const expectedVersion = stored ? stored.version : 0;
      const manifest = commit.manifest && { ...commit.manifest, version: Math.max(commit.manifest.version, expectedVersion + 1) };
      return adapter.commit({ ...commit, expectedVersion, manifest });
    },
  };
}

/** The page sizes the crash test commits: small, empty, and over one 128 KiB value. */
const sizeOf = (i) => (i % 50 === 7 ? 0 : i % 25 === 3 ? 300_000 + i : 200 + ((i * 97) % 3000));

/** The first commit of the crash test: 300 pages of every kind, manifest version 1. */
function seedCommit() {
  const puts = [];
  for (let i = 0; i < 270; i++) puts.push([dataPage(1, i), bytes(i, sizeOf(i))]);
  for (let i = 0; i < 20; i++) puts.push([`w/${hex(i + 1, 16)}`, bytes(1000 + i, 500 + i)]);
  for (let i = 0; i < 10; i++) puts.push([`m/${hex(i + 1, 16)}`, bytes(2000 + i, 64 + i)]);
  return { expectedVersion: 0, manifest: { version: 1, bytes: bytes(1, 5000) }, puts, deletes: [] };
}

/**
 * The large commit the crash test fails at each step: deletes (present, missing, twice),
 * replacements that grow and shrink chunked pages, 400 new pages, a page deleted and put again,
 * a page put twice, and a 300 KiB manifest.
 */
function bigCommit() {
  const deletes = [];
  for (let i = 0; i < 270; i += 3) deletes.push(dataPage(1, i));
  deletes.push(dataPage(1, 0), dataPage(9, 9), "w/00000000000000ff");
  for (let i = 1; i <= 10; i++) deletes.push(`w/${hex(i, 16)}`);
  const puts = [];
  // Replacements: chunked pages become small, small ones chunked.
  for (let i = 1; i < 270; i += 3) puts.push([dataPage(1, i), bytes(5000 + i, sizeOf(i) > 100_000 ? 10 : sizeOf(i + 2))]);
  for (let i = 0; i < 400; i++) puts.push([dataPage(2, i), bytes(6000 + i, sizeOf(i + 1))]);
  puts.push([dataPage(1, 3), bytes(7000, 77)]); // deleted above, put again
  puts.push([dataPage(2, 5), bytes(7001, 200_000)]); // put twice: this one loses
  puts.push([dataPage(2, 5), bytes(7002, 33)]);
  return { expectedVersion: 1, manifest: { version: 2, bytes: bytes(2, 300_000) }, puts, deletes };
}

/** FNV-1a of some bytes, with their length: a short stand-in for comparing them. */
function digest(b) {
  let h = 0x811c9dc5;
  for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i], 0x01000193);
  return `${b.length}:${(h >>> 0).toString(16)}`;
}

/** Everything stored under `prefix`, as one string (keys without the prefix, values digested). */
async function fingerprint(storage, prefix) {
  const entries = [];
  for (const [key, value] of await storage.list({ prefix })) {
    entries.push(`${key.slice(prefix.length)}=${value instanceof Uint8Array ? digest(value) : JSON.stringify(value)}`);
  }
  return entries.join("\n");
}

/** The pages and manifest an empty store holds after `commits`, applied as the contract says. */
function model(commits) {
  const pages = new Map();
  let manifest = null;
  for (const { manifest: next, puts, deletes } of commits) {
    for (const key of deletes) pages.delete(key);
    for (const [key, b] of puts) pages.set(key, b);
    if (next) manifest = next;
  }
  return { pages, manifest };
}

/** Problems with what `adapter` holds against `expected` (a model), by reading it all back. */
async function differences(adapter, expected) {
  const problems = [];
  const manifest = await adapter.readManifest();
  if (manifest?.version !== expected.manifest.version || !sameBytes(manifest?.bytes, expected.manifest.bytes)) {
    problems.push("the manifest differs");
  }
  for (const kind of ["w/", "m/", "d/"]) {
    const want = [...expected.pages.keys()].filter((k) => k.startsWith(kind)).sort();
    const listed = await adapter.listPages(kind);
    if (listed.join() !== want.join()) problems.push(`listPages(${kind}) gives ${listed.length} keys, not the ${want.length} expected in order`);
  }
  for (const [key, b] of expected.pages) {
    if (!sameBytes(await adapter.getPage(key), b)) problems.push(`page ${key} differs`);
  }
  return problems;
}

/** Keys under `prefix` that belong to nothing: chunks past their head's count, or of no head. */
async function strays(storage, prefix) {
  const stored = await storage.list({ prefix });
  const out = [];
  for (const key of stored.keys()) {
    const name = key.slice(prefix.length);
    const chunk = /^(chunk\/(.+)|manifest)\/(\d+)$/.exec(name);
    if (!chunk) continue;
    const head = stored.get(chunk[2] ? `${prefix}page/${chunk[2]}` : `${prefix}manifest`);
    if (!head || Number(chunk[3]) >= head.chunks) out.push(name);
  }
  return out;
}

export class Lab extends DurableObject {
  /** Fail the big commit at operation n = 1, 2, … (before it, then after it) until it succeeds. */
  async crash() {
    const storage = this.ctx.storage;
    const seed = seedCommit();
    const big = bigCommit();
    const control = durableObjectStorage(storage, { prefix: "crash/control/" });
    await control.commit(seed);
    await control.commit(big);
    const after = await fingerprint(storage, "crash/control/");
    const report = { problems: await differences(control, model([seed, big])), runs: {} };
    report.problems.push(...(await strays(storage, "crash/control/")).map((k) => `stray key ${k}`));

    for (const when of ["before", "after"]) {
      const prefix = `crash/${when}/`;
      await durableObjectStorage(storage, { prefix }).commit(seed);
      const before = await fingerprint(storage, prefix);
      const run = { failed: 0, operations: 0 };
      for (let n = 1; n < 1000; n++) {
        const faulty = failingAt(storage, n, when);
        const error = await durableObjectStorage(faulty, { prefix }).commit(big).then(
          () => null,
          (e) => e,
        );
        const now = await fingerprint(storage, prefix);
        if (faulty.state.reached) {
          run.failed++;
          if (!(error instanceof InjectedFault)) report.problems.push(`${when} op ${n}: the commit did not fail with the fault: ${error}`);
          if (now !== before) report.problems.push(`${when} op ${n}: the failed commit left a change behind`);
          continue;
        }
        run.operations = faulty.state.ops;
        if (error) report.problems.push(`${when}: the commit failed with no fault injected: ${error}`);
        if (now !== after) report.problems.push(`${when}: the committed state is not the one a clean commit leaves`);
        break;
      }
      report.runs[when] = run;
    }
    return report;
  }

  /**
   * Reads through the adapter while its commit's transaction is open, its writes made: they must
   * see the store as it was (and is again, once the commit fails at its last step).
   */
  async isolation() {
    const storage = this.ctx.storage;
    const seed = seedCommit();
    const big = bigCommit();
    // How many operations the big commit takes, to fail it after the last.
    const counter = failingAt(storage, 0, "after");
    await durableObjectStorage(counter, { prefix: "isolation/count/" }).commit(seed);
    const seedOps = counter.state.ops;
    await durableObjectStorage(counter, { prefix: "isolation/count/" }).commit(big);
    const ops = counter.state.ops - seedOps;

    const prefix = "isolation/store/";
    await durableObjectStorage(storage, { prefix }).commit(seed);
    let reads;
    const beforeThrow = async () => {
      reads = Promise.all([adapter.readManifest(), adapter.getPage(dataPage(2, 0)), adapter.getPage(dataPage(1, 3)), adapter.listPages("d/")]);
      // Time for reads that do not wait their turn to reach storage inside the transaction.
      await new Promise((resolve) => setTimeout(resolve, 20));
    };
    const adapter = durableObjectStorage(failingAt(storage, ops, "after", { beforeThrow }), { prefix });
    const error = await adapter.commit(big).then(
      () => null,
      (e) => e,
    );
    const [manifest, added, deleted, listed] = await reads;
    const seedData = seed.puts.map(([k]) => k).filter((k) => k.startsWith("d/"));
    return {
      failed: error instanceof InjectedFault,
      manifestVersion: manifest?.version,
      added: added === null ? null : added.length,
      deletedStillThere: sameBytes(deleted, seed.puts.find(([k]) => k === dataPage(1, 3))[1]),
      listedAsBefore: listed.join() === seedData.join(),
    };
  }

  /** A 5 MiB value through a database, and a commit of 1,500 pages, under the platform's limits. */
  async sizes() {
    const violations = [];
    const limited = enforceLimits(this.ctx.storage, violations);
    const options = { storage: durableObjectStorage(limited, { prefix: "sizes/" }), maintenance: "manual" };
    const value = bytes(5, 5 * 1024 * 1024);
    let db = await open("sizes", options);
    await db.put("big", value);
    await db.close();
    db = await open("sizes", options);
    const fromWal = sameBytes(await db.get("big"), value);
    await db.flush();
    await db.compact();
    await db.close();
    db = await open("sizes", options);
    const fromSst = sameBytes(await db.get("big"), value);
    await db.close();
    const heads = await this.ctx.storage.list({ prefix: "sizes/page/" });
    const mostChunks = Math.max(...[...heads.values()].map((h) => h.chunks));

    const pages = [];
    for (let i = 0; i < 1500; i++) pages.push([dataPage(5, i), bytes(i, i % 100 === 0 ? 150_000 : 10 + (i % 300))]);
    const commit = { expectedVersion: 0, manifest: { version: 1, bytes: bytes(9, 100) }, puts: pages, deletes: [] };
    await durableObjectStorage(limited, { prefix: "pages/" }).commit(commit);
    // Read back through an adapter object of its own, as after a restart.
    const problems = await differences(durableObjectStorage(limited, { prefix: "pages/" }), model([commit]));
    const deleteAll = { expectedVersion: 1, manifest: { version: 2, bytes: bytes(10, 100) }, puts: [], deletes: pages.map(([k]) => k) };
    await durableObjectStorage(limited, { prefix: "pages/" }).commit(deleteAll);
    const left = [...(await this.ctx.storage.list({ prefix: "pages/" })).keys()];
    return { fromWal, fromSst, mostChunks, problems, left, violations };
  }

  /**
   * A database in an object whose SQLite storage is full: workerd's test hook caps the object's
   * database at a few pages more than it holds, as the platform's storage limit does, and a put
   * too big for them fails with the platform's error (SQLITE_FULL). The platform then breaks the
   * object's output gate: this request fails, before the put's outcome reaches this code, and the
   * object starts again; `fullAfter` reads the database there.
   */
  async full() {
    const db = await open("full", { storage: durableObjectStorage(this.ctx.storage, { prefix: "full/" }), maintenance: "manual" });
    await db.put("kept", "before");
    const pageBytes = this.ctx.storage.sql.exec("PRAGMA page_size").one().page_size;
    this.ctx.storage.sql.setMaxPageCountForTest(Math.ceil(this.ctx.storage.sql.databaseSize / pageBytes) + 4);
    await db.put("big", bytes(1, 1024 * 1024));
    return { unexpected: "the put into a full object succeeded" };
  }

  /** The database of `full` in this object, as it finds it. */
  async fullAfter() {
    const db = await open("full", { storage: durableObjectStorage(this.ctx.storage, { prefix: "full/" }), maintenance: "manual" });
    const out = { kept: await db.get("kept"), big: (await db.get("big")) ?? null };
    await db.put("after", "fits");
    out.after = await db.get("after");
    await db.close();
    return out;
  }

  /**
   * The outcomes of a read and of a commit over a manifest head whose version is damaged (each
   * value in turn): CORRUPTION, not version 0 and FENCED, as if another writer held the store.
   */
  async damagedHead() {
    const out = {};
    for (const version of ["1", -1, 2 ** 53, null]) {
      const prefix = `damaged/${String(version)}/`;
      await durableObjectStorage(this.ctx.storage, { prefix }).commit({ expectedVersion: 0, manifest: { version: 1, bytes: bytes(1, 100) }, puts: [], deletes: [] });
      const head = await this.ctx.storage.get(`${prefix}manifest`);
      await this.ctx.storage.put(`${prefix}manifest`, { ...head, version });
      const adapter = durableObjectStorage(this.ctx.storage, { prefix });
      const code = (promise) => promise.then(() => "resolved", (e) => e?.code ?? String(e));
      out[String(version)] = [
        await code(adapter.readManifest()),
        await code(adapter.commit({ expectedVersion: 1, manifest: null, puts: [[walPage(1), bytes(2, 10)]], deletes: [] })),
      ];
    }
    return out;
  }

  /** A database with automatic maintenance (the default) in this object. */
  autoDb() {
    this.expired ??= [];
    this.auto ??= open("auto", { storage: durableObjectStorage(this.ctx.storage, { prefix: "auto/" }) }).then((db) => {
      db.on("expire", (event) => this.expired.push(event.key));
      return db;
    });
    return this.auto;
  }

  async fetch(request) {
    const url = new URL(request.url);
    const q = url.searchParams;
    switch (url.pathname) {
      case "/lab/crash":
        return Response.json(await this.crash());
      case "/lab/isolation":
        return Response.json(await this.isolation());
      case "/lab/sizes":
        return Response.json(await this.sizes());
      case "/lab/full":
        return Response.json(await this.full());
      case "/lab/full/after":
        return Response.json(await this.fullAfter());
      case "/lab/damaged-head":
        return Response.json(await this.damagedHead());
      case "/lab/auto/put":
        await (await this.autoDb()).put(q.get("key"), "v", { ttlMs: Number(q.get("ttl")) });
        return Response.json({ expired: this.expired });
      case "/lab/auto/events":
        // Touches no database: what the listener got while no request was running.
        return Response.json({ expired: this.expired ?? [] });
      default:
        return new Response("no such route", { status: 404 });
    }
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const [, area, ...rest] = url.pathname.split("/");
    if (area === "sessions") {
      // The quick start's own entry, as if it were the whole worker.
      const inner = new URL(`/${rest.join("/")}${url.search}`, url);
      return quickstart.fetch(new Request(inner, request), env);
    }
    const binding = { conformance: env.CONFORMANCE, lab: env.LAB }[area];
    if (!binding) return new Response("no such area", { status: 404 });
    return binding.get(binding.idFromName(area)).fetch(request);
  },
};
