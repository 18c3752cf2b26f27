// The npm package's entry: `import { open, destroy, TtlKvError } from "ttlkv"`.
//
// It loads the WebAssembly engine on first use (no separate init()), owns what only JavaScript
// can do — typed keys and values, option checking, scans as async iterables, expire events, the
// automatic maintenance timer — and drives the engine through the bytes-level API of
// `bindings/web` (crate ttlkv-web). Every rejection is a TtlKvError with a code (API.md).

import { TtlKvError, CODES } from "./errors.js";
import { encodeKey, decodeKey, encodeValue, decodeValue } from "./codec.js";
import initWasm, * as wasm from "./pkg/ttlkv_web.js";

export { TtlKvError, CODES };

let loading;

function isNode() {
  return typeof process !== "undefined" && process.versions != null && process.versions.node != null;
}

/** Load and instantiate the engine once. */
function load() {
  if (!loading) {
    loading = (async () => {
      const url = new URL("./pkg/ttlkv_web_bg.wasm", import.meta.url);
      if (isNode() && url.protocol === "file:") {
        const { readFile } = await import("node:fs/promises");
        await initWasm({ module_or_path: await readFile(url) });
      } else {
        await initWasm({ module_or_path: url });
      }
    })();
  }
  return loading;
}

/** Run an engine call, turning whatever it throws into a TtlKvError. */
async function engine(call) {
  try {
    return await call();
  } catch (e) {
    throw asTtlKvError(e);
  }
}

function asTtlKvError(e) {
  if (e instanceof TtlKvError) return e;
  if (e instanceof Error && typeof e.code === "string" && CODES.includes(e.code)) {
    return new TtlKvError(e.code, e.message);
  }
  if (e instanceof TypeError) return new TtlKvError("INVALID_ARGUMENT", e.message, { cause: e });
  return new TtlKvError("STORAGE", String(e && e.message ? e.message : e), { cause: e });
}

const invalid = (message) => new TtlKvError("INVALID_ARGUMENT", message);

function plainOptions(opts, what) {
  if (opts === undefined || opts === null) return {};
  if (typeof opts !== "object" || Array.isArray(opts)) throw invalid(`${what} must be an object`);
  return opts;
}

function checkKnown(opts, allowed, what) {
  for (const k of Object.keys(opts)) {
    if (!allowed.includes(k)) throw invalid(`unknown ${what} option "${k}"`);
  }
}

function positiveInt(x, what) {
  if (typeof x !== "number" || !Number.isInteger(x) || x <= 0 || !Number.isSafeInteger(x)) {
    throw invalid(`${what} must be an integer greater than 0`);
  }
  return x;
}

function integer(x, what) {
  if (typeof x !== "number" || !Number.isSafeInteger(x)) throw invalid(`${what} must be a finite integer`);
  return x;
}

function flag(x, what) {
  if (x === undefined) return false;
  if (typeof x !== "boolean") throw invalid(`${what} must be a boolean`);
  return x;
}

const PUT_OPTIONS = ["ttlMs", "expireAt", "keepTtl", "noExpiry", "ifAbsent", "ifPresent"];

/** [ttlKind, ttlArg, condition] for the engine from put options. */
function putArgs(opts) {
  opts = plainOptions(opts, "put options");
  checkKnown(opts, PUT_OPTIONS, "put");
  const given = ["ttlMs", "expireAt", "keepTtl", "noExpiry"].filter((k) => opts[k] !== undefined);
  if (given.length > 1) throw invalid(`at most one of ttlMs, expireAt, keepTtl, noExpiry (got ${given.join(", ")})`);
  let kind = 0;
  let arg = 0;
  if (opts.ttlMs !== undefined) [kind, arg] = [2, positiveInt(opts.ttlMs, "ttlMs")];
  else if (opts.expireAt !== undefined) [kind, arg] = [3, integer(opts.expireAt, "expireAt")];
  else if (flag(opts.keepTtl, "keepTtl")) kind = 4;
  else if (flag(opts.noExpiry, "noExpiry")) kind = 1;
  const ifAbsent = flag(opts.ifAbsent, "ifAbsent");
  const ifPresent = flag(opts.ifPresent, "ifPresent");
  if (ifAbsent && ifPresent) throw invalid("ifAbsent and ifPresent cannot both be set");
  return [kind, arg, ifAbsent ? 1 : ifPresent ? 2 : 0];
}

function conditionBits(cond) {
  cond = plainOptions(cond, "expire condition");
  checkKnown(cond, ["nx", "xx", "gt", "lt"], "expire condition");
  return (flag(cond.nx, "nx") ? 1 : 0) | (flag(cond.xx, "xx") ? 2 : 0) | (flag(cond.gt, "gt") ? 4 : 0) | (flag(cond.lt, "lt") ? 8 : 0);
}

function scanArgs(opts) {
  opts = plainOptions(opts, "scan options");
  checkKnown(opts, ["prefix", "start", "end", "limit", "reverse"], "scan");
  const keyOrNone = (k, what) => (k === undefined ? undefined : encodeKey(k, what));
  // An empty prefix or start bounds nothing: every key has it / comes after it.
  const emptyIsNone = (k) => ((typeof k === "string" || k instanceof Uint8Array) && k.length === 0 ? undefined : k);
  let limit = -1;
  if (opts.limit !== undefined) {
    if (typeof opts.limit !== "number" || !Number.isSafeInteger(opts.limit) || opts.limit < 0) {
      throw invalid("limit must be an integer >= 0");
    }
    limit = opts.limit;
  }
  return {
    prefix: keyOrNone(emptyIsNone(opts.prefix)),
    start: keyOrNone(emptyIsNone(opts.start)),
    end: keyOrNone(opts.end),
    limit,
    reverse: flag(opts.reverse, "reverse"),
  };
}

function entryOf(raw) {
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

/** Entries of a scan, fetched page by page from a consistent snapshot. */
async function* scanPages(snapshot, args) {
  let { prefix, start, end, limit, reverse } = args;
  try {
    while (limit !== 0) {
      const page = limit < 0 ? SCAN_PAGE : Math.min(limit, SCAN_PAGE);
      const rows = await engine(() => snapshot.scan(prefix, start, end, page, reverse));
      for (const row of rows) yield entryOf(row);
      if (rows.length < page) return;
      if (limit > 0) limit -= rows.length;
      const last = rows[rows.length - 1][0];
      if (reverse) end = last;
      else start = after(last);
    }
  } finally {
    snapshot.release();
  }
}

class Snapshot {
  #raw;
  constructor(raw) {
    this.#raw = raw;
  }
  async get(key) {
    const k = encodeKey(key);
    const raw = await engine(() => this.#raw.get(k));
    return raw === undefined ? undefined : decodeValue(raw).value;
  }
  async getEntry(key) {
    const k = encodeKey(key);
    const raw = await engine(() => this.#raw.getEntry(k));
    return raw === undefined ? undefined : entryOf(raw);
  }
  async has(key) {
    const k = encodeKey(key);
    return engine(() => this.#raw.has(k));
  }
  async ttl(key) {
    const k = encodeKey(key);
    return engine(() => this.#raw.ttl(k));
  }
  scan(opts) {
    const args = scanArgs(opts);
    const raw = this.#raw;
    return {
      async *[Symbol.asyncIterator]() {
        const { prefix, start, end, limit, reverse } = args;
        let remaining = limit;
        const rows = await engine(() => raw.scan(prefix, start, end, remaining, reverse));
        for (const row of rows) yield entryOf(row);
      },
    };
  }
  release() {
    this.#raw.release();
  }
}

/** The part of a database every namespace handle shares: events, maintenance, closing. */
class Shared {
  constructor(root, options) {
    this.root = root;
    this.listeners = new Set();
    this.onExpire = options.onExpire;
    this.auto = options.maintenance !== "manual";
    this.clock = options.clock ?? Date.now;
    this.closed = false;
    this.timer = undefined;
    this.armedFor = undefined;
    this.running = false;
    this.reclaiming = undefined;
  }

  emit(expired) {
    for (const [namespace, key, value, expireAt] of expired) {
      const decoded = decodeValue(value);
      const event = { key: decodeKey(key, decoded.keyWasString), value: decoded.value, expireAt };
      if (namespace !== "") event.namespace = namespace;
      for (const fn of this.listeners) {
        try {
          fn(event);
        } catch (e) {
          queueMicrotask(() => {
            throw e;
          });
        }
      }
    }
  }

  /** Arm the one maintenance timer for the engine's next wake-up. */
  schedule() {
    if (!this.auto || this.closed || this.running) return;
    const next = this.root.nextWakeupMs();
    if (next === null || next === undefined) return;
    if (this.timer !== undefined && this.armedFor !== undefined && this.armedFor <= next) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    const delay = Math.min(Math.max(0, next - this.root.now()), 2_147_483_647);
    this.armedFor = next;
    this.timer = setTimeout(() => this.run(), delay);
    // The timer never keeps a Node process alive on its own.
    if (typeof this.timer === "object" && this.timer && typeof this.timer.unref === "function") {
      this.timer.unref();
    }
  }

  async run() {
    this.timer = undefined;
    this.armedFor = undefined;
    if (this.closed) return;
    this.running = true;
    try {
      const step = await this.root.maintenance();
      this.emit(step.purge.expired);
    } catch {
      // A failed step is retried at the next wake-up; the error reaches callers of writes.
    } finally {
      this.running = false;
    }
    this.schedule();
  }

  /**
   * Free storage after a QUOTA_EXCEEDED: purge every due key (their expire events fire as usual),
   * then compact, so expired rows and whole expired SSTs leave storage. Best effort: a step that
   * fails (it may need room itself) is skipped. Concurrent callers share one reclaim.
   */
  reclaim() {
    if (!this.reclaiming) {
      this.reclaiming = (async () => {
        try {
          for (let slice = 0; slice < 1000; slice++) {
            const report = await this.root.purgeExpired(1000);
            this.emit(report.expired);
            if (!report.moreDue) break;
          }
        } catch {
          // Nothing due could be purged; compaction may still drop what was purged before.
        }
        try {
          await this.root.compact();
        } catch {
          // Compaction needs room for its output before the input goes; nothing more to do.
        }
      })().finally(() => {
        this.reclaiming = undefined;
      });
    }
    return this.reclaiming;
  }

  stop() {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** An open database, or one namespace of it. */
class Db {
  #raw;
  #shared;
  constructor(raw, shared) {
    this.#raw = raw;
    this.#shared = shared;
  }

  async #call(fn) {
    if (this.#shared.closed) throw new TtlKvError("CLOSED", "the database is closed");
    const raw = await this.#raw;
    let result;
    try {
      result = await engine(() => fn(raw));
    } catch (e) {
      // Out of room: nothing of the call was written. Reclaim what expired data holds, then
      // try once more; a second QUOTA_EXCEEDED is the caller's.
      if (e.code !== "QUOTA_EXCEEDED" || this.#shared.closed) throw e;
      await this.#shared.reclaim();
      result = await engine(() => fn(raw));
    }
    this.#shared.schedule();
    return result;
  }

  put(key, value, opts) {
    return (async () => {
      const k = encodeKey(key);
      const v = encodeValue(value, typeof key === "string");
      const [kind, arg, cond] = putArgs(opts);
      return this.#call((raw) => raw.put(k, v, kind, arg, cond));
    })();
  }

  async get(key) {
    const k = encodeKey(key);
    const raw = await this.#call((r) => r.get(k));
    return raw === undefined ? undefined : decodeValue(raw).value;
  }

  async getMany(keys) {
    if (!Array.isArray(keys)) throw invalid("getMany takes an array of keys");
    const encoded = keys.map((k) => encodeKey(k));
    return Promise.all(encoded.map((k) => this.#call((r) => r.get(k)).then((raw) => (raw === undefined ? undefined : decodeValue(raw).value))));
  }

  async getEntry(key) {
    const k = encodeKey(key);
    const raw = await this.#call((r) => r.getEntry(k));
    return raw === undefined ? undefined : entryOf(raw);
  }

  async has(key) {
    const k = encodeKey(key);
    return this.#call((r) => r.has(k));
  }

  async delete(key) {
    const k = encodeKey(key);
    return this.#call((r) => r.delete(k));
  }

  async ttl(key) {
    const k = encodeKey(key);
    return this.#call((r) => r.ttl(k));
  }

  async expire(key, ttlMs, cond) {
    const k = encodeKey(key);
    const ms = positiveInt(ttlMs, "ttlMs");
    const bits = conditionBits(cond);
    return this.#call((r) => r.expire(k, ms, bits));
  }

  async expireAt(key, atMs, cond) {
    const k = encodeKey(key);
    const at = integer(atMs, "atMs");
    const bits = conditionBits(cond);
    return this.#call((r) => r.expireAt(k, at, bits));
  }

  async persist(key) {
    const k = encodeKey(key);
    return this.#call((r) => r.persist(k));
  }

  async getEx(key, opts) {
    const k = encodeKey(key);
    opts = plainOptions(opts, "getEx options");
    checkKnown(opts, ["ttlMs", "expireAt", "persist"], "getEx");
    const given = ["ttlMs", "expireAt", "persist"].filter((x) => opts[x] !== undefined);
    if (given.length !== 1) throw invalid("getEx takes exactly one of ttlMs, expireAt, persist");
    let kind;
    let arg = 0;
    if (opts.ttlMs !== undefined) [kind, arg] = [0, positiveInt(opts.ttlMs, "ttlMs")];
    else if (opts.expireAt !== undefined) [kind, arg] = [1, integer(opts.expireAt, "expireAt")];
    else if (opts.persist === true) kind = 2;
    else throw invalid("persist must be true");
    const raw = await this.#call((r) => r.getEx(k, kind, arg));
    return raw === undefined ? undefined : decodeValue(raw).value;
  }

  scan(opts) {
    const args = scanArgs(opts);
    const self = this;
    return {
      async *[Symbol.asyncIterator]() {
        if (self.#shared.closed) throw new TtlKvError("CLOSED", "the database is closed");
        const raw = await self.#raw;
        const snapshot = await engine(async () => raw.snapshot());
        yield* scanPages(snapshot, args);
      },
    };
  }

  async batch(ops) {
    if (!Array.isArray(ops)) throw invalid("batch takes an array of operations");
    const encoded = ops.map((op) => {
      if (op === null || typeof op !== "object") throw invalid("a batch operation must be an object");
      const k = encodeKey(op.key);
      if (op.type === "put") {
        const { type, key, value, ...putOpts } = op;
        const [kind, arg, cond] = putArgs(putOpts);
        return [0, k, encodeValue(value, typeof key === "string"), kind, arg, cond];
      }
      if (op.type === "delete") {
        checkKnown(op, ["type", "key"], "delete");
        return [1, k];
      }
      throw invalid(`unknown batch operation type ${JSON.stringify(op.type)}`);
    });
    const ok = await this.#call((r) => r.batch(encoded));
    if (!ok) throw new TtlKvError("INVALID_ARGUMENT", "a condition in the batch failed; nothing was written");
  }

  async snapshot() {
    const raw = await this.#call(async (r) => r.snapshot());
    return new Snapshot(raw);
  }

  namespace(name, opts) {
    if (typeof name !== "string" || name.length === 0) throw invalid("a namespace name is a non-empty string");
    const o = plainOptions(opts, "namespace options");
    checkKnown(o, ["defaultTtlMs", "maxTtlMs"], "namespace");
    const ttl = (x, what) => (x === undefined || x === null ? NaN : positiveInt(x, what));
    const def = ttl(o.defaultTtlMs, "defaultTtlMs");
    const max = ttl(o.maxTtlMs, "maxTtlMs");
    const raw = this.#raw.then((r) => engine(() => r.namespace(name, opts !== undefined, def, max)));
    raw.catch(() => {});
    return new Db(raw, this.#shared);
  }

  async dropNamespace(name) {
    if (typeof name !== "string" || name.length === 0) throw invalid("a namespace name is a non-empty string");
    return this.#call((r) => r.dropNamespace(name));
  }

  async purgeExpired(opts) {
    opts = plainOptions(opts, "purge options");
    checkKnown(opts, ["limit"], "purge");
    const limit = opts.limit === undefined ? 10_000 : positiveInt(opts.limit, "limit");
    const report = await this.#call((r) => r.purgeExpired(limit));
    this.#shared.emit(report.expired);
    return report.removed;
  }

  async flush() {
    return this.#call((r) => r.flush());
  }

  async compact() {
    return this.#call((r) => r.compact());
  }

  async stats() {
    return this.#call(async (r) => r.stats());
  }

  on(event, fn) {
    if (event !== "expire") throw invalid(`unknown event "${event}"`);
    if (typeof fn !== "function") throw invalid("a listener must be a function");
    this.#shared.listeners.add(fn);
  }

  off(event, fn) {
    if (event !== "expire") throw invalid(`unknown event "${event}"`);
    this.#shared.listeners.delete(fn);
  }

  async close() {
    if (this.#shared.closed) return;
    this.#shared.stop();
    await engine(() => this.#shared.root.close());
  }
}

const OPEN_OPTIONS = ["storage", "defaultTtlMs", "clock", "maintenance", "durability", "onExpire", "openTimeoutMs"];

/** How long opening an IndexedDB database may take before it is an error (ms), by default. */
const DEFAULT_OPEN_TIMEOUT_MS = 10_000;

/**
 * `opening`, or a STORAGE error once `ms` have passed. IndexedDB opens wait, with no error, for
 * other contexts to close an old version or finish a delete; past the timeout the caller gets an
 * error instead of a hang, and a database that opens later is closed again.
 */
function withOpenTimeout(opening, ms) {
  let timer;
  let timedOut = false;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(
        new TtlKvError(
          "STORAGE",
          `IndexedDB did not open within ${ms} ms: another tab or worker holds the database ` +
            "(an older version, or a pending delete) and has not let go",
        ),
      );
    }, Math.min(ms, 2_147_483_647));
  });
  opening.then(
    (raw) => {
      if (timedOut) raw.close().catch(() => {});
    },
    () => {},
  );
  return Promise.race([opening, timeout]).finally(() => clearTimeout(timer));
}

/** Open (or create) database `name`. See API.md for the options. */
async function openDb(name, options) {
  if (typeof name !== "string" || name.length === 0) throw invalid("a database name is a non-empty string");
  const o = plainOptions(options, "open options");
  checkKnown(o, OPEN_OPTIONS, "open");
  if (o.defaultTtlMs !== undefined && o.defaultTtlMs !== null) positiveInt(o.defaultTtlMs, "defaultTtlMs");
  if (o.clock !== undefined && typeof o.clock !== "function") throw invalid("clock must be a function");
  if (o.onExpire !== undefined && typeof o.onExpire !== "function") throw invalid("onExpire must be a function");
  if (o.maintenance !== undefined && o.maintenance !== "auto" && o.maintenance !== "manual") {
    throw invalid('maintenance must be "auto" or "manual"');
  }
  if (o.durability !== undefined && o.durability !== "durable" && o.durability !== "relaxed") {
    throw invalid('durability must be "durable" or "relaxed"');
  }
  const storage = storageKind(o.storage);
  await load();
  const openTimeoutMs = o.openTimeoutMs === undefined ? DEFAULT_OPEN_TIMEOUT_MS : positiveInt(o.openTimeoutMs, "openTimeoutMs");
  const opening = engine(() =>
    wasm.openDb(name, storage, {
      defaultTtlMs: o.defaultTtlMs ?? undefined,
      durability: o.durability ?? "durable",
      clock: o.clock,
    }),
  );
  const raw = await (storage === "indexeddb" ? withOpenTimeout(opening, openTimeoutMs) : opening);
  const shared = new Shared(raw, o);
  if (o.onExpire) {
    raw.setExpireHook((namespace, key, value, expireAt) => {
      const decoded = decodeValue(value);
      const out = o.onExpire({ key: decodeKey(key, decoded.keyWasString), value: decoded.value, expireAt, ...(namespace ? { namespace } : {}) });
      if (out === undefined || out === null) return undefined;
      const [kind, arg] = putArgs({ ttlMs: out.ttlMs, expireAt: out.expireAt });
      return [encodeValue(out.value, decoded.keyWasString), kind, arg];
    });
  }
  const db = new Db(Promise.resolve(raw), shared);
  shared.schedule();
  return db;
}

/** Which storage `storage` (the option) means here: "indexeddb", "memory" or an adapter object. */
function storageKind(storage) {
  const hasIndexedDb = typeof globalThis.indexedDB !== "undefined" && globalThis.indexedDB !== null;
  if (storage === undefined || storage === null || storage === "auto") return hasIndexedDb ? "indexeddb" : "memory";
  if (storage === "indexeddb") {
    if (!hasIndexedDb) throw new TtlKvError("UNSUPPORTED", "there is no IndexedDB here (globalThis.indexedDB is missing)");
    return storage;
  }
  if (storage === "memory") return storage;
  if (typeof storage !== "object" || Array.isArray(storage)) {
    throw invalid('storage must be "auto", "indexeddb", "memory" or a page-store adapter object');
  }
  return storage;
}

/**
 * Delete database `name` and all its pages. With IndexedDB it resolves once every connection to
 * the database (in any tab) is closed; an adapter's storage belongs to the app, which deletes it.
 */
async function destroyDb(name, options) {
  if (typeof name !== "string" || name.length === 0) throw invalid("a database name is a non-empty string");
  const o = plainOptions(options, "destroy options");
  checkKnown(o, ["storage"], "destroy");
  const storage = storageKind(o.storage);
  if (typeof storage === "object") {
    throw new TtlKvError("UNSUPPORTED", "destroy() cannot delete an adapter's storage: the app that supplies the adapter owns it");
  }
  await load();
  if (storage === "indexeddb") await engine(() => wasm.destroyIndexedDb(name));
  else wasm.destroyMemory(name);
}

/**
 * Every failure of a public function or method is a TtlKvError. Engine errors already are; what
 * else can escape comes from inspecting the caller's arguments (a getter or proxy that throws, an
 * object whose prototype cannot be read), so it is an INVALID_ARGUMENT with the original as cause.
 */
function asInputError(e) {
  if (e instanceof TtlKvError) return e;
  return new TtlKvError("INVALID_ARGUMENT", `the arguments could not be read: ${describe(e)}`, { cause: e });
}

function describe(e) {
  try {
    return e instanceof Error ? e.message : String(e);
  } catch {
    return "an unprintable error";
  }
}

function guarded(f) {
  return function (...args) {
    let out;
    try {
      out = f.apply(this, args);
    } catch (e) {
      throw asInputError(e);
    }
    return out instanceof Promise ? out.catch((e) => Promise.reject(asInputError(e))) : out;
  };
}

for (const cls of [Db, Snapshot]) {
  for (const name of Object.getOwnPropertyNames(cls.prototype)) {
    const d = Object.getOwnPropertyDescriptor(cls.prototype, name);
    if (name !== "constructor" && typeof d.value === "function") {
      Object.defineProperty(cls.prototype, name, { ...d, value: guarded(d.value) });
    }
  }
}

/** Open (or create) database `name`. See index.d.ts (and API.md) for the options. */
export const open = guarded(openDb);

/**
 * Delete database `name` and all its pages. With IndexedDB it resolves once every connection to
 * the database (in any tab) is closed; an adapter's storage belongs to the app, which deletes it.
 */
export const destroy = guarded(destroyDb);
