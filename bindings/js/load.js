// Loading the engine: where it comes from (`useEngineSource`, set by the entries; `init()`, called
// by the app) and the one load and instantiation of the WebAssembly module that open() and
// destroy() wait for.

import { TtlKvError } from "./errors.js";
import { invalid, readOptions, givenOf } from "./options.js";
import { describe } from "./guard.js";
import initWasm, { initSync, useErrorClass } from "./pkg/ttlkv_web.js";

/**
 * Where the engine comes from: a function giving `{ module }` (a compiled `WebAssembly.Module`),
 * `{ bytes }` (its bytes) or `{ url }` (where to fetch it), maybe as a Promise. `init()` sets
 * `given`; an entry sets `fallback`. An entry may add `sync: true`: instantiate a module compiled
 * here synchronously (see `load`).
 */
let given;
let fallback;
let loading;

/** For the entries: how this runtime finds the engine when the app does not call `init()`. */
export function useEngineSource(source) {
  fallback = source;
}

const SOURCE_KINDS = ["module", "bytes", "url"];

function checkSource(options) {
  const o = readOptions(options, SOURCE_KINDS, "init");
  const kinds = givenOf(o);
  if (kinds.length !== 1) throw invalid("init takes exactly one of module, bytes, url");
  const [kind] = kinds;
  const value = o[kind];
  const ok =
    kind === "module"
      ? // Also a module compiled in another realm (a host may compile it outside the worker).
        Object.prototype.toString.call(value) === "[object WebAssembly.Module]"
      : kind === "bytes"
        ? value instanceof ArrayBuffer || ArrayBuffer.isView(value)
        : typeof value === "string" || value instanceof URL;
  if (!ok) {
    const want = { module: "a WebAssembly.Module", bytes: "an ArrayBuffer or a typed array", url: "a string or a URL" };
    throw invalid(`init: ${kind} must be ${want[kind]}`);
  }
  return { [kind]: value };
}

/**
 * Load the engine from `options` (`{ module }`, `{ bytes }` or `{ url }`) instead of the way the
 * entry would find it: for hosts and bundlers that hand over the compiled module or its bytes.
 * Once the engine is loaded, later calls change nothing. Rejects like open() when it cannot load.
 */
export async function initEngine(options) {
  const source = checkSource(options);
  if (loaded) return;
  given = () => source;
  if (loading) await loading.catch(() => {});
  if (!loaded) loading = undefined;
  await load();
}

let loaded = false;

/**
 * Load and instantiate the engine once. A load that fails is an `UNSUPPORTED` error with its
 * cause (the engine cannot run here, or its file could not be read), and is not kept: the next
 * open() tries again.
 */
export function load() {
  if (!loading) {
    loading = (async () => {
      const source = given ?? fallback;
      if (!source) throw new Error("this entry cannot find the engine: call init({ module | bytes | url }) first");
      const { module, bytes, url, sync } = await source();
      // A module (or bytes) handed over is checked before the glue takes it: the glue keeps the
      // first instance it makes, so one of another module would stay broken for every retry.
      const compiled = module ?? (bytes && (await WebAssembly.compile(bytes)));
      if (compiled && !WebAssembly.Module.exports(compiled).some((e) => e.name === "openDb")) {
        throw new Error("the WebAssembly module given is not the ttlkv engine (it exports no openDb)");
      }
      // The glue's async init looks at the `Request` and `Response` globals, and in Node the
      // first look loads its fetch implementation: about 12 ms of the first open there. The Node
      // entry asks for a synchronous instantiation of the module compiled here, which skips that;
      // browsers may refuse one for a module this size on their main thread.
      if (sync && compiled instanceof WebAssembly.Module) initSync({ module: compiled });
      else await initWasm({ module_or_path: compiled ?? url });
      // The engine makes its errors with the package's class, so `instanceof` holds for them.
      useErrorClass(TtlKvError);
      loaded = true;
    })().catch((e) => {
      loading = undefined;
      // The browser entry and the server entries each have their engine build, and each build's
      // glue links only its own (see build.toml): the other one fails to link, for a function
      // the glue lacks (a LinkError) or, the server's in the browser entry, for a whole module of
      // its imports the glue leaves out (a TypeError that names the import).
      const hint =
        e instanceof WebAssembly.LinkError || (e instanceof TypeError && /import/i.test(e.message))
          ? " (is it the engine of another entry? The browser entry takes dist/pkg/ttlkv_web_bg.wasm, the server entries dist/server/pkg/ttlkv_web_bg.wasm)"
          : "";
      throw new TtlKvError("UNSUPPORTED", `the ttlkv engine could not be loaded: ${describe(e)}${hint}`, { cause: e });
    });
  }
  return loading;
}
