// `ttlkv/keyv`: a Keyv storage adapter (Keyv 5) on a ttlkv database, so that Keyv, and what is
// built on it such as cache-manager 7, keep their data in ttlkv with ttlkv's TTLs:
//
//   const keyv = new Keyv({ store: new KeyvTtlkv({ name: "cache" }) });
//
// Keys. Keyv prefixes each key with `<namespace>:` itself (unless `useKeyPrefix` is false) and
// tells the store its namespace by setting `store.namespace`. The store keeps keys as Keyv gives
// them, and keeps each Keyv namespace in the ttlkv namespace of the same name (no namespace: the
// database's default keyspace). So `clear()` is ttlkv's `clear()` of that one namespace: every
// key of it goes in one atomic change, whatever their number, and other namespaces keep theirs;
// and `iterator(namespace)` reads that namespace alone. One store serves one Keyv instance at a
// time (Keyv sets its namespace on it); stores are cheap, and several can share one database.
//
// Values. With Keyv's serializer (its default) the store is given `{ value, expires }` as a
// string, and keeps the string. With the serializer turned off (`serialize: undefined,
// deserialize: undefined`) it is given the object, and keeps the value natively: a Uint8Array (a
// Buffer too) as bytes, anything JSON-compatible as ttlkv JSON inside a one-element array (so that
// it is never taken for a serialized string; `[]` is `undefined`). It then reads back as
// `{ value, expires }` with `expires` the key's expiry in ttlkv. Either way the key gets a ttlkv
// TTL: Keyv's `ttl` in ms, or when Keyv gives none, the database's `defaultTtlMs` (if any).
import { open, TtlKvError } from "ttlkv";
import { MAX_JS_TTL_MS } from "./protocol.js";

const invalid = (message) => new TtlKvError("INVALID_ARGUMENT", message);

/**
 * ttlkv's put options for Keyv's `ttl` (ms; `undefined` for none), as Keyv's own Map store reads
 * it: `Infinity` never expires, a ttl past the longest ttlkv keeps is that longest, and one of 0
 * or less is already over (`null`: the key is deleted, not written). Not a number is refused.
 */
function ttlOptions(ttl) {
  if (ttl === undefined || ttl === null) return {};
  if (typeof ttl !== "number" || Number.isNaN(ttl)) {
    throw invalid(`a ttl is a number of ms, or undefined for none (got ${String(ttl)})`);
  }
  if (ttl <= 0) return null;
  if (ttl === Infinity) return { noExpiry: true };
  // ttlkv counts whole ms: round up, so that a key never expires before its time.
  return { ttlMs: Math.min(Math.ceil(ttl), MAX_JS_TTL_MS) };
}

/**
 * The databases stores opened by name, by name and then by their `storage` option (an adapter
 * by identity): stores of one name and storage share one open database (opening it again would
 * take the writer role from the first, which is then FENCED), opened with the first store's
 * options and closed when the last of them disconnects. `{ db, refs }` each.
 */
const opened = new Map();

function openShared(name, options) {
  const storage = options.storage ?? "auto";
  let byStorage = opened.get(name);
  if (byStorage === undefined) opened.set(name, (byStorage = new Map()));
  let entry = byStorage.get(storage);
  if (entry === undefined) {
    entry = { db: open(name, options), refs: 0, forget: () => byStorage.get(storage) === entry && byStorage.delete(storage) };
    byStorage.set(storage, entry);
    // A failed open is forgotten: the next call opens again.
    entry.db.catch(entry.forget);
  }
  entry.refs++;
  return entry;
}

/** Whether `value` is Keyv's unserialized `{ value, expires }`. */
const isKeyvRecord = (value) => value !== null && typeof value === "object" && !ArrayBuffer.isView(value) && Object.hasOwn(value, "value");

/** What the database keeps for what Keyv gives (see "Values" above). */
function toStored(data) {
  if (typeof data === "string") return data;
  if (!isKeyvRecord(data)) {
    throw invalid("KeyvTtlkv stores what Keyv gives it: a serialized string, or { value, expires } when Keyv's serializer is off");
  }
  const { value } = data;
  if (value === undefined) return [];
  if (value instanceof Uint8Array) return value;
  return [value];
}

/** What Keyv gets for a stored entry. */
function fromStored({ value, expireAt }) {
  if (typeof value === "string") return value;
  const expires = expireAt ?? undefined;
  if (Array.isArray(value) && value.length <= 1) return { value: value[0], expires };
  return { value, expires };
}

/**
 * `e`, from writing `data`: when a value given natively was refused, with what can be kept
 * (Keyv's serializer takes more: Dates, BigInts with a custom one, …).
 */
function explained(e, data) {
  const native = data.some((d) => typeof d !== "string");
  if (!native || !(e instanceof TtlKvError) || e.code !== "INVALID_ARGUMENT") return e;
  return new TtlKvError(
    "INVALID_ARGUMENT",
    `${e.message} (with Keyv's serializer off, a value must be a string, a Uint8Array or JSON-compatible data)`,
    { cause: e },
  );
}

/**
 * A Keyv 5 storage adapter on a ttlkv database: `new KeyvTtlkv({ db })` on an open database (the
 * app closes it), or `new KeyvTtlkv({ name, ...openOptions })`, opened by the first call and
 * closed by `disconnect()`.
 */
export class KeyvTtlkv {
  /**
   * Keyv reads `opts` of a store that has an `iterator`: `dialect` and `url` say what this is
   * (Keyv 5 wires `keyv.iterator()` for its own list of dialects only; see keyv.d.ts).
   */
  opts = { dialect: "ttlkv", url: "ttlkv:" };
  #db;
  #name;
  #openOptions;
  #owned;
  /** The shared open of a store opened by name (`openShared`), until `disconnect()`. */
  #shared;
  #disconnected = false;
  #namespace;
  #handles = new Map();
  #listeners = new Map();

  /** @param {{ db: import("ttlkv").Db } | ({ name: string } & import("ttlkv").OpenOptions)} options */
  constructor(options) {
    if (options === null || typeof options !== "object") {
      throw invalid("KeyvTtlkv takes { db } (an open ttlkv database) or { name, ...open options }");
    }
    const { db, name, ...openOptions } = options;
    if (db !== undefined) {
      if (name !== undefined || Object.keys(openOptions).length > 0) {
        throw invalid("KeyvTtlkv takes either { db } or { name, ...open options }, not both");
      }
      if (db === null || typeof db !== "object" || typeof db.namespace !== "function") {
        throw invalid("db must be an open ttlkv database (what open() resolves to)");
      }
      this.#db = Promise.resolve(db);
      this.#owned = false;
    } else {
      if (typeof name !== "string" || name.length === 0) {
        throw invalid("KeyvTtlkv needs { db } (an open ttlkv database) or { name, ...open options }");
      }
      this.#name = name;
      this.#openOptions = openOptions;
      this.#owned = true;
    }
  }

  /** The Keyv namespace (Keyv sets it): keys live in the ttlkv namespace of that name. */
  get namespace() {
    return this.#namespace;
  }

  set namespace(name) {
    this.#namespace = typeof name === "string" && name.length > 0 ? name : undefined;
  }

  async get(key) {
    const entry = await (await this.#keyspace()).getEntry(key);
    return entry === undefined ? undefined : fromStored(entry);
  }

  async getMany(keys) {
    const keyspace = await this.#keyspace();
    const entries = await Promise.all(keys.map((key) => keyspace.getEntry(key)));
    return entries.map((entry) => (entry === undefined ? undefined : fromStored(entry)));
  }

  async set(key, value, ttl) {
    const options = ttlOptions(ttl);
    const stored = toStored(value);
    const keyspace = await this.#keyspace();
    try {
      if (options === null) await keyspace.delete(key);
      else await keyspace.put(key, stored, options);
    } catch (e) {
      throw explained(e, [value]);
    }
    return true;
  }

  /** Every entry in one atomic batch. */
  async setMany(entries) {
    const ops = entries.map(({ key, value, ttl }) => {
      const options = ttlOptions(ttl);
      const stored = toStored(value);
      return options === null ? { type: "delete", key } : { type: "put", key, value: stored, ...options };
    });
    const keyspace = await this.#keyspace();
    try {
      await keyspace.batch(ops);
    } catch (e) {
      throw explained(e, entries.map((entry) => entry.value));
    }
    return entries.map(() => true);
  }

  async delete(key) {
    return (await this.#keyspace()).delete(key);
  }

  /** Whether any of `keys` was there (each delete is its own write: one that fails does not stop the others). */
  async deleteMany(keys) {
    const keyspace = await this.#keyspace();
    const deleted = await Promise.all(keys.map((key) => keyspace.delete(key)));
    return deleted.some(Boolean);
  }

  async has(key) {
    return (await this.#keyspace()).has(key);
  }

  async hasMany(keys) {
    const keyspace = await this.#keyspace();
    return Promise.all(keys.map((key) => keyspace.has(key)));
  }

  /** Remove every key of this store's namespace (only), in one atomic change. */
  async clear() {
    await (await this.#keyspace()).clear();
  }

  /** `[key, stored]` for each live key of `namespace` (Keyv passes the store's), in key order. */
  async *iterator(namespace) {
    const db = await this.#database();
    const keyspace = typeof namespace === "string" && namespace.length > 0 ? this.#handle(db, namespace) : db;
    for await (const entry of keyspace.scan()) yield [entry.key, fromStored(entry)];
  }

  /**
   * Close the database if this store opened it and no other store of its name still uses it; one
   * given as `{ db }` is the app's to close. The store's later calls reject with CLOSED.
   */
  async disconnect() {
    if (!this.#owned || this.#disconnected) return;
    this.#disconnected = true;
    const entry = this.#shared;
    this.#shared = undefined;
    if (entry === undefined || --entry.refs > 0) return;
    entry.forget();
    const db = await entry.db.catch(() => undefined);
    await db?.close();
  }

  /** Listen for `"error"`: a failure to open the database (each call waiting for it rejects too). */
  on(event, listener) {
    if (typeof listener !== "function") throw invalid("a listener must be a function");
    const listeners = this.#listeners.get(event) ?? [];
    this.#listeners.set(event, [...listeners, listener]);
    return this;
  }

  off(event, listener) {
    const listeners = (this.#listeners.get(event) ?? []).filter((l) => l !== listener);
    this.#listeners.set(event, listeners);
    return this;
  }

  once(event, listener) {
    const once = (...args) => {
      this.off(event, once);
      listener(...args);
    };
    return this.on(event, once);
  }

  #emit(event, ...args) {
    for (const listener of this.#listeners.get(event) ?? []) listener(...args);
  }

  /**
   * The database, opened by the first call that needs it (or shared with another store of its
   * name, see `opened`); a failed open is tried again by the next.
   */
  #database() {
    if (this.#disconnected) return Promise.reject(new TtlKvError("CLOSED", "the store was disconnected"));
    if (this.#db === undefined) {
      this.#shared = openShared(this.#name, this.#openOptions);
      this.#db = this.#shared.db.catch((e) => {
        this.#db = undefined;
        this.#shared = undefined;
        this.#emit("error", e);
        throw e;
      });
    }
    return this.#db;
  }

  /** The keyspace of the current namespace. */
  async #keyspace() {
    const db = await this.#database();
    return this.#namespace === undefined ? db : this.#handle(db, this.#namespace);
  }

  #handle(db, name) {
    let handle = this.#handles.get(name);
    if (handle === undefined) {
      handle = db.namespace(name);
      this.#handles.set(name, handle);
    }
    return handle;
  }
}

export default KeyvTtlkv;
