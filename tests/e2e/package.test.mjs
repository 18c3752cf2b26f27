// End-to-end tests of the npm package as users get it: `npm pack`, installed from the tarball into
// a scratch project, then used from Node by its bare name, built by Vite and loaded in headless
// Chromium (IndexedDB across a page reload, a module worker, a full quota), and loaded with no
// bundler from a plain <script type="module"> and a module worker.
// Needs the engine built (`bash scripts/build-package.sh`) and `npm ci` in tests/e2e.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { serve } from "./serve.mjs";
import { launch } from "./chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
function run(cmd, args, cwd, extraEnv) {
  const env = { ...process.env, ...extraEnv };
  delete env.NODE_TEST_CONTEXT; // a nested `node --test` reports as TAP, not to this runner
  return execFileSync(cmd, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

let scratch, app, installed, server, browser, tarball;

before(async () => {
  scratch = mkdtempSync(path.join(tmpdir(), "ttlkv-e2e-"));
  const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", scratch], root));
  tarball = packed[0];
  app = path.join(scratch, "app");
  cpSync(path.join(here, "app"), app, { recursive: true });
  writeFileSync(
    path.join(app, "package.json"),
    JSON.stringify({ name: "scratch-app", private: true, type: "module", dependencies: { ttlkv: `file:../${tarball.filename}` } }),
  );
  run("npm", ["install", "--no-audit", "--no-fund", "--offline"], app);
  installed = path.join(app, "node_modules", "ttlkv");
  run(process.execPath, [path.join(here, "node_modules", "vite", "bin", "vite.js"), "build"], app);
  server = await serve({
    "/app/": path.join(app, "dist"),
    "/plain/": path.join(here, "plain"),
    "/ttlkv/": installed,
  });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

async function page(url, ready) {
  const p = await browser.newPage();
  const errors = [];
  p.on("pageerror", (e) => errors.push(String(e)));
  await p.goto(url);
  await p.waitForFunction(ready);
  return { p, errors };
}

test("the packed package holds the engine, the JS entry and the type declarations", () => {
  const files = tarball.files.map((f) => f.path);
  for (const f of ["package.json", "README.md", "bindings/js/index.js", "bindings/js/index.d.ts", "bindings/js/pkg/ttlkv_web.js", "bindings/js/pkg/ttlkv_web_bg.wasm"]) {
    assert.ok(files.includes(f), `${f} is in the tarball`);
  }
  assert.ok(!files.some((f) => f.startsWith("src/") || f.startsWith("target/")), "no Rust sources or build output");
  const wasm = readFileSync(path.join(installed, "bindings/js/pkg/ttlkv_web_bg.wasm"));
  const js = ["bindings/js/index.js", "bindings/js/codec.js", "bindings/js/errors.js", "bindings/js/pkg/ttlkv_web.js"]
    .map((f) => readFileSync(path.join(installed, f)));
  const jsGz = js.reduce((n, b) => n + gzipSync(b, { level: 9 }).length, 0);
  console.log(
    `package: tarball ${tarball.size} B, unpacked ${tarball.unpackedSize} B; wasm ${wasm.length} B ` +
      `(${gzipSync(wasm, { level: 9 }).length} B gzipped), JS ${js.reduce((n, b) => n + b.length, 0)} B (${jsGz} B gzipped)`,
  );
});

test("Node imports the installed package by its bare name and uses memory and adapter storage", () => {
  const script = `
    import { open, destroy, TtlKvError } from "ttlkv";
    const db = await open("node-e2e", { storage: "memory", clock: () => 1_767_225_600_000 });
    await db.put("k", { a: 1 }, { ttlMs: 60000 });
    const pages = new Map(); let manifest = null;
    const adapter = {
      async readManifest() { return manifest; },
      async getPage(k) { return pages.get(k); },
      async listPages(p) { return [...pages.keys()].filter((k) => k.startsWith(p)); },
      async commit({ expectedVersion, manifest: m, puts, deletes }) {
        if ((manifest ? manifest.version : 0) !== expectedVersion) throw Object.assign(new Error("stale"), { code: "FENCED" });
        for (const k of deletes) pages.delete(k);
        for (const [k, v] of puts) pages.set(k, v);
        if (m) manifest = m;
      },
    };
    const onAdapter = await open("node-e2e-adapter", { storage: adapter });
    await onAdapter.put("x", "y");
    await onAdapter.close();
    const again = await open("node-e2e-adapter", { storage: adapter });
    let code; try { await open("n", { storage: "indexeddb" }); } catch (e) { code = e instanceof TtlKvError && e.code; }
    console.log(JSON.stringify({ value: await db.get("k"), ttl: await db.ttl("k"), adapter: await again.get("x"), code }));
    await db.close(); await again.close(); await destroy("node-e2e", { storage: "memory" });
  `;
  const out = JSON.parse(run(process.execPath, ["--input-type=module", "-e", script], app).trim());
  assert.deepEqual(out, { value: { a: 1 }, ttl: 60000, adapter: "y", code: "UNSUPPORTED" });
});

test("the type declarations check a program that uses every method, imported by the package's name", () => {
  const usage = readFileSync(path.join(root, "tests/types/usage.ts"), "utf8").replaceAll('"../../bindings/js/index.js"', '"ttlkv"');
  assert.ok(usage.includes('from "ttlkv"'));
  writeFileSync(path.join(app, "usage.ts"), usage);
  const tsc = path.join(here, "node_modules", "typescript", "bin", "tsc");
  const args = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "usage.ts"];
  try {
    run(process.execPath, [tsc, ...args], app);
  } catch (e) {
    assert.fail(`tsc found errors:\n${e.stdout}${e.stderr}`);
  }
});

test("the package's JS test suite passes against the installed package", () => {
  const entry = pathToFileURL(path.join(installed, "bindings/js/index.js")).href;
  const out = run(process.execPath, ["--test", "--test-reporter=tap", path.join(root, "tests/js")], root, { TTLKV_PACKAGE: entry });
  const passed = /# pass (\d+)/.exec(out)?.[1];
  const failed = /# fail (\d+)/.exec(out)?.[1];
  console.log(`JS suite on the installed package: ${passed} passed, ${failed} failed`);
  assert.equal(failed, "0");
  assert.ok(Number(passed) > 0);
});

test("a Vite build keeps its data in IndexedDB across a page reload", async () => {
  const { p, errors } = await page(`${server.origin}/app/`, () => window.ttlkvChecks);
  await p.evaluate(() => window.ttlkvChecks.remove("vite-reload"));
  assert.deepEqual(await p.evaluate(() => window.ttlkvChecks.write("vite-reload")), { stored: 2005 });
  await p.reload();
  await p.waitForFunction(() => window.ttlkvChecks);
  const read = await p.evaluate(() => window.ttlkvChecks.read("vite-reload"));
  assert.deepEqual(read, {
    user: { name: "Ada", roles: ["admin"] },
    bytes: [1, 2, 3],
    bytesType: "Uint8Array",
    text: "hello",
    afterFlush: 42,
    deleted: undefined,
    short: undefined,
    ttlInRange: true,
    count: 1999,
    levels: read.levels,
  });
  assert.ok(read.levels >= 1, "the batch reached an SST");
  assert.deepEqual(errors, []);
  await p.close();
});

test("a module worker in the Vite build stores in IndexedDB", async () => {
  const { p, errors } = await page(`${server.origin}/app/`, () => window.ttlkvChecks);
  const out = await p.evaluate(() => window.ttlkvChecks.inWorker("vite-worker"));
  assert.equal(out.ok, true, out.error);
  assert.equal(out.read.count, 1999);
  assert.deepEqual(out.read.user, { name: "Ada", roles: ["admin"] });
  assert.deepEqual(errors, []);
  await p.close();
});

test("a plain <script type=module> and a module worker load the package's files with no bundler", async () => {
  const { p, errors } = await page(`${server.origin}/plain/`, () => window.ttlkvPlain);
  assert.deepEqual(await p.evaluate(() => window.ttlkvPlain.roundTrip("plain")), {
    value: "hello from a plain module",
    code: "INVALID_ARGUMENT",
  });
  assert.deepEqual(await p.evaluate(() => window.ttlkvPlain.inWorker("plain-worker")), {
    ok: true,
    value: { n: 1 },
    storage: "indexeddb",
  });
  assert.deepEqual(errors, []);
  await p.close();
});

test("a full quota is QUOTA_EXCEEDED with nothing half-written, and reads keep working", async () => {
  const { p } = await page(`${server.origin}/app/`, () => window.ttlkvChecks);
  await p.evaluate(() => window.ttlkvChecks.remove("quota"));
  const cdp = await p.context().newCDPSession(p);
  await cdp.send("Storage.overrideQuotaForOrigin", { origin: server.origin, quotaSize: 2 * 1024 * 1024 });
  const out = await p.evaluate(() => window.ttlkvChecks.fillQuota("quota"));
  console.log(`quota: ${out.acknowledged} puts of 64 KiB acknowledged before ${out.code} (cause ${out.causeName})`);
  assert.equal(out.code, "QUOTA_EXCEEDED");
  assert.equal(out.isTtlKvError, true);
  assert.equal(out.causeName, "QuotaExceededError");
  assert.ok(out.acknowledged > 0);
  assert.equal(out.allReadable, true, "every acknowledged write still reads back");
  await cdp.send("Storage.overrideQuotaForOrigin", { origin: server.origin });
  await p.reload();
  await p.waitForFunction(() => window.ttlkvChecks);
  assert.equal(await p.evaluate(() => window.ttlkvChecks.countBig("quota")), out.acknowledged);
  await p.close();
});

test("a database deleted from under an open Db gives a clear STORAGE error, then a clean empty store", async () => {
  const { p, errors } = await page(`${server.origin}/app/`, () => window.ttlkvChecks);
  const out = await p.evaluate(() => window.ttlkvChecks.takenAway("taken"));
  assert.equal(out.deleted, "deleted", "the open Db let the delete through instead of blocking it");
  assert.match(out.afterwards, /^STORAGE: .*deleted or upgraded by another context/);
  assert.equal(out.valueAfterReopen, null, "the next open starts from an empty store");
  assert.deepEqual(errors, []);
  await p.close();
});

test("an IndexedDB open that cannot proceed times out with STORAGE instead of hanging", async () => {
  const { p, errors } = await page(`${server.origin}/app/`, () => window.ttlkvChecks);
  const out = await p.evaluate(() => window.ttlkvChecks.blockedOpen("blocked"));
  assert.match(out.outcome, /^STORAGE: IndexedDB did not open within 300 ms/);
  assert.ok(out.waitedMs >= 300 && out.waitedMs < 5_000, `waited ${out.waitedMs} ms`);
  assert.equal(out.afterRelease, "deleted");
  assert.deepEqual(errors, []);
  await p.close();
});
