// TypeScript declarations for `ttlkv/deno-kv` (bindings/js/adapters/deno-kv.js): a page store
// for ttlkv on Deno KV.

import type { PageStoreAdapter } from "ttlkv";

/** A part of a Deno KV key (as `Deno.KvKeyPart`, less `symbol`, which Deno KV cannot store). */
export type DenoKvKeyPart = Uint8Array | string | number | bigint | boolean;

/** A Deno KV key (as `Deno.KvKey`). */
export type DenoKvKey = readonly DenoKvKeyPart[];

/** What the adapter reads of an entry. */
export interface DenoKvEntryLike {
  key: readonly unknown[];
  value: unknown;
  versionstamp: string | null;
}

/** The atomic operation of {@link DenoKvLike.atomic} (as `Deno.AtomicOperation`). */
export interface DenoKvAtomicLike {
  check(...checks: { key: DenoKvKey; versionstamp: string | null }[]): unknown;
  set(key: DenoKvKey, value: unknown): unknown;
  delete(key: DenoKvKey): unknown;
  commit(): Promise<{ ok: boolean; versionstamp?: string }>;
}

/**
 * The part of a `Deno.Kv` the adapter uses: a `Deno.Kv` from `Deno.openKv()` is one, and so is a
 * wrapper of it with these four methods.
 */
export interface DenoKvLike {
  get(key: DenoKvKey): Promise<DenoKvEntryLike>;
  getMany(keys: DenoKvKey[]): Promise<DenoKvEntryLike[]>;
  list(selector: { prefix: DenoKvKey }, options?: { batchSize?: number }): AsyncIterable<DenoKvEntryLike>;
  atomic(): DenoKvAtomicLike;
}

/** Options of {@link denoKvStorage} and {@link destroyDenoKvStorage}. */
export interface DenoKvStorageOptions {
  /**
   * The key prefix under which the database's keys live: at least one part, at most 256 bytes as
   * a Deno KV key, none of its parts one of the store's own (`"head"`, `"page"`, `"chunk"`,
   * `"intent"`, `"sweep"`). Give each database on one KV its own; prefixes may nest
   * (`["ttlkv"]` and `["ttlkv", "sessions"]`). Default `["ttlkv"]`.
   */
  prefix?: DenoKvKey | undefined;
}

/**
 * A page store on Deno KV, for `open(name, { storage: denoKvStorage(kv, { prefix }) })`. Deno KV
 * is unstable in Deno 2: run with `--unstable-kv` (and read/write permission for a KV file).
 *
 * Every commit is atomic, also across a crash, whatever its size: one that fits in one Deno KV
 * atomic operation (1,000 mutations, 800 KiB) is one; a larger one writes its chunks first and
 * reaches its commit point in one small operation that checks the manifest version (so a second
 * writer is fenced), then applies its journal. The first call of an adapter finishes a commit a
 * crash interrupted and deletes what commits that never reached their commit point wrote.
 *
 * @throws `TypeError` if `kv` is not a Deno KV or `prefix` not a non-empty array of key parts,
 *   `RangeError` if `prefix` is over 256 bytes or has one of the store's own parts.
 */
export declare function denoKvStorage(kv: DenoKvLike, options?: DenoKvStorageOptions): PageStoreAdapter;

/**
 * Delete every key of the database under `prefix` (`ttlkv`'s `destroy()` cannot: the storage
 * belongs to the app). Run it with the database closed: a writer still open is fenced.
 *
 * @throws a `STORAGE` error (an `Error` with that `code`, the Deno KV error as `cause`) if Deno KV
 *   fails; the database may then be partly deleted, and calling again finishes it.
 */
export declare function destroyDenoKvStorage(kv: DenoKvLike, options?: DenoKvStorageOptions): Promise<void>;
