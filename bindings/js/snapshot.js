// Reading rows: engine answers as the app's values and entries (valueOf, entryOf), scans fetched
// page by page (scanPages), `Snapshot`, and the reaper that frees the engine resources behind an
// object the app dropped (snapshots, unfinished scans, namespace handles).

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
 * Entries of a scan, fetched page by page from snapshot `held.id` of `held.endpoint`, released at
 * the end (and `held.id` cleared: nothing is left for the reaper).
 */
export async function* scanPages(held, args) {
  const { endpoint, id } = held;
  let { prefix, start, end, limit, reverse } = args;
  try {
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
    return {
      async *[Symbol.asyncIterator]() {
        const { prefix, start, end, limit, reverse } = args;
        const rows = await endpoint.callSnapshot(id, "scan", [prefix, start, end, limit, reverse]);
        for (const row of rows) yield entryOf(row);
      },
    };
  }
  release() {
    reaper.unregister(this);
    this.#endpoint.release(this.#id);
  }
}

guardMethods(Snapshot);
