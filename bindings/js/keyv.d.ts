// TypeScript declarations for `ttlkv/keyv` (bindings/js/keyv.js): a Keyv 5 storage adapter on a
// ttlkv database. Keyv's own types are not imported (the package does not depend on keyv): the
// store's shape is declared here, and `new Keyv({ store })` takes it.
import type { Db, OpenOptions } from "ttlkv";

/**
 * Options of {@link KeyvTtlkv}: an open database (`{ db }`, which the app closes), or a database
 * name with the options of `open()` (`{ name, ...openOptions }`: opened by the first call, closed
 * by `disconnect()`).
 */
export type KeyvTtlkvOptions = { db: Db; name?: undefined } | ({ name: string; db?: undefined } & OpenOptions);

/** Keyv's unserialized entry, which the store is given when Keyv's serializer is turned off. */
export interface KeyvRecord<Value = unknown> {
  value?: Value;
  /** When it expires, in ms since the Unix epoch; `undefined` for never. */
  expires?: number | undefined;
}

/** What the store keeps and gives back: Keyv's serialized string, or a {@link KeyvRecord}. */
export type KeyvStored<Value = unknown> = string | KeyvRecord<Value>;

/**
 * A Keyv 5 storage adapter on a ttlkv database:
 * `new Keyv({ store: new KeyvTtlkv({ name: "cache" }) })`.
 *
 * - **Namespaces**: each Keyv namespace (Keyv sets {@link KeyvTtlkv.namespace}) lives in the ttlkv
 *   namespace of the same name, keys kept as Keyv gives them (prefixed `<namespace>:`); no
 *   namespace: the database's default keyspace. `clear()` removes every key of that namespace
 *   and no other, in one atomic change whatever their number. One store serves one Keyv instance;
 *   several stores may share one database: those opened by the same `name` and `storage` share
 *   one open database (the first one's options), closed when the last of them disconnects.
 * - **TTL**: Keyv's `ttl` (ms) becomes the key's ttlkv TTL (rounded up to whole ms); without one
 *   the database's `defaultTtlMs` applies, if it has one. As Keyv's own store reads it:
 *   `Infinity` never expires, a ttl past ttlkv's longest (8,753,796,953,940,992 ms) is that
 *   longest, and 0 or less deletes the key (it is over already); not a number is
 *   `INVALID_ARGUMENT`.
 * - **Values**: with Keyv's serializer (its default), the serialized string is kept as a string.
 *   With it turned off (`new Keyv({ store, serialize: undefined, deserialize: undefined })`), the
 *   value is kept natively: a `Uint8Array` (a `Buffer` too; read back as a `Uint8Array`) as
 *   bytes, JSON-compatible data as ttlkv JSON; anything else is an `INVALID_ARGUMENT` error.
 * - **Iteration**: the store has `iterator(namespace)`, but Keyv 5 turns `keyv.iterator()` on only
 *   for the dialects of its own list. Turn it on with
 *   `keyv.iterator = keyv.generateIterator(store.iterator.bind(store))`.
 *
 * Every failure is a `TtlKvError` (see the `ttlkv` package): Keyv catches those of `set`,
 * `delete` and `clear` and emits them as `"error"` (or throws them with `throwOnErrors`), and
 * reads a failed `get` as a miss.
 */
export declare class KeyvTtlkv {
  /**
   * @throws {@link TtlKvError} `INVALID_ARGUMENT`, synchronously, for options that are neither an
   *   open database nor a name (unknown open options reject the first call, as `open()` does).
   */
  constructor(options: KeyvTtlkvOptions);
  /** What Keyv reads of a store: `dialect: "ttlkv"`. */
  opts: { dialect: string; url: string; [option: string]: unknown };
  /** The Keyv namespace, which Keyv sets; `undefined` for none. */
  namespace: string | undefined;
  /** The stored entry of `key`, or `undefined` if it is absent or expired. */
  get<Value = unknown>(key: string): Promise<KeyvStored<Value> | undefined>;
  /** The stored entries of `keys`, in their order. */
  getMany<Value = unknown>(keys: string[]): Promise<Array<KeyvStored<Value> | undefined>>;
  /** Store `value` under `key`, expiring after `ttl` ms (none: the database's default TTL). */
  set(key: string, value: KeyvStored, ttl?: number): Promise<boolean>;
  /** Store every entry in one atomic batch. */
  setMany(entries: Array<{ key: string; value: KeyvStored; ttl?: number | undefined }>): Promise<boolean[]>;
  /** Delete `key`: whether it was there. */
  delete(key: string): Promise<boolean>;
  /** Delete `keys`: whether any of them was there. */
  deleteMany(keys: string[]): Promise<boolean>;
  has(key: string): Promise<boolean>;
  hasMany(keys: string[]): Promise<boolean[]>;
  /** Remove every key of this store's namespace, and of no other, in one atomic change. */
  clear(): Promise<void>;
  /** `[key, stored]` for each live key of `namespace` (none: the default keyspace), in key order. */
  iterator<Value = unknown>(namespace?: string): AsyncGenerator<[string, KeyvStored<Value>], void>;
  /** Close the database if this store opened it (`{ name }`); a database given as `{ db }` stays open. */
  disconnect(): Promise<void>;
  /** `"error"`: the database could not be opened (the calls waiting for it reject as well). */
  on(event: "error", listener: (error: unknown) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
  off(event: string, listener: (...args: any[]) => void): this;
  once(event: string, listener: (...args: any[]) => void): this;
}

export default KeyvTtlkv;
