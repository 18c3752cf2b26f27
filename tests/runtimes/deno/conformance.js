// The core's page-store conformance suite (a test build of the engine: ttlkv_web.js and its
// wasm, copied beside this script) run on the Deno KV adapter, each behaviour on a fresh prefix
// of one KV. A behaviour that fails panics and leaves the engine instance unusable, so the script
// stops there; the caller runs it again from the next one.
//   deno run --unstable-kv conformance.js [from]       behaviours from number `from` (default 0)
//   deno run --unstable-kv conformance.js broken NAME  behaviour NAME on an adapter broken on purpose
// Prints { total, results: [{ name, ok, error }] } as JSON.
import source engine from "./ttlkv_web_bg.wasm";
import init, { checkPageStore, pageStoreBehaviours } from "./ttlkv_web.js";
import { denoKvStorage } from "ttlkv/deno-kv";

// The panic hook prints a failure's message with console.error (kept here, and off stdout, which
// carries the JSON); the panic itself may surface as an uncaught error rather than a rejection.
let panicMessage = "";
console.error = (...args) => {
  panicMessage = args.join(" ").split("\n\nStack:")[0];
  Deno.stderr.writeSync(new TextEncoder().encode(args.join(" ") + "\n"));
};

await init({ module_or_path: engine });
const kv = await Deno.openKv(":memory:");

/** Wrappers that break the contract, to show the harness sees a failing behaviour. */
const breakers = {
  // A FENCED rejection turned into success.
  swallowsFenced: (adapter) => ({
    readManifest: () => adapter.readManifest(),
    getPage: (key) => adapter.getPage(key),
    listPages: (prefix) => adapter.listPages(prefix),
    commit: (c) => adapter.commit(c).catch((e) => (e.code === "FENCED" ? undefined : Promise.reject(e))),
  }),
  // Every delete dropped.
  dropsDeletes: (adapter) => ({ ...breakers.swallowsFenced(adapter), commit: (c) => adapter.commit({ ...c, deletes: [] }) }),
};

const names = pageStoreBehaviours();
const results = [];
let running = null;
const report = () => console.log(JSON.stringify({ total: names.length, results }));
globalThis.addEventListener("error", (event) => {
  event.preventDefault();
  results.push({ name: running, ok: false, error: panicMessage || String(event.error) });
  report();
  Deno.exit(0);
});

async function check(name, adapter) {
  running = name;
  try {
    await checkPageStore(name, adapter);
    return { name, ok: true };
  } catch (e) {
    return { name, ok: false, error: panicMessage || String(e?.message ?? e) };
  }
}

if (Deno.args[0] === "broken") {
  const [, breaker, name] = Deno.args;
  results.push(await check(name, breakers[breaker](denoKvStorage(kv, { prefix: ["broken", name] }))));
} else {
  for (const name of names.slice(Number(Deno.args[0] ?? 0))) {
    const result = await check(name, denoKvStorage(kv, { prefix: ["conformance", name] }));
    results.push(result);
    if (!result.ok) break;
  }
}
report();
