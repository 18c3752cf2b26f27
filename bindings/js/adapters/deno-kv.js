// `ttlkv/deno-kv`: the page store of a ttlkv database on Deno KV:
// `open(name, { storage: denoKvStorage(kv) })`. This entry holds the public functions; the parts
// are in deno-kv/: store.js (the page store class, the key layout and why a commit is atomic),
// layout.js (the blobs, head and journal a commit writes), atomic.js (atomic operations within
// Deno KV's limits), keys.js (the keys it owns, prefix and page key checks) and errors.js.
//
// Only the `kv` object passed in is used (get, getMany, list, atomic), so the module loads
// anywhere and a wrapper of a `Deno.Kv` works as well.

import { DenoKvPageStore, LIST_CHUNKS_BATCH } from "./deno-kv/store.js";
import { OWN_PARTS, checkedPrefix } from "./deno-kv/keys.js";
import { packDeletes, sendAll } from "./deno-kv/atomic.js";
import { asAdapterError } from "./deno-kv/errors.js";
import { badArgument, factoryOptions } from "./common/arguments.js";

/**
 * A page-store adapter over Deno KV for `open(name, { storage })`. `kv` is a `Deno.Kv` (or an
 * object with its get, getMany, list and atomic); `prefix` is the key prefix this database owns
 * (default `["ttlkv"]`: give each database on one KV its own).
 */
export function denoKvStorage(kv, options) {
  checkKv(kv);
  return new DenoKvPageStore(kv, prefixOf(options, "denoKvStorage"));
}

/**
 * Delete every key of the database stored under `prefix`. Run it with the database closed: a
 * writer still open is fenced (its head is gone) but may leave a key or two behind.
 */
export async function destroyDenoKvStorage(kv, options) {
  checkKv(kv);
  const p = prefixOf(options, "destroyDenoKvStorage");
  try {
    // The head first, so that a writer still open is fenced rather than writing on.
    await kv.atomic().delete([...p, "head"]).commit();
    // Only the parts this module writes: a database whose prefix merely starts with `prefix`
    // (["ttlkv"] and ["ttlkv", "sessions"]) keeps its keys.
    const keys = [];
    for (const part of OWN_PARTS) {
      for await (const { key } of kv.list({ prefix: [...p, part] }, { batchSize: LIST_CHUNKS_BATCH })) keys.push(key);
    }
    await sendAll(kv, packDeletes(keys));
  } catch (e) {
    throw asAdapterError("destroyDenoKvStorage", e);
  }
}

/** The prefix of `options` (none, or `{ prefix }`), checked; `["ttlkv"]` by default. */
function prefixOf(options, what) {
  const { prefix = ["ttlkv"] } = factoryOptions(options, ["prefix"], what);
  return checkedPrefix(prefix);
}

function checkKv(kv) {
  for (const method of ["get", "getMany", "list", "atomic"]) {
    if (typeof kv?.[method] !== "function") throw badArgument(`denoKvStorage: kv is not a Deno.Kv (it has no ${method}())`);
  }
}
