// Reading rows: engine answers as the app's values and entries (valueOf, entryOf), scans fetched
// page by page (pagesOf, scanPages), `Snapshot`, and the reaper that frees the engine resources
// behind an object the app dropped (snapshots, unfinished scans, namespace handles).

import { encodeKey, decodeKey, decodeValue } from "./codec.js";
import { scanArgs } from "./options.js";
import { guardMethods } from "./guard.js";

/**
 * The value of an engine `get`: text values come back decoded already (a string, or the parsed
 * JSON value), anything else as its stored bytes with their tag (see `value_js` in
 * bindings/web/src/api/answers.rs); `undefined` when absent.
 */
export const valueOf = (raw) => (raw instanceof Uint8Array ? decodeValue(raw).value : raw);

export function entryOf(raw) {
  const { value, keyWasString } = decodeValue(raw[1]);
  return { key: decodeKey(raw[0], keyWasString), value, expireAt: raw[2] };
}

/** The byte string right after `key` (for resuming a forward scan). */
function after(key) {
  const out = new Uint8Array(key.length + 1);
  out.set(key);
  return out;
}

const SCAN_PAGE = 256;

/**
 * Engine resources that stand behind an app's object, freed once the object is garbage-collected
 * if the app never let them go: a dropped namespace handle's engine handle, the snapshot of a
 * dropped Snapshot or of a scan the app stopped iterating without `break` or `return()` (which
 * would keep every row it can see from being compacted away until close()).
 */
export const reaper =
  typeof FinalizationRegistry === "function"
    ? new FinalizationRegistry((free) => free())
    : // A runtime without it (some embedders leave it out): then only release() and close() free.
      { register() {}, unregister() {} };

/**
 * Entries of a scan, fetched page by page (SCAN_PAGE entries at most) from snapshot `id` of
 * `endpoint`: no call builds more than a page of entries, however many the scan covers.
 */
async function* pagesOf(endpoint, id, args) {
  let { prefix, start, end, limit, reverse } = args;
  while (limit !== 0) {
    const page = limit < 0 ? SCAN_PAGE : Math.min(limit, SCAN_PAGE);
    const rows = await endpoint.callSnapshot(id, "scan", [prefix, start, end, page, reverse]);
    for (const row of rows) yield entryOf(row);
    if (rows.length < page) return;
    if (limit > 0) limit -= rows.length;
    const last = rows[rows.length - 1][0];
    if (reverse) end = last;
    else start = after(last);
  }
}

/**
 * A `Db.scan`'s entries, fetched page by page from snapshot `held.id` of `held.endpoint`, which
 * the scan took for itself: released at the end (and `held.id` cleared: nothing is left for the
 * reaper).
 */
export async function* scanPages(held, args) {
  const { endpoint, id } = held;
  try {
    yield* pagesOf(endpoint, id, args);
  } finally {
    held.id = undefined;
    endpoint.release(id);
  }
}

export class Snapshot {
  #endpoint;
  #id;
  constructor(endpoint, id) {
    this.#endpoint = endpoint;
    this.#id = id;
  }
  async get(key) {
    const raw = await this.#endpoint.callSnapshot(this.#id, "get", [encodeKey(key)]);
    return valueOf(raw);
  }
  async getEntry(key) {
    const raw = await this.#endpoint.callSnapshot(this.#id, "getEntry", [encodeKey(key)]);
    return raw === undefined ? undefined : entryOf(raw);
  }
  async has(key) {
    return this.#endpoint.callSnapshot(this.#id, "has", [encodeKey(key)]);
  }
  async ttl(key) {
    return this.#endpoint.callSnapshot(this.#id, "ttl", [encodeKey(key)]);
  }
  scan(opts) {
    const args = scanArgs(opts);
    const endpoint = this.#endpoint;
    const id = this.#id;
    // Paged like `Db.scan`; the snapshot is the app's, so the scan's end does not release it.
    return { [Symbol.asyncIterator]: () => pagesOf(endpoint, id, args) };
  }
  release() {
    reaper.unregister(this);
    this.#endpoint.release(this.#id);
  }
}

guardMethods(Snapshot);
