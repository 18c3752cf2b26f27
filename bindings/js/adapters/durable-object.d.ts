// TypeScript declarations for `ttlkv/durable-object`: a page store over a Cloudflare Durable
// Object's transactional storage.
import type { PageStoreAdapter } from "ttlkv";

/**
 * What the adapter uses of a Durable Object's storage (`ctx.storage`, a `DurableObjectStorage` in
 * `@cloudflare/workers-types`): its key-value API and `transaction()`.
 */
export interface DurableObjectStorageLike {
  get(keys: string[]): Promise<Map<string, unknown>>;
  get(key: string): Promise<unknown>;
  put(entries: Record<string, unknown>): Promise<void>;
  delete(keys: string[]): Promise<number>;
  list(options: { prefix?: string; start?: string; limit?: number }): Promise<Map<string, unknown>>;
  transaction<T>(closure: (txn: DurableObjectTransactionLike) => Promise<T>): Promise<T>;
}

/** The transaction `transaction()` hands its closure: the same key-value API. */
export interface DurableObjectTransactionLike {
  get(keys: string[]): Promise<Map<string, unknown>>;
  get(key: string): Promise<unknown>;
  put(entries: Record<string, unknown>): Promise<void>;
  delete(keys: string[]): Promise<number>;
}

/** Options of {@link durableObjectStorage}. */
export interface DurableObjectStorageOptions {
  /**
   * Every key the adapter writes starts with this (default `"ttlkv/"`), so that one object can
   * hold several databases, one prefix each, beside keys of its own. At most 1 KiB of UTF-8.
   */
  prefix?: string | undefined;
}

/**
 * A page store over `storage`, a Durable Object's `ctx.storage`, for
 * `open(name, { storage: durableObjectStorage(ctx.storage) })` inside the object. Each commit is
 * one storage transaction (all of it or none of it, also across a crash) that checks the manifest
 * version first. Pages are stored in chunks under 128 KiB and every call names at most 128 keys,
 * within the limits of both KV-backed and SQLite-backed objects.
 *
 * @throws TypeError synchronously when `storage` is not a Durable Object's storage or the prefix
 *   is not a string of at most 1 KiB.
 */
export declare function durableObjectStorage(storage: DurableObjectStorageLike, options?: DurableObjectStorageOptions): PageStoreAdapter;
