// TypeScript declarations for the npm package `ttlkv`: every entry package.json picks by export
// condition (browsers and bundlers, node, deno, workerd, edge-light) exports the same API, from
// bindings/js/core.js; the package ships them minified in bindings/js/dist.
// These declarations are the package's API reference: what the entries accept and return.
// Runtime exports: open, destroy, init, TtlKvError, CODES. Everything else here is a type.

// ---------------------------------------------------------------------------------------------
// Keys and values
// ---------------------------------------------------------------------------------------------

/**
 * A key: a `string` (stored as its UTF-8 bytes) or a `Uint8Array`. Keys order by their bytes, and a
 * string and the `Uint8Array` of its UTF-8 bytes are the same key. A key is 1 byte to 4 KiB: an empty
 * key is an `INVALID_ARGUMENT` error, a longer one `KEY_TOO_LARGE`; a string holding a lone surrogate
 * (it has no UTF-8) is `INVALID_ARGUMENT` too.
 */
export type Key = string | Uint8Array;

/**
 * A JSON-compatible value: `null`, a boolean, a finite number, a string, an array of these or a
 * plain object (prototype `Object.prototype` or `null`) of these. `NaN`, `Infinity`, `undefined`
 * (also as a property value), functions, class instances such as `Date`, and cycles are rejected
 * with `INVALID_ARGUMENT`. An array's or plain object's `toJSON` method is called once, as
 * `JSON.stringify` calls it, and its answer is stored, checked as any value. Object keys such as
 * `"__proto__"` round-trip as plain data. A value is read once, when the call is made.
 *
 * Values typed with an `interface` are not assignable to the object member (TypeScript gives
 * interfaces no implicit index signature): declare such shapes with `type` instead. Optional
 * properties (`a?: T`) are not assignable either, since a property holding `undefined` is rejected
 * at runtime; leave such properties out of the type or assert the value's type.
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * A value: a `string`, a `Uint8Array` or a {@link JsonValue}, up to 16 MiB once encoded (else
 * `VALUE_TOO_LARGE`). A read gives back a value of the type it was stored as (a `Uint8Array` is
 * returned as a fresh copy).
 */
export type Value = string | Uint8Array | JsonValue;

/**
 * A key with its value and expiry, as returned by `getEntry` and yielded by `scan`.
 *
 * @typeParam V - the value type the caller expects (an unchecked assertion; defaults to {@link Value}).
 */
export interface Entry<V = Value> {
  /**
   * The key, of the type it was written with: a `string` if the entry was written with a string
   * key, else a `Uint8Array` (from `getEntry` and `scan` alike).
   */
  key: Key;
  /** The stored value, of the type it was stored as. */
  value: V;
  /** When the key expires, in ms since the Unix epoch; `null` if it never expires. */
  expireAt: number | null;
}

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

/** The write conditions of {@link PutOptions} (Redis `SET ... NX | XX`). Setting both to `true` is an `INVALID_ARGUMENT` error. */
export interface PutConditionOptions {
  /** Write only if no live key exists (Redis NX). A failed condition makes `put` resolve `false`. */
  ifAbsent?: boolean | undefined;
  /** Write only if a live key exists (Redis XX). A failed condition makes `put` resolve `false`. */
  ifPresent?: boolean | undefined;
}

/**
 * Options of `put` (and of a `"put"` {@link BatchOp}): at most one of `ttlMs`, `expireAt`,
 * `keepTtl`, `noExpiry` (the others must be left out or `undefined`; a `false` flag still counts
 * as given), plus the conditions of {@link PutConditionOptions}. With none of the four, the key
 * gets the default TTL (the namespace's `defaultTtlMs`, else the database's, else no expiry). With
 * a namespace `maxTtlMs`, a longer or absent TTL is clamped to it. An unknown option, a second
 * expiry option, or a value of the wrong type is an `INVALID_ARGUMENT` error.
 */
export type PutOptions = PutConditionOptions &
  (
    | {
        /** Expire the key this many ms from now: an integer from 1 to 8,753,796,953,940,992. */
        ttlMs?: number | undefined;
        /** Excluded: only one of `ttlMs`, `expireAt`, `keepTtl`, `noExpiry`. */
        expireAt?: undefined;
        /** Excluded: only one of `ttlMs`, `expireAt`, `keepTtl`, `noExpiry`. */
        keepTtl?: undefined;
        /** Excluded: only one of `ttlMs`, `expireAt`, `keepTtl`, `noExpiry`. */
        noExpiry?: undefined;
      }
    | {
        /**
         * Expire the key at this time, in ms since the Unix epoch: a safe integer. A time that is
         * not in the future leaves the key absent (as Redis does).
         */
        expireAt?: number | undefined;
        /** Excluded: only one of `ttlMs`, `expireAt`, `keepTtl`, `noExpiry`. */
        ttlMs?: undefined;
        /** Excluded: only one of `ttlMs`, `expireAt`, `keepTtl`, `noExpiry`. */
        keepTtl?: undefined;
        /** Excluded: only one of `ttlMs`, `expireAt`, `keepTtl`, `noExpiry`. */
        noExpiry?: undefined;
      }
    | {
        /** `true`: keep the key's current expiry (Redis KEEPTTL) instead of applying the default TTL. */
        keepTtl?: boolean | undefined;
        /** Excluded: only one of `ttlMs`, `expireAt`, `keepTtl`, `noExpiry`. */
        ttlMs?: undefined;
        /** Excluded: only one of `ttlMs`, `expireAt`, `keepTtl`, `noExpiry`. */
        expireAt?: undefined;
        /** Excluded: only one of `ttlMs`, `expireAt`, `keepTtl`, `noExpiry`. */
        noExpiry?: undefined;
      }
    | {
        /** `true`: the key never expires, whatever the default TTL (a namespace `maxTtlMs` still clamps it). */
        noExpiry?: boolean | undefined;
        /** Excluded: only one of `ttlMs`, `expireAt`, `keepTtl`, `noExpiry`. */
        ttlMs?: undefined;
        /** Excluded: only one of `ttlMs`, `expireAt`, `keepTtl`, `noExpiry`. */
        expireAt?: undefined;
        /** Excluded: only one of `ttlMs`, `expireAt`, `keepTtl`, `noExpiry`. */
        keepTtl?: undefined;
      }
  );

/**
 * The condition of `expire` / `expireAt`, as Redis `EXPIRE ... NX | XX | GT | LT`. A key without
 * a TTL counts as an infinite TTL for `gt` and `lt`. Incompatible combinations (`nx` with `gt`,
 * `lt` or `xx`; `gt` with `lt`) are an `INVALID_ARGUMENT` error, as is an unknown option.
 */
export interface ExpireCondition {
  /** Set the expiry only if the key has none. */
  nx?: boolean | undefined;
  /** Set the expiry only if the key already has one. */
  xx?: boolean | undefined;
  /** Set the expiry only if the new one is later than the current one. */
  gt?: boolean | undefined;
  /** Set the expiry only if the new one is earlier than the current one. */
  lt?: boolean | undefined;
}

/**
 * Options of `getEx`: at most one of `{ ttlMs }`, `{ expireAt }` or `{ persist: true }` (anything
 * else is an `INVALID_ARGUMENT` error); `{}` changes no TTL (a plain `get`).
 */
export type GetExOptions =
  | {
      /** Excluded: at most one of `ttlMs`, `expireAt`, `persist`. */
      ttlMs?: undefined;
      /** Excluded: at most one of `ttlMs`, `expireAt`, `persist`. */
      expireAt?: undefined;
      /** Excluded: at most one of `ttlMs`, `expireAt`, `persist`. */
      persist?: undefined;
    }
  | {
      /** Set the key to expire this many ms from now (1 to 8,753,796,953,940,992): a sliding session. */
      ttlMs: number;
      /** Excluded: at most one of `ttlMs`, `expireAt`, `persist`. */
      expireAt?: undefined;
      /** Excluded: at most one of `ttlMs`, `expireAt`, `persist`. */
      persist?: undefined;
    }
  | {
      /** Set the key to expire at this time, in ms since the Unix epoch (a safe integer). */
      expireAt: number;
      /** Excluded: at most one of `ttlMs`, `expireAt`, `persist`. */
      ttlMs?: undefined;
      /** Excluded: at most one of `ttlMs`, `expireAt`, `persist`. */
      persist?: undefined;
    }
  | {
      /** Remove the key's expiry (Redis `GETEX ... PERSIST`); must be `true`. */
      persist: true;
      /** Excluded: at most one of `ttlMs`, `expireAt`, `persist`. */
      ttlMs?: undefined;
      /** Excluded: at most one of `ttlMs`, `expireAt`, `persist`. */
      expireAt?: undefined;
    };

/**
 * Options of `scan`: which live entries to visit, in key (byte) order. All bounds combine. An
 * unknown option or a value of the wrong type is an `INVALID_ARGUMENT` error, thrown synchronously
 * by `scan()` itself.
 */
export interface ScanOptions {
  /** Only keys starting with these bytes (an empty prefix bounds nothing). */
  prefix?: Key | undefined;
  /** Only keys greater than or equal to this one (inclusive; an empty start bounds nothing). */
  start?: Key | undefined;
  /** Only keys less than this one (exclusive). */
  end?: Key | undefined;
  /** At most this many entries: a safe integer >= 0 (`0` yields nothing). Default: no limit. */
  limit?: number | undefined;
  /** Visit the keys in descending order. Default `false`. */
  reverse?: boolean | undefined;
}

/** Options of `purgeExpired`. An unknown option is an `INVALID_ARGUMENT` error. */
export interface PurgeOptions {
  /** At most this many due expiry-index entries are handled in this call: a safe integer > 0. Default 10,000. */
  limit?: number | undefined;
}

/**
 * Options of `namespace`. When an options object is given (even `{}`), it replaces the namespace's
 * TTL rules; when it is left out, the namespace keeps the rules it has. An unknown option is an
 * `INVALID_ARGUMENT` error, thrown synchronously by `namespace()`.
 */
export interface NamespaceOptions {
  /** TTL in ms (1 to 8,753,796,953,940,992) for puts in the namespace that give no expiry option; `null` for none. */
  defaultTtlMs?: number | null | undefined;
  /** Longest TTL in ms (1 to 8,753,796,953,940,992) a key of the namespace may have: longer or absent TTLs are clamped to it. `null` for no maximum. */
  maxTtlMs?: number | null | undefined;
}

/**
 * One operation of {@link Db.batch}: a put (with the options of {@link PutOptions}, conditions
 * included) or a delete. A delete op with any other property, or an unknown `type`, is an
 * `INVALID_ARGUMENT` error.
 */
export type BatchOp = BatchPut | BatchDelete;

/** A put in a batch: `{ type: "put", key, value, ...putOptions }`. */
export type BatchPut = {
  /** Put `value` under `key`. */
  type: "put";
  /** The key to write. */
  key: Key;
  /** The value to write. */
  value: Value;
} & PutOptions;

/** A delete in a batch: `{ type: "delete", key }`. */
export interface BatchDelete {
  /** Delete `key` (no error if it is absent). */
  type: "delete";
  /** The key to delete. */
  key: Key;
}

/**
 * The storage of a database:
 * - `"auto"` (default): IndexedDB where `globalThis.indexedDB` exists, else memory;
 * - `"indexeddb"`: IndexedDB (`UNSUPPORTED` where there is none);
 * - `"memory"`: an in-process store kept by name until `destroy(name)`;
 * - a {@link PageStoreAdapter}: any storage the app supplies.
 */
export type StorageOption = "auto" | "indexeddb" | "memory" | PageStoreAdapter;

/**
 * What an `onExpire` hook may return to rewrite an expiring key instead of letting it expire. With
 * neither `ttlMs` nor `expireAt` the new value gets the default TTL (namespace, else database, else
 * none); a namespace `maxTtlMs` applies. A replacement that is already due, or one that gives both
 * `ttlMs` and `expireAt`, holds an invalid value or has a field other than these three, lets the
 * key expire.
 */
export interface ExpireReplacement {
  /** The key's new value. */
  value: Value;
  /** Expire the rewritten key this many ms from now (1 to 8,753,796,953,940,992). */
  ttlMs?: number | undefined;
  /** Expire the rewritten key at this time, in ms since the Unix epoch. */
  expireAt?: number | undefined;
}

/** Options of {@link open}. An unknown option or an invalid value is an `INVALID_ARGUMENT` error. */
export interface OpenOptions {
  /** Where the pages live; see {@link StorageOption}. Default `"auto"` (`null` means the same). */
  storage?: StorageOption | null | undefined;
  /** TTL in ms (1 to 8,753,796,953,940,992) for puts that give no expiry option; `null` (default) for none. */
  defaultTtlMs?: number | null | undefined;
  /**
   * The clock, called with no arguments: ms since the Unix epoch. Default `Date.now`. ttlkv makes
   * it monotonic: a clock that goes back reads as "no time passed". A reading that is no
   * plausible time (it throws, is not a finite number, is negative or beyond the year 9999, e.g.
   * nanoseconds by mistake) fails the call that read it with `INVALID_ARGUMENT` and is never used
   * or stored. A single reading more than a minute ahead of the last is checked against a second
   * one and the earlier is used, so one misreading never becomes the database's time.
   */
  clock?: (() => number) | undefined;
  /**
   * `"auto"` (default): flush, compaction and purge (with its `"expire"` events) run on a timer
   * (which never keeps a Node process alive); `"manual"`: only when `flush`, `compact` or
   * `purgeExpired` is called.
   */
  maintenance?: "auto" | "manual" | undefined;
  /**
   * `"durable"` (default): a write resolves after its commit to storage (concurrent writes share
   * one commit); `"relaxed"`: a write resolves at once and is committed by the next maintenance
   * step, `flush()`, durable write or `close()` (a crash before that loses it; if that commit
   * fails, the writes it held are lost, and every later write and `close()` reject with its
   * error, its message beginning "relaxed writes were lost; reopen the database", until the
   * database is opened again).
   */
  durability?: "durable" | "relaxed" | undefined;
  /**
   * Called synchronously for each expiring key (of any namespace) while a purge removes it. Return
   * nothing to let the key expire, or an {@link ExpireReplacement} to rewrite it instead. A hook
   * that throws or returns a Promise lets the key expire (a thrown error is reported with
   * `console.error`, with the key). Called with the options object given to `open` as `this`; the
   * hook is the one that object held when `open` was called.
   */
  onExpire?: ((entry: ExpireEvent) => ExpireReplacement | null | undefined | void) | undefined;
  /**
   * IndexedDB only: how long opening may wait (ms, an integer > 0; default 10,000). IndexedDB
   * makes an open wait, silently, while another tab or worker holds an older version of the
   * database or a delete of it is pending; past this time `open` rejects with `STORAGE` instead
   * of hanging.
   */
  openTimeoutMs?: number | undefined;
  /**
   * IndexedDB with several tabs or workers (ms, an integer > 0; default 5,000). One context holds
   * the writer role (a Web Lock per database name) and runs the engine; the others forward their
   * calls to it over a BroadcastChannel. A context whose forwarded call gets no answer for this
   * long takes the role over from the silent writer, whose commits then fail with `FENCED`. A
   * timer holds at most 2,147,483,647 ms (about 24.8 days): a longer timeout waits that long.
   */
  writerTimeoutMs?: number | undefined;
  /**
   * Trust the clock over the time the database last handed out (default `false`). An open
   * rejects with `INVALID_ARGUMENT` when the database's stored time is more than a day ahead of
   * the clock (a bad reading was stored by an older version, or the clock was set back): time
   * would stand still there and no key would expire. Once the clock is known good, open with
   * `resetClock: true` once: keys that expired only because of the bad time are live again
   * until their own expiry, and keys written while it was in force keep the expiry it gave them.
   */
  resetClock?: boolean | undefined;
}

/**
 * Options of {@link destroy}. An adapter cannot be destroyed by ttlkv (its storage belongs to the
 * app): passing one rejects with `UNSUPPORTED`, so the type leaves it out.
 */
export interface DestroyOptions {
  /** Which storage to delete the database from. Default `"auto"` (`null` means the same). */
  storage?: "auto" | "indexeddb" | "memory" | null | undefined;
}

// ---------------------------------------------------------------------------------------------
// Events and stats
// ---------------------------------------------------------------------------------------------

/** An expired key, as given to `"expire"` listeners and to the `onExpire` hook. */
export interface ExpireEvent {
  /** The key: a `string` if it was written with a string key, else a `Uint8Array`. */
  key: Key;
  /** The key's last value. */
  value: Value;
  /** When it expired, in ms since the Unix epoch. */
  expireAt: number;
  /** The namespace of the key; absent for the default (root) namespace. */
  namespace?: string;
}

/** A listener of `"expire"` events: called once per expired key. A throw is reported with `console.error` and does not stop other listeners. */
export type ExpireListener = (event: ExpireEvent) => void;

/** One SST (sorted table) in {@link Stats}. */
export interface SstStats {
  /** The SST id. */
  id: number;
  /** Bytes of its data pages. */
  bytes: number;
  /** Rows it holds (all versions and tombstones). */
  rows: number;
  /** Earliest expiry of any row (ms since the epoch), `null` if no row has a TTL. */
  minExpireAt: number | null;
  /** Latest expiry of any row (ms since the epoch), `null` if no row has a TTL. */
  maxExpireAt: number | null;
  /**
   * The expiry times by which 20, 40, 60, 80 and 100 % of its rows with a TTL have expired; `null`
   * if no row has a TTL.
   */
  expiryPercentiles: [number, number, number, number, number] | null;
}

/** One LSM level in {@link Stats}. */
export interface LevelStats {
  /** The level number, 0 for L0. */
  level: number;
  /** Its SSTs (L0 newest first, deeper levels in key order). */
  ssts: SstStats[];
}

/** The engine's sizes and shape (of the whole database, also when asked through a namespace). */
export interface Stats {
  /** Bytes held by memtables (active and waiting to be flushed). */
  memtableBytes: number;
  /** Bytes of WAL: pending plus committed pages not yet flushed. */
  walBytes: number;
  /** Bytes of decoded pages in the page cache. */
  cacheBytes: number;
  /**
   * The row cache of hot keys (the server entries' engine; 0 in browsers, whose engine has
   * none): bytes held, and the reads it answered and did not since open.
   */
  rowCacheBytes: number;
  rowCacheHits: number;
  rowCacheMisses: number;
  /**
   * Bytes held by the point indexes of SSTs read often on memory storage (where each key lies;
   * the server entries' engine; 0 in browsers and on other storage).
   */
  pointIndexBytes: number;
  /** The levels, L0 first. */
  levels: LevelStats[];
  /**
   * Snapshots open on the engine, scans in progress included: each keeps the rows it can see
   * from being compacted away until it is released.
   */
  snapshots: number;
  /** Engine handles held for namespace handles (freed once those are garbage-collected). */
  namespaceHandles: number;
}

// ---------------------------------------------------------------------------------------------
// Page-store adapter
// ---------------------------------------------------------------------------------------------

/** The manifest record of a {@link PageStoreAdapter}. */
export interface ManifestRecord {
  /** Its version: a non-negative safe integer, greater with every commit that replaces it. */
  version: number;
  /** Its bytes. */
  bytes: Uint8Array;
}

/** One atomic commit handed to {@link PageStoreAdapter.commit}. */
export interface PageCommit {
  /** The manifest version the store must hold (0 when it holds none) for the commit to apply. */
  expectedVersion: number;
  /** The new manifest, or `null` to keep the current one. */
  manifest: ManifestRecord | null;
  /** Pages to write, as `[key, bytes]`. */
  puts: [key: string, bytes: Uint8Array][];
  /** Keys of pages to delete; deletes apply before puts. */
  deletes: string[];
}

/**
 * The prefix of a page kind: `"w/"` WAL pages, `"m/"` SST metadata pages, `"d/"` SST data pages.
 * Page keys are `w/<16 hex>`, `m/<16 hex>` and `d/<16 hex>/<8 hex>`.
 */
export type PageKindPrefix = "w/" | "m/" | "d/";

/**
 * A page store supplied by the app as `open(name, { storage: adapter })`, e.g. over an edge
 * platform's KV or blob storage, or files. Its methods are called with the adapter as `this` and
 * may return a value or a Promise of it.
 *
 * An error the adapter throws becomes a {@link TtlKvError} of the code its `code` property names
 * when that is one of {@link CODES} (a store reports `"FENCED"`, `"QUOTA_EXCEEDED"` or
 * `"CORRUPTION"`; an error named `"QuotaExceededError"` is `QUOTA_EXCEEDED`), else `STORAGE`; the
 * thrown error is kept as the `TtlKvError`'s `cause`.
 */
export interface PageStoreAdapter {
  /** The stored manifest, or `null` / `undefined` when there is none (a new database). */
  readManifest(): Promise<ManifestRecord | null | undefined> | ManifestRecord | null | undefined;
  /** The bytes of page `key`, or `null` / `undefined` if there is no such page. */
  getPage(key: string): Promise<Uint8Array | null | undefined> | Uint8Array | null | undefined;
  /** The keys of every stored page with this prefix (in any order). */
  listPages(prefix: PageKindPrefix): Promise<readonly string[]> | readonly string[];
  /**
   * Apply `commit` atomically (all of it or none of it, also across a crash). Inside that atomic
   * step, check that the stored manifest version (0 when there is none) equals
   * `commit.expectedVersion`; otherwise throw an error with `code: "FENCED"` and write nothing. A
   * store out of room throws `code: "QUOTA_EXCEEDED"` and writes nothing. Deletes apply before
   * puts.
   */
  commit(commit: PageCommit): Promise<void> | void;
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** The stable error codes (see {@link TtlKvErrorCode}), in a frozen array. */
export declare const CODES: readonly [
  "INVALID_ARGUMENT",
  "KEY_TOO_LARGE",
  "VALUE_TOO_LARGE",
  "CLOSED",
  "FENCED",
  "QUOTA_EXCEEDED",
  "CORRUPTION",
  "STORAGE",
  "UNSUPPORTED",
];

/**
 * The code of a {@link TtlKvError}:
 * - `INVALID_ARGUMENT`: wrong type, conflicting options, `ttlMs <= 0` or over
 *   8,753,796,953,940,992, NaN, non-integer, unknown option value, a string key, value or name
 *   holding a lone surrogate;
 * - `KEY_TOO_LARGE` / `VALUE_TOO_LARGE`: a key over 4 KiB, a value over 16 MiB;
 * - `CLOSED`: the Db (or Snapshot, or dropped namespace) was closed/released;
 * - `FENCED`: this context lost the writer role and may not write;
 * - `QUOTA_EXCEEDED`: storage quota reached; nothing was half-written and reads still work. Before
 *   a write reports it, the database purges every due key and compacts, then retries once;
 * - `CORRUPTION`: a checksum or decode failure;
 * - `STORAGE`: any other storage failure, with the underlying error as `cause` where there is one;
 *   also the engine's WebAssembly trap (it traps when its memory cannot grow), after which every
 *   call on that engine, `open` and `destroy` included, rejects with `STORAGE` at once;
 * - `UNSUPPORTED`: e.g. `storage: "indexeddb"` where there is no IndexedDB.
 */
export type TtlKvErrorCode = (typeof CODES)[number];

/**
 * The error every ttlkv rejection carries: an `Error` with `name === "TtlKvError"` and a stable
 * {@link TtlKvError.code | code}. The WebAssembly engine creates its errors with this class too,
 * so `instanceof TtlKvError` holds for every rejection. A failure underneath (a `DOMException`
 * from IndexedDB, an adapter's or the file system's error) is the `cause`.
 */
export declare class TtlKvError extends Error {
  /**
   * Make an error.
   *
   * @param code - one of {@link CODES}; any other code throws a `TypeError`
   * @param message - what happened
   * @param options - `cause`: the underlying error, if any
   */
  constructor(code: TtlKvErrorCode, message: string, options?: { cause?: unknown });
  /** Always `"TtlKvError"`. */
  name: "TtlKvError";
  /** Which kind of failure this is; see {@link TtlKvErrorCode}. */
  code: TtlKvErrorCode;
}

// ---------------------------------------------------------------------------------------------
// Db and Snapshot
// ---------------------------------------------------------------------------------------------

/**
 * A read-only view of a database (or namespace) as of the moment `snapshot()` was taken, expiry
 * included: a key that expires later is still visible, one written later is not. Release it when
 * done; after `release()` every read rejects with `CLOSED`.
 *
 * Every read may also reject with `CORRUPTION` or `STORAGE` when the pages it needs cannot be read.
 */
export interface Snapshot {
  /**
   * The value of `key` as of the snapshot.
   *
   * @typeParam T - the value type the caller expects (unchecked; defaults to {@link Value}).
   * @returns the value, or `undefined` if the key was absent or expired at the snapshot's time.
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT` (not a key, empty), `KEY_TOO_LARGE`, `CLOSED` (released).
   */
  get<T = Value>(key: Key): Promise<T | undefined>;
  /**
   * The entry of `key` as of the snapshot.
   *
   * @returns `{ key, value, expireAt }` (with `key` of the type it was written with), or `undefined` if absent or expired.
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT`, `KEY_TOO_LARGE`, `CLOSED`.
   */
  getEntry<T = Value>(key: Key): Promise<Entry<T> | undefined>;
  /**
   * Whether `key` was live at the snapshot's time.
   *
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT`, `KEY_TOO_LARGE`, `CLOSED`.
   */
  has(key: Key): Promise<boolean>;
  /**
   * The remaining TTL of `key` at the snapshot's time (Redis PTTL).
   *
   * @returns ms left; `-1` if the key has no expiry; `-2` if it is absent or expired.
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT`, `KEY_TOO_LARGE`, `CLOSED`.
   */
  ttl(key: Key): Promise<number>;
  /**
   * The live entries as of the snapshot, in key order (see {@link ScanOptions}).
   *
   * @returns an async iterable of entries; keys come back as strings if written with string keys.
   * @throws {@link TtlKvError} throws `INVALID_ARGUMENT` / `KEY_TOO_LARGE` synchronously for bad
   * options; iterating rejects with `CLOSED` once the snapshot is released.
   */
  scan<T = Value>(opts?: ScanOptions): AsyncIterable<Entry<T>>;
  /** Let the snapshot go (idempotent). Later reads reject with `CLOSED`. */
  release(): void;
}

/**
 * An open database, or a handle on one of its namespaces (`db.namespace(name)` returns the same
 * kind of object, reading and writing its own keyspace). All handles of a database share its
 * `"expire"` listeners, its maintenance and its closing.
 *
 * Every method rejects with `CLOSED` after `close()` (or, on a namespace handle, after its
 * namespace was dropped). Any method that touches storage may also reject with `CORRUPTION` (a
 * checksum or decode failure) or `STORAGE` (any other storage failure); any write may reject with
 * `FENCED` (another context took the writer role) or `QUOTA_EXCEEDED` (nothing was written).
 */
export interface Db {
  /**
   * Store `value` under `key`.
   *
   * @param opts - TTL and condition; see {@link PutOptions}.
   * @returns `true` if written; `false` only when an `ifAbsent` / `ifPresent` condition failed.
   *   (An `expireAt` not in the future resolves `true` and leaves the key absent.)
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT` (bad key, value or options),
   *   `KEY_TOO_LARGE`, `VALUE_TOO_LARGE`, `CLOSED`, `FENCED`, `QUOTA_EXCEEDED`, `CORRUPTION`, `STORAGE`.
   */
  put(key: Key, value: Value, opts?: PutOptions): Promise<boolean>;
  /**
   * The value of `key`.
   *
   * @typeParam T - the value type the caller expects (unchecked; defaults to {@link Value}).
   * @returns the value, of the type it was stored as, or `undefined` if absent or expired.
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT`, `KEY_TOO_LARGE`, `CLOSED`, `CORRUPTION`, `STORAGE`.
   */
  get<T = Value>(key: Key): Promise<T | undefined>;
  /**
   * The values of several keys (each read on its own, not from one snapshot).
   *
   * @returns the values in the order of `keys`, `undefined` for each absent or expired key.
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT` (not an array, or a bad key),
   *   `KEY_TOO_LARGE`, `CLOSED`, `CORRUPTION`, `STORAGE`.
   */
  getMany<T = Value>(keys: readonly Key[]): Promise<(T | undefined)[]>;
  /**
   * The entry of `key`: its value and expiry.
   *
   * @returns `{ key, value, expireAt }` with `key` of the type it was written with, or `undefined` if absent or expired.
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT`, `KEY_TOO_LARGE`, `CLOSED`, `CORRUPTION`, `STORAGE`.
   */
  getEntry<T = Value>(key: Key): Promise<Entry<T> | undefined>;
  /**
   * Whether `key` is live.
   *
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT`, `KEY_TOO_LARGE`, `CLOSED`, `CORRUPTION`, `STORAGE`.
   */
  has(key: Key): Promise<boolean>;
  /**
   * Delete `key`.
   *
   * @returns `true` if a live key was removed.
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT`, `KEY_TOO_LARGE`, `CLOSED`, `FENCED`,
   *   `QUOTA_EXCEEDED`, `CORRUPTION`, `STORAGE`.
   */
  delete(key: Key): Promise<boolean>;
  /**
   * The remaining TTL of `key` (Redis PTTL).
   *
   * @returns ms left; `-1` if the key has no expiry; `-2` if it is absent or expired.
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT`, `KEY_TOO_LARGE`, `CLOSED`, `CORRUPTION`, `STORAGE`.
   */
  ttl(key: Key): Promise<number>;
  /**
   * Set `key` to expire `ttlMs` from now (Redis PEXPIRE); `ttlMs <= 0` deletes the key.
   *
   * @param ttlMs - an integer up to 8,753,796,953,940,992 (so that the expiry is an exact JS
   *   number); 0 or less removes the key at once.
   * @param cond - see {@link ExpireCondition}.
   * @returns `true` if the expiry was set (or the key deleted); `false` if the key is absent or the
   *   condition failed.
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT` (bad key, `ttlMs`, or condition),
   *   `KEY_TOO_LARGE`, `CLOSED`, `FENCED`, `QUOTA_EXCEEDED`, `CORRUPTION`, `STORAGE`.
   */
  expire(key: Key, ttlMs: number, cond?: ExpireCondition): Promise<boolean>;
  /**
   * Set `key` to expire at `atMs` (Redis PEXPIREAT); a time not in the future removes the key.
   *
   * @param atMs - ms since the Unix epoch, a safe integer.
   * @param cond - see {@link ExpireCondition}.
   * @returns `true` if the expiry was set; `false` if the key is absent or the condition failed.
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT`, `KEY_TOO_LARGE`, `CLOSED`, `FENCED`,
   *   `QUOTA_EXCEEDED`, `CORRUPTION`, `STORAGE`.
   */
  expireAt(key: Key, atMs: number, cond?: ExpireCondition): Promise<boolean>;
  /**
   * Remove the TTL of `key` (Redis PERSIST).
   *
   * @returns `true` if a TTL was removed; `false` if the key is absent or had none.
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT`, `KEY_TOO_LARGE`, `CLOSED`, `FENCED`,
   *   `QUOTA_EXCEEDED`, `CORRUPTION`, `STORAGE`.
   */
  persist(key: Key): Promise<boolean>;
  /**
   * Read `key` and change its TTL in one step (Redis GETEX), e.g. to slide a session.
   *
   * @param opts - at most one of `{ ttlMs }`, `{ expireAt }`, `{ persist: true }`; none (or `{}`)
   *   is a plain `get` that leaves the TTL as it is.
   * @returns the value, or `undefined` if absent or expired (then nothing is changed).
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT` (bad key or options), `KEY_TOO_LARGE`,
   *   `CLOSED`, `FENCED`, `QUOTA_EXCEEDED`, `CORRUPTION`, `STORAGE`.
   */
  getEx<T = Value>(key: Key, opts?: GetExOptions): Promise<T | undefined>;
  /**
   * The live entries in key order (see {@link ScanOptions}), read page by page from one consistent
   * snapshot taken when iteration starts and released when it ends (also on `break` or
   * `return()`). While it is open the snapshot keeps the rows it can see from being compacted
   * away: an iterator the app stops calling `next()` on without ending it releases its snapshot
   * only once the iterator is garbage-collected.
   *
   * @returns an async iterable of entries; keys come back as strings if written with string keys.
   * @throws {@link TtlKvError} throws `INVALID_ARGUMENT` / `KEY_TOO_LARGE` synchronously for bad
   *   options; iterating rejects with `CLOSED`, `CORRUPTION` or `STORAGE`.
   */
  scan<T = Value>(opts?: ScanOptions): AsyncIterable<Entry<T>>;
  /**
   * Apply several puts and deletes atomically: all of them or none.
   *
   * @param ops - see {@link BatchOp}.
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT` (bad op, key, value or options, or an
   *   `ifAbsent` / `ifPresent` condition in the batch failed, in which case nothing was written),
   *   `KEY_TOO_LARGE`, `VALUE_TOO_LARGE`, `CLOSED`, `FENCED`, `QUOTA_EXCEEDED`, `CORRUPTION`, `STORAGE`.
   */
  batch(ops: readonly BatchOp[]): Promise<void>;
  /**
   * A read-only view of this database (or namespace) as of now.
   *
   * @returns a {@link Snapshot}; call `release()` when done with it (one dropped without it is
   *   released once it is garbage-collected; until then it keeps the rows it can see from being
   *   compacted away).
   * @throws {@link TtlKvError} rejects with `CLOSED`.
   */
  snapshot(): Promise<Snapshot>;
  /**
   * A handle on namespace `name`: a separate keyspace of the same database, created if it does not
   * exist. Namespaces are flat: calling this on a namespace handle gives the same namespace as on
   * the root handle. The handle shares the database's listeners and closing (`close()` on it closes
   * the whole database).
   *
   * @param opts - when given, replaces the namespace's TTL rules; see {@link NamespaceOptions}.
   * @returns the handle, at once; a failure to create the namespace rejects its first call. Handles
   *   are cheap to make per call: what the engine holds for one goes when it is garbage-collected.
   * @throws {@link TtlKvError} throws `INVALID_ARGUMENT` synchronously for an empty or non-string
   *   name or bad options.
   */
  namespace(name: string, opts?: NamespaceOptions): Namespace;
  /**
   * Drop namespace `name` with every key in it, in one atomic change. Handles on it reject with
   * `CLOSED` from then on.
   *
   * @returns `true` if the namespace existed.
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT` (empty or non-string name), `CLOSED`,
   *   `FENCED`, `QUOTA_EXCEEDED`, `CORRUPTION`, `STORAGE`.
   */
  dropNamespace(name: string): Promise<boolean>;
  /**
   * Remove every key of this keyspace (the default one, or this namespace) in one atomic step
   * whose cost does not depend on the number of keys (one commit; compaction reclaims the space
   * later). The handle keeps working on the now empty keyspace; a snapshot taken before still
   * sees the keys. No `"expire"` event fires for the keys it removes, but keys that had already
   * expired get theirs first (the clear purges what is due before it clears).
   *
   * @throws {@link TtlKvError} rejects with `CLOSED` (also on a dropped namespace), `FENCED`,
   *   `QUOTA_EXCEEDED`, `CORRUPTION`, `STORAGE`.
   */
  clear(): Promise<void>;
  /**
   * Remove due keys (of every namespace) through the expiry index, oldest first, firing one
   * `"expire"` event per removed key (and calling the `onExpire` hook, which may rewrite a key).
   *
   * @param opts - `limit`: at most this many due entries (default 10,000).
   * @returns how many keys were removed (rewritten keys not counted).
   * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT` (bad options), `CLOSED`, `FENCED`,
   *   `QUOTA_EXCEEDED`, `CORRUPTION`, `STORAGE`.
   */
  purgeExpired(opts?: PurgeOptions): Promise<number>;
  /**
   * Write the memtable out to SSTs now.
   *
   * @throws {@link TtlKvError} rejects with `CLOSED`, `FENCED`, `QUOTA_EXCEEDED`, `CORRUPTION`, `STORAGE`.
   */
  flush(): Promise<void>;
  /**
   * Run compaction now.
   *
   * @throws {@link TtlKvError} rejects with `CLOSED`, `FENCED`, `QUOTA_EXCEEDED`, `CORRUPTION`, `STORAGE`.
   */
  compact(): Promise<void>;
  /**
   * The engine's sizes and shape (of the whole database).
   *
   * @throws {@link TtlKvError} rejects with `CLOSED`.
   */
  stats(): Promise<Stats>;
  /**
   * Call `listener` once for each expired key of the database (any namespace) that a purge
   * removes, manual or automatic, with the key's last value; also for a key that expired and was
   * written again before a purge came (as Redis fires `expired` then too), once. Adding the same
   * function twice adds it once. An error the
   * listener throws is reported with `console.error` (with the key) and stops nothing: the other
   * listeners still run, and the process or page carries on.
   *
   * @throws {@link TtlKvError} throws `INVALID_ARGUMENT` synchronously for an unknown event or a
   *   listener that is not a function.
   */
  on(event: "expire", listener: ExpireListener): void;
  /**
   * Stop calling `listener` for `"expire"` events (no error if it was not added).
   *
   * @throws {@link TtlKvError} throws `INVALID_ARGUMENT` synchronously for an unknown event.
   */
  off(event: "expire", listener: ExpireListener): void;
  /**
   * Close the database (every handle of it): stop maintenance, commit pending relaxed writes and
   * release the storage. A tab whose calls wait for the writer tab (IndexedDB, many tabs) first
   * waits for their answers, so each settles with its outcome. Closing again, also while a close
   * is under way, does nothing but wait for that close and settle as it did; every other method
   * then rejects with `CLOSED`.
   *
   * @throws {@link TtlKvError} rejects with `STORAGE` (or `FENCED`, `QUOTA_EXCEEDED`) if committing
   *   pending writes fails.
   */
  close(): Promise<void>;
}

/**
 * A namespace handle, as returned by {@link Db.namespace}: the same interface as {@link Db},
 * confined to the namespace's keyspace.
 */
export type Namespace = Db;

// ---------------------------------------------------------------------------------------------
// Functions
// ---------------------------------------------------------------------------------------------

/**
 * Open (or create) database `name`, loading the WebAssembly engine on first use. The same name
 * reopens the same data (IndexedDB, or the in-process memory store until `destroy(name)`). Opening
 * takes the writer role: a handle still open elsewhere on the same storage is fenced.
 *
 * @param name - a non-empty string.
 * @param options - see {@link OpenOptions}.
 * @returns the open {@link Db}.
 * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT` (empty name, unknown option, bad
 *   value, an adapter without the four functions; a database whose stored time is more than a
 *   day ahead of the clock, see {@link OpenOptions.resetClock}), `UNSUPPORTED` (`storage:
 *   "indexeddb"` where there is no IndexedDB; the engine could not be loaded here, with the
 *   reason as `cause`: the next `open()` tries again), `CORRUPTION`, `STORAGE`, `QUOTA_EXCEEDED`,
 *   `FENCED`.
 */
export declare function open(name: string, options?: OpenOptions): Promise<Db>;

/**
 * Delete database `name` and all its pages. With IndexedDB it resolves once every connection to
 * the database (in any tab) is closed. An adapter's storage belongs to the app, which deletes it.
 *
 * @param name - a non-empty string.
 * @param options - `storage`: where the database lives (default `"auto"`).
 * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT` (empty name, unknown option),
 *   `UNSUPPORTED` (an adapter, or `"indexeddb"` where there is no IndexedDB), `STORAGE`.
 */
export declare function destroy(name: string, options?: DestroyOptions): Promise<void>;

/**
 * Where {@link init} takes the engine from: exactly one of a compiled `WebAssembly.Module`
 * (workerd and Vercel Edge import a `.wasm` as one), its bytes, or a URL to fetch it from.
 */
export type EngineSource =
  | { module: WebAssembly.Module; bytes?: undefined; url?: undefined }
  | { bytes: ArrayBuffer | ArrayBufferView; module?: undefined; url?: undefined }
  | { url: string | URL; module?: undefined; bytes?: undefined };

/**
 * Load the WebAssembly engine from `source` instead of the way this runtime's entry finds it, for
 * hosts and bundlers that hand it over. Not needed otherwise: the first {@link open} loads the
 * engine (never the import). Call it before the first `open()`; once the engine is loaded it
 * changes nothing.
 *
 * @throws {@link TtlKvError} rejects with `INVALID_ARGUMENT` (not exactly one of module, bytes,
 *   url, or one of the wrong type) or `UNSUPPORTED` (the engine could not be loaded here, e.g. a
 *   runtime that compiles no wasm from bytes, or a module that is not the ttlkv engine; `cause`
 *   says why). A failed load is not kept: the next `init` or `open` tries again.
 */
export declare function init(source: EngineSource): Promise<void>;
