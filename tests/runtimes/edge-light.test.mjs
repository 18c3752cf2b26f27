// The package in Vercel Edge's runtime (`@edge-runtime/vm`, with code generation off as on
// Vercel: no compiling wasm from bytes, no eval). The app is bundled as Next.js bundles an edge
// route — export conditions "edge-light", "worker", "browser" — and a `.wasm?module` import
// becomes a WebAssembly.Module the platform binds as a global, as Vercel's builder does.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { EdgeVM } from "@edge-runtime/vm";
import { root, scratchProject } from "./support/packed.mjs";

/** esbuild plugin: `import m from "./x.wasm?module"` → the global binding `wasm_x`, and the file. */
function wasmModules(bound) {
  return {
    name: "wasm-module-bindings",
    setup(b) {
      b.onResolve({ filter: /\.wasm\?module$/ }, (args) => ({
        path: path.join(args.resolveDir, args.path.replace(/\?module$/, "")),
        namespace: "wasm-binding",
      }));
      b.onLoad({ filter: /.*/, namespace: "wasm-binding" }, (args) => {
        const name = `wasm_${path.basename(args.path, ".wasm")}`;
        bound[name] = new WebAssembly.Module(readFileSync(args.path));
        return { contents: `export default globalThis[${JSON.stringify(name)}];`, loader: "js" };
      });
    },
  };
}

async function bundle(dir, conditions) {
  const bound = {};
  const out = await build({
    entryPoints: [path.join(dir, "app.js")],
    bundle: true,
    write: false,
    format: "iife",
    platform: "neutral",
    conditions,
    mainFields: ["module", "main"],
    plugins: [wasmModules(bound)],
    logLevel: "silent",
  });
  return { code: out.outputFiles[0].text, bound };
}

function edgeRuntime({ code, bound }) {
  return new EdgeVM({
    // As on Vercel: no eval, no compiling wasm in the function.
    codeGeneration: { strings: false, wasm: false },
    extend: (context) => Object.assign(context, bound),
    initialCode: code,
  });
}

async function step(vm, name) {
  const res = await vm.dispatchFetch(`https://edge.test/?step=${name}`);
  return { status: res.status, body: await res.json() };
}

test("an edge function on Vercel's runtime, bundled with the edge-light condition, serves TTL requests from one db", async () => {
  const dir = scratchProject({ "app.js": readFileSync(path.join(root, "tests/runtimes/edge-light/app.js"), "utf8") });
  try {
    const vm = edgeRuntime(await bundle(dir, ["edge-light", "worker", "browser"]));
    assert.deepEqual(await step(vm, "write"), { status: 200, body: { ttl: 1_000 } });
    assert.deepEqual(await step(vm, "later"), {
      status: 200,
      body: { purged: 1, expired: ["session:a"], keys: ["session:b"], b: { user: 2 } },
    });
    assert.deepEqual(await step(vm, "clear"), { status: 200, body: { config: null } });
    assert.deepEqual(await step(vm, "close"), { status: 200, body: { closed: true } });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("without the edge-light entry the engine is not found there: open() is UNSUPPORTED, with the reason", async () => {
  const dir = scratchProject({ "app.js": readFileSync(path.join(root, "tests/runtimes/edge-light/app.js"), "utf8") });
  try {
    // The browser entry finds the .wasm by its module's URL, which a bundled script has not.
    const vm = edgeRuntime(await bundle(dir, ["browser"]));
    const { status, body } = await step(vm, "write");
    assert.equal(status, 500);
    assert.equal(body.error, "UNSUPPORTED", body.message);
    assert.ok(body.cause, "the cause is kept");
    assert.match(body.message, /init\(/, "the message says what to do");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("init() there: bytes are refused (no code generation) as UNSUPPORTED with the cause; a compiled module works", async () => {
  const app = `
    import { init, open } from "ttlkv";
    import engine from "./engine.wasm?module";
    addEventListener("fetch", (event) => event.respondWith((async () => {
      const refused = await init({ bytes: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]) }).then(() => null, (e) => ({ code: e.code, cause: String(e.cause) }));
      await init({ module: engine });
      const db = await open("init", { storage: "memory" });
      await db.put("k", "v", { ttlMs: 60_000 });
      return Response.json({ refused, value: await db.get("k") });
    })()));
  `;
  const dir = scratchProject({ "app.js": app });
  try {
    copyFileSync(path.join(dir, "node_modules/ttlkv/bindings/js/dist/pkg/ttlkv_web_bg.wasm"), path.join(dir, "engine.wasm"));
    // The browser entry (no edge-light condition): init() is how the engine gets there.
    const code = await bundle(dir, ["browser"]);
    const vm = edgeRuntime(code);
    const res = await vm.dispatchFetch("https://edge.test/");
    const body = await res.json();
    assert.equal(body.value, "v");
    assert.equal(body.refused.code, "UNSUPPORTED");
    assert.match(body.refused.cause, /code generation/i);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the Next.js edge route of docs/runtimes.md runs as written: a per-isolate TTL counter", async () => {
  // The route module as Next.js builds it for the edge: its GET served for each request.
  const server = `
    import { GET } from "./route.js";
    addEventListener("fetch", (event) => event.respondWith(GET(event.request)));
  `;
  const route = readFileSync(path.join(root, "tests/runtimes/edge-light/route.js"), "utf8");
  const dir = scratchProject({ "app.js": server, "route.js": route });
  try {
    const vm = edgeRuntime(await bundle(dir, ["edge-light", "worker", "browser"]));
    const visit = async (ip) => (await vm.dispatchFetch("https://edge.test/api/visits", { headers: { "x-forwarded-for": ip } })).json();
    const first = await visit("10.0.0.1");
    assert.equal(first.visits, 1);
    assert.ok(first.resetsInMs > 59_000 && first.resetsInMs <= 60_000, JSON.stringify(first));
    assert.equal((await visit("10.0.0.1")).visits, 2);
    assert.equal((await visit("10.0.0.2")).visits, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
