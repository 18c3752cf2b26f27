// The package's core, shared by every entry: `open`, `destroy`, `init`, `TtlKvError`.
//
// The core owns what only JavaScript can do — typed keys and values, option checking, scans as
// async iterables, expire events, the automatic maintenance timer — and drives the engine by method
// name and plain arguments through an endpoint: this context's engine (engine.js, over the
// bytes-level API of `bindings/web`), or the writer tab's when several tabs share an IndexedDB
// database (tabs.js). Every rejection is a TtlKvError with a code (CODES in errors.js).
//
// How the WebAssembly engine is found differs by runtime, so each entry (index.js for browsers
// and bundlers, node.js, deno.js, workerd.js, edge-light.js; package.json picks one by export
// condition) tells the core with `useEngineSource`. The engine is loaded by the first open() —
// never at import time — or by an explicit `init()`.
//
// This file is a facade over one file per concern:
//   load.js      where the engine comes from (useEngineSource, init) and loading it once
//   options.js   checking the app's arguments; put, expire and scan options for the engine
//   snapshot.js  values and entries, scans page by page, Snapshot, the reaper
//   shared.js    what the handles of one database share: endpoint, expire events, maintenance
//   db.js        Db, the handle of a database or namespace
//   open.js      openDb and destroyDb: options, storage kinds, timeouts, lease or tabs
//   guard.js     every public failure is a TtlKvError (guarded, guardMethods)

import { TtlKvError, CODES } from "./errors.js";
import { openDb, destroyDb } from "./open.js";
import { initEngine } from "./load.js";
import { guarded } from "./guard.js";

export { TtlKvError, CODES };
export { useEngineSource } from "./load.js";
export { encodeStringsFrom } from "./codec.js";
export { useKeepAlive } from "./shared.js";

/** Open (or create) database `name`. See index.d.ts for the options. */
export const open = guarded(openDb);

/**
 * Delete database `name` and all its pages. With IndexedDB it resolves once every connection to
 * the database (in any tab) is closed; an adapter's storage belongs to the app, which deletes it.
 */
export const destroy = guarded(destroyDb);

/**
 * Load the engine from `{ module }` (a compiled WebAssembly.Module), `{ bytes }` or `{ url }`
 * before the first open(), for hosts and bundlers that hand it over; without it, open() loads
 * the engine the way this runtime's entry finds it.
 */
export const init = guarded(initEngine);
