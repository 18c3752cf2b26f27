// `ttlkv/durable-object`: a page store over a Cloudflare Durable Object's transactional storage
// (`ctx.storage`, its key-value API), for `open(name, { storage: durableObjectStorage(ctx.storage) })`
// inside the object.
//
// What it owns: every storage key that starts with the prefix it is given (default "ttlkv/"), so
// one object can hold several databases (one prefix each) beside the app's own keys:
//   <prefix>manifest              { version, size, chunks }: the manifest record's head
//   <prefix>manifest/<i>          its bytes, chunk i
//   <prefix>page/<page key>       { size, chunks }: one per page; listPages lists these
//   <prefix>chunk/<page key>/<i>  the page's bytes, chunk i
// The heads are small, so listing pages (list() returns values too) reads no page bytes.
//
// Why a commit is atomic: it runs as one `storage.transaction()`, which commits all of its writes
// or, when its callback throws (or the object crashes before the commit), none of them. The
// manifest-version check is the transaction's first read, so a commit on a stale version writes
// nothing (FENCED). The platform runs one transaction at a time; on top of that every operation of
// this adapter on one storage object waits its turn in a queue, because a read made beside an
// open transaction sees that transaction's writes before they are committed (or rolled back).
//
// Limits respected (those of KV-backed objects, the strictest; SQLite-backed ones allow more):
// keys stay under 2 KiB (the prefix may take at most 1 KiB), values under 128 KiB (pages and the
// manifest are cut into chunks of CHUNK_BYTES, each its own copy so that no value serializes a
// larger buffer it is a view of), and every get, put and delete names at most 128 keys. Listing
// goes LIST_LIMIT keys at a time, from where the last call ended.

import { badArgument, factoryOptions } from "./common/arguments.js";

/** Bytes of one chunk: a value under 128 KiB once serialized, with room for its header. */
const CHUNK_BYTES = 126 * 1024;
/** Keys one get, put or delete may name. */
const KEYS_PER_CALL = 128;
/** Keys one list call returns at most. */
const LIST_LIMIT = 1000;
/** Bytes the prefix may take, leaving the other half of a 2 KiB key to the adapter's names. */
const MAX_PREFIX_BYTES = 1024;

/** The operations of every storage object, one at a time (see the top of this file). */
const queues = new WeakMap();

function exclusive(storage, task) {
  const run = (queues.get(storage) ?? Promise.resolve()).then(task);
  // The next operation waits for this one to settle, whatever its outcome.
  queues.set(storage, run.catch(() => {}));
  return run;
}

const withCode = (code, message) => Object.assign(new Error(message), { code });

/** `n` integers from 0. */
const range = (n) => Array.from({ length: n }, (_, i) => i);

/** Groups of at most `size` items. */
function groups(items, size) {
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The values of `keys` (a Map), KEYS_PER_CALL keys per get. */
async function getMany(ops, keys) {
  const found = new Map();
  for (const group of groups(keys, KEYS_PER_CALL)) {
    for (const [key, value] of await ops.get(group)) found.set(key, value);
  }
  return found;
}

/** `bytes` as chunks of CHUNK_BYTES, each a copy that owns its buffer. */
function chunksOf(bytes) {
  return range(Math.ceil(bytes.length / CHUNK_BYTES)).map((i) => bytes.slice(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES));
}

function checkHead(head, where) {
  const ok = head !== null && typeof head === "object" && Number.isSafeInteger(head.size) && Number.isSafeInteger(head.chunks) && head.chunks >= 0;
  if (!ok) throw withCode("CORRUPTION", `${where}: the stored head is not { size, chunks }`);
  return head;
}

/** The manifest's head, which also carries its version: a damaged one is CORRUPTION, never a version that fences. */
function checkManifestHead(head, where) {
  checkHead(head, where);
  if (!Number.isSafeInteger(head.version) || head.version < 0) {
    throw withCode("CORRUPTION", `${where}: the stored manifest head holds no version`);
  }
  return head;
}

/**
 * The durableObjectStorage page store of `storage` (a Durable Object's `ctx.storage`), keeping
 * everything under `options.prefix` (default "ttlkv/").
 */
export function durableObjectStorage(storage, options = {}) {
  for (const method of ["get", "put", "delete", "list", "transaction"]) {
    if (typeof storage?.[method] !== "function") {
      throw badArgument(`durableObjectStorage: expected a Durable Object's storage (ctx.storage), which has ${method}()`);
    }
  }
  const { prefix = "ttlkv/" } = factoryOptions(options, ["prefix"], "durableObjectStorage");
  if (typeof prefix !== "string" || new TextEncoder().encode(prefix).length > MAX_PREFIX_BYTES) {
    throw badArgument(`durableObjectStorage: prefix must be a string of at most ${MAX_PREFIX_BYTES} bytes`);
  }

  const manifestHead = `${prefix}manifest`;
  const manifestChunk = (i) => `${prefix}manifest/${i}`;
  const pageHeads = `${prefix}page/`;
  const pageHead = (key) => `${pageHeads}${key}`;
  const pageChunk = (key) => (i) => `${prefix}chunk/${key}/${i}`;

  /** The bytes a head describes, from its chunks; null when there is no head. */
  async function readBlob(ops, headKey, chunkKey) {
    // The head and the first chunk in one call: most pages are one chunk.
    const first = await ops.get([headKey, chunkKey(0)]);
    if (!first.has(headKey)) return null;
    const head = checkHead(first.get(headKey), headKey);
    const parts = head.chunks > 1 ? await getMany(ops, range(head.chunks).slice(1).map(chunkKey)) : new Map();
    if (head.chunks > 0) parts.set(chunkKey(0), first.get(chunkKey(0)));
    const bytes = new Uint8Array(head.size);
    let at = 0;
    for (const i of range(head.chunks)) {
      const part = parts.get(chunkKey(i));
      if (!(part instanceof Uint8Array) || at + part.length > head.size) {
        throw withCode("CORRUPTION", `${headKey}: chunk ${i} of ${head.chunks} is missing or too long`);
      }
      bytes.set(part, at);
      at += part.length;
    }
    if (at !== head.size) throw withCode("CORRUPTION", `${headKey}: its chunks hold ${at} bytes, not ${head.size}`);
    return { head, bytes };
  }

  /**
   * Stage a blob's new bytes (or its removal, for `bytes === null`) over its old head: the new
   * head and chunks into `writes`, the old chunks it no longer has into `removals`.
   */
  function stage(writes, removals, headKey, chunkKey, old, bytes, extra = {}) {
    const oldChunks = old === undefined ? 0 : checkHead(old, headKey).chunks;
    let chunks = 0;
    if (bytes === null) {
      if (old !== undefined) removals.add(headKey);
    } else {
      const parts = chunksOf(bytes);
      chunks = parts.length;
      writes.set(headKey, { ...extra, size: bytes.length, chunks });
      parts.forEach((part, i) => writes.set(chunkKey(i), part));
    }
    for (let i = chunks; i < oldChunks; i++) removals.add(chunkKey(i));
  }

  /** The commit, inside its transaction `txn`. */
  async function applyCommit(txn, { expectedVersion, manifest, puts, deletes }) {
    const stored = await txn.get(manifestHead);
    const version = stored === undefined ? 0 : checkManifestHead(stored, manifestHead).version;
    if (version !== expectedVersion) {
      throw withCode("FENCED", `the stored manifest is version ${version}, the commit expected ${expectedVersion}`);
    }
    // Each touched page's bytes after the commit: deletes first, then puts (the last put wins).
    const after = new Map();
    for (const key of deletes) after.set(key, null);
    for (const [key, bytes] of puts) after.set(key, bytes);
    const heads = await getMany(txn, [...after.keys()].map(pageHead));

    const writes = new Map();
    const removals = new Set();
    for (const [key, bytes] of after) stage(writes, removals, pageHead(key), pageChunk(key), heads.get(pageHead(key)), bytes);
    if (manifest) stage(writes, removals, manifestHead, manifestChunk, stored, manifest.bytes, { version: manifest.version });

    for (const group of groups([...removals], KEYS_PER_CALL)) await txn.delete(group);
    for (const group of groups([...writes], KEYS_PER_CALL)) await txn.put(Object.fromEntries(group));
  }

  return {
    readManifest() {
      return exclusive(storage, async () => {
        const found = await readBlob(storage, manifestHead, manifestChunk);
        return found && { version: checkManifestHead(found.head, manifestHead).version, bytes: found.bytes };
      });
    },

    getPage(key) {
      return exclusive(storage, async () => (await readBlob(storage, pageHead(key), pageChunk(key)))?.bytes ?? null);
    },

    listPages(kind) {
      return exclusive(storage, async () => {
        const keys = [];
        let start;
        for (;;) {
          const listed = await storage.list({ prefix: pageHead(kind), start, limit: LIST_LIMIT });
          for (const key of listed.keys()) keys.push(key.slice(pageHeads.length));
          if (listed.size < LIST_LIMIT) return keys;
          // The next call starts right after the last key listed.
          start = `${pageHead(keys[keys.length - 1])}\0`;
        }
      });
    },

    commit(commit) {
      const { expectedVersion, manifest } = commit;
      if (manifest && !(manifest.version > expectedVersion)) {
        return Promise.reject(withCode("INVALID_ARGUMENT", `a new manifest's version (${manifest.version}) must be greater than ${expectedVersion}`));
      }
      return exclusive(storage, () => storage.transaction((txn) => applyCommit(txn, commit)));
    },
  };
}
