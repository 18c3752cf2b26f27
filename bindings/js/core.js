// The package's core, shared by every entry: `open`, `destroy`, `init`, `TtlKvError`.
//
// It owns what only JavaScript can do — typed keys and values, option checking, scans as async
// iterables, expire events, the automatic maintenance timer — and drives the engine by method
// name and plain arguments through an endpoint: this context's engine (engine.js, over the
// bytes-level API of `bindings/web`), or the writer tab's when several tabs share an IndexedDB
// database (tabs.js). Every rejection is a TtlKvError with a code (CODES in errors.js).
//
// How the WebAssembly engine is found differs by runtime, so each entry (index.js for browsers
// and bundlers, node.js, deno.js, workerd.js, edge-light.js; package.json picks one by export
// condition) tells the core with `useEngineSource`. The engine is loaded by the first open() —
// never at import time — or by an explicit `init()`.

import { TtlKvError, CODES } from "./errors.js";
import { encodeKey, decodeKey, encodeValue, decodeValue, PackedBatch } from "./codec.js";
import { engine, asTtlKvError, LocalEndpoint } from "./engine.js";
import { Tabs, tabsSupported } from "./tabs.js";
import { takeLease } from "./lease.js";
import initWasm, * as wasm from "./pkg/ttlkv_web.js";

export { TtlKvError, CODES };

/**
 * Where the engine comes from: a function giving `{ module }` (a compiled `WebAssembly.Module`),
 * `{ bytes }` (its bytes) or `{ url }` (where to fetch it), maybe as a Promise. `init()` sets
 * `given`; an entry sets `fallback`.
 */
let given;
let fallback;
let loading;

/**
 * For the entries: how to keep the runtime from ending the work of a maintenance step before it
 * is done (workerd ends a request's I/O when the request ends, unless told to wait for it).
 */
let keepAlive;
export function useKeepAlive(fn) {
  keepAlive = fn;
}

/** For the entries: how this runtime finds the engine when the app does not call `init()`. */
export function useEngineSource(source) {
  fallback = source;
}

const SOURCE_KINDS = ["module", "bytes", "url"];

function checkSource(options) {
  const o = plainOptions(options, "init options");
  checkKnown(o, SOURCE_KINDS, "init");
  const kinds = SOURCE_KINDS.filter((k) => o[k] !== undefined);
  if (kinds.length !== 1) throw invalid("init takes exactly one of module, bytes, url");
  const [kind] = kinds;
  const value = o[kind];
  const ok =
    kind === "module"
      ? // Also a module compiled in another realm (a host may compile it outside the worker).
        Object.prototype.toString.call(value) === "[object WebAssembly.Module]"
      : kind === "bytes"
        ? value instanceof ArrayBuffer || ArrayBuffer.isView(value)
        : typeof value === "string" || value instanceof URL;
  if (!ok) {
    const want = { module: "a WebAssembly.Module", bytes: "an ArrayBuffer or a typed array", url: "a string or a URL" };
    throw invalid(`init: ${kind} must be ${want[kind]}`);
  }
  return { [kind]: value };
}

/**
 * Load the engine from `options` (`{ module }`, `{ bytes }` or `{ url }`) instead of the way the
 * entry would find it: for hosts and bundlers that hand over the compiled module or its bytes.
 * Once the engine is loaded, later calls change nothing. Rejects like open() when it cannot load.
 */
async function initEngine(options) {
  const source = checkSource(options);
  if (loaded) return;
  given = () => source;
  if (loading) await loading.catch(() => {});
  if (!loaded) loading = undefined;
  await load();
}

let loaded = false;

/**
 * Load and instantiate the engine once. A load that fails is an `UNSUPPORTED` error with its
 * cause (the engine cannot run here, or its file could not be read), and is not kept: the next
 * open() tries again.
 */
function load() {
  if (!loading) {
    loading = (async () => {
      const source = given ?? fallback;
      if (!source) throw new Error("this entry cannot find the engine: call init({ module | bytes | url }) first");
      const { module, bytes, url } = await source();
      // A module (or bytes) handed over is checked before the glue takes it: the glue keeps the
      // first instance it makes, so one of another module would stay broken for every retry.
      const compiled = module ?? (bytes && (await WebAssembly.compile(bytes)));
      if (compiled && !WebAssembly.Module.exports(compiled).some((e) => e.name === "openDb")) {
        throw new Error("the WebAssembly module given is not the ttlkv engine (it exports no openDb)");
      }
      await initWasm({ module_or_path: compiled ?? url });
      loaded = true;
    })().catch((e) => {
      loading = undefined;
      throw new TtlKvError("UNSUPPORTED", `the ttlkv engine could not be loaded: ${describe(e)}`, { cause: e });
    });
  }
  return loading;
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

/**
 * The value of an engine `get`: text values come back decoded already (a string, or the parsed
 * JSON value), anything else as its stored bytes with their tag (see `value_js` in
 * bindings/web/src/api.rs); `undefined` when absent.
 */
const valueOf = (raw) => (raw instanceof Uint8Array ? decodeValue(raw).value : raw);

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

/**
 * Engine resources that stand behind an app's object, freed once the object is garbage-collected
 * if the app never let them go: a dropped namespace handle's engine handle, the snapshot of a
 * dropped Snapshot or of a scan the app stopped iterating without `break` or `return()` (which
 * would keep every row it can see from being compacted away until close()).
 */
const reaper =
  typeof FinalizationRegistry === "function"
    ? new FinalizationRegistry((free) => free())
    : // A runtime without it (some embedders leave it out): then only release() and close() free.
      { register() {}, unregister() {} };

/**
 * Entries of a scan, fetched page by page from snapshot `held.id` of `held.endpoint`, released at
 * the end (and `held.id` cleared: nothing is left for the reaper).
 */
async function* scanPages(held, args) {
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

class Snapshot {
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

/**
 * An error thrown by the app's expire listener or onExpire hook: reported, never rethrown (it would
 * surface where nothing can catch it, and end a Node process) and never in the way of the purge.
 */
function report(what, key, e) {
  console.error(`ttlkv: ${what} threw for key`, key, e);
}

/** How long past its time a maintenance timer may wait before its step starts without it. */
const STARVED_MS = 50;
/** How long a maintenance step waits after the one before failed (ms). */
const FAILED_STEP_RETRY_MS = 1_000;
/** Reads between two looks at a starved maintenance timer (see `Shared.schedule`). */
const READS_PER_CHECK = 32;

/**
 * What every handle of one open database shares: where its calls run (`endpoint`: this context's
 * engine, or the writer tab's through `tabs`), its expire listeners, and — while this context
 * runs the engine — the one automatic maintenance timer.
 */
class Shared {
  constructor(options) {
    this.endpoint = undefined;
    this.local = undefined;
    this.tabs = undefined;
    this.listeners = new Set();
    this.auto = options.maintenance !== "manual";
    this.closed = false;
    this.timer = undefined;
    this.armedFor = undefined;
    this.firesAt = undefined;
    this.running = false;
    this.reads = 0;
    this.failed = false;
  }

  /** Run calls on this context's engine from now on (`local` is a LocalEndpoint). */
  useLocal(local) {
    this.local = local;
    this.endpoint = local;
    this.schedule();
  }

  /** Run calls elsewhere from now on (this context lost, or never had, the writer role). */
  useRemote(remote) {
    this.local = undefined;
    this.endpoint = remote;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = undefined;
  }

  /** Whether expire events have anywhere to go: a listener here, or other tabs. */
  wantsExpired() {
    return this.listeners.size > 0 || this.tabs !== undefined;
  }

  /** Expire events of a purge this context ran: to its listeners and to every other tab. */
  publish(expired) {
    if (expired.length === 0) return;
    this.emit(expired);
    this.tabs?.broadcastExpired(expired);
  }

  emit(expired) {
    if (this.listeners.size === 0) return;
    for (const [namespace, key, value, expireAt] of expired) {
      const decoded = decodeValue(value);
      const event = { key: decodeKey(key, decoded.keyWasString), value: decoded.value, expireAt };
      if (namespace !== "") event.namespace = namespace;
      for (const fn of this.listeners) {
        try {
          fn(event);
        } catch (e) {
          report("an expire listener", event.key, e);
        }
      }
    }
  }

  /**
   * Arm the one maintenance timer for the engine's next wake-up. Called after every call that
   * reaches this context's engine, its own or forwarded by another tab (LocalEndpoint.call): an app
   * that never yields to the timer queue (a loop of awaited calls on memory storage resolves in
   * microtasks alone) would starve the timer, and flushed tables would pile up in level 0 with
   * every read probing each of them. So a timer that is STARVED_MS overdue (past the time it was
   * set to fire) is not waited for: its step starts now, beside the app's calls.
   * After a read that check is all there is to do, and it looks at the clock, so only every
   * READS_PER_CHECK-th read makes it.
   */
  schedule(afterRead = false) {
    const local = this.local;
    if (!this.auto || this.closed || this.running || local === undefined) return;
    if (afterRead && ++this.reads % READS_PER_CHECK !== 0) return;
    if (this.timer !== undefined) {
      const now = local.root.now();
      if (now >= this.firesAt + STARVED_MS) {
        clearTimeout(this.timer);
        // The caller's answer waits for the step (LocalEndpoint.call): in a runtime that ends a
        // request's I/O with the request (workerd), a step left running beside it would be cut
        // off half-way and hold the engine for every later request.
        return this.run();
      }
      // Armed for now or earlier: no wake-up can be earlier than that.
      if (this.armedFor <= now) return;
    }
    // A read brings no work forward, and asking the engine costs a look at every table.
    if (afterRead) return;
    const next = local.root.nextWakeupMs();
    if (next === null || next === undefined) return;
    if (this.timer !== undefined && this.armedFor !== undefined && this.armedFor <= next) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    const now = local.root.now();
    // After a failed step (storage failing, a clock reading that is no plausible time) the next
    // waits a while: its wake-up is due at once, and retrying at once would spin.
    const delay = Math.min(Math.max(this.failed ? FAILED_STEP_RETRY_MS : 0, next - now), 2_147_483_647);
    this.armedFor = next;
    this.firesAt = now + delay;
    this.timer = setTimeout(() => this.run(), delay);
    // The timer never keeps a Node process alive on its own.
    if (typeof this.timer === "object" && this.timer && typeof this.timer.unref === "function") {
      this.timer.unref();
    }
  }

  /** Run one maintenance step; the Promise settles (never rejects) when it is done. */
  run() {
    this.timer = undefined;
    this.armedFor = undefined;
    const local = this.local;
    if (this.closed || local === undefined) return undefined;
    this.running = true;
    const step = (async () => {
      try {
        await local.call(null, "maintenance", []);
        this.failed = false;
      } catch {
        // A failed step is retried after a while; the error reaches callers of writes.
        this.failed = true;
      } finally {
        this.running = false;
      }
      this.schedule();
    })();
    keepAlive?.(step);
    return step;
  }

  stop() {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

let nextHandle = 0;

/** An open database, or one namespace of it. */
class Db {
  #ns;
  #shared;
  constructor(shared, ns) {
    this.#shared = shared;
    this.#ns = ns;
  }

  /** The answer of an engine call, or a Promise of it; throws as the endpoint's `call` does. */
  #call(method, args) {
    const shared = this.#shared;
    if (shared.closed) throw new TtlKvError("CLOSED", "the database is closed");
    return shared.endpoint.call(this.#ns, method, args);
  }

  put(key, value, opts) {
    return (async () => {
      const k = encodeKey(key);
      const v = encodeValue(value, typeof key === "string");
      const [kind, arg, cond] = putArgs(opts);
      return this.#call("put", [k, v, kind, arg, cond]);
    })();
  }

  async get(key) {
    const raw = await this.#call("get", [encodeKey(key)]);
    return valueOf(raw);
  }

  async getMany(keys) {
    if (!Array.isArray(keys)) throw invalid("getMany takes an array of keys");
    const encoded = keys.map((k) => encodeKey(k));
    const raws = await Promise.all(encoded.map((k) => this.#call("get", [k])));
    return raws.map(valueOf);
  }

  async getEntry(key) {
    const raw = await this.#call("getEntry", [encodeKey(key)]);
    return raw === undefined ? undefined : entryOf(raw);
  }

  async has(key) {
    return this.#call("has", [encodeKey(key)]);
  }

  async delete(key) {
    return this.#call("delete", [encodeKey(key)]);
  }

  async ttl(key) {
    return this.#call("ttl", [encodeKey(key)]);
  }

  async expire(key, ttlMs, cond) {
    const k = encodeKey(key);
    // Any integer: ms <= 0 deletes the key, as PEXPIRE does (the engine decides).
    const ms = integer(ttlMs, "ttlMs");
    return this.#call("expire", [k, ms, conditionBits(cond)]);
  }

  async expireAt(key, atMs, cond) {
    const k = encodeKey(key);
    const at = integer(atMs, "atMs");
    return this.#call("expireAt", [k, at, conditionBits(cond)]);
  }

  async persist(key) {
    return this.#call("persist", [encodeKey(key)]);
  }

  async getEx(key, opts) {
    const k = encodeKey(key);
    opts = plainOptions(opts, "getEx options");
    checkKnown(opts, ["ttlMs", "expireAt", "persist"], "getEx");
    const given = ["ttlMs", "expireAt", "persist"].filter((x) => opts[x] !== undefined);
    if (given.length > 1) throw invalid("getEx takes at most one of ttlMs, expireAt, persist");
    // No option: a plain get, which changes nothing.
    if (given.length === 0) return valueOf(await this.#call("get", [k]));
    let kind;
    let arg = 0;
    if (opts.ttlMs !== undefined) [kind, arg] = [0, positiveInt(opts.ttlMs, "ttlMs")];
    else if (opts.expireAt !== undefined) [kind, arg] = [1, integer(opts.expireAt, "expireAt")];
    else if (opts.persist === true) kind = 2;
    else throw invalid("persist must be true");
    const raw = await this.#call("getEx", [k, kind, arg]);
    return valueOf(raw);
  }

  scan(opts) {
    const args = scanArgs(opts);
    const self = this;
    return {
      [Symbol.asyncIterator]() {
        const held = { endpoint: self.#shared.endpoint };
        const entries = (async function* () {
          held.id = await self.#call("snapshot", []);
          yield* scanPages(held, args);
        })();
        reaper.register(entries, () => held.id && held.endpoint.release(held.id));
        return entries;
      },
    };
  }

  async batch(ops) {
    if (!Array.isArray(ops)) throw invalid("batch takes an array of operations");
    const packed = new PackedBatch(ops.length);
    for (const op of ops) {
      if (op === null || typeof op !== "object") throw invalid("a batch operation must be an object");
      packed.key(op.key);
      if (op.type === "put") {
        const { type, key, value, ...putOpts } = op;
        const [kind, arg, cond] = putArgs(putOpts);
        packed.put(value, kind, arg, cond);
      } else if (op.type === "delete") {
        checkKnown(op, ["type", "key"], "delete");
        packed.delete();
      } else {
        throw invalid(`unknown batch operation type ${JSON.stringify(op.type)}`);
      }
    }
    const ok = await this.#call("batch", packed.finish());
    if (!ok) throw new TtlKvError("INVALID_ARGUMENT", "a condition in the batch failed; nothing was written");
  }

  async snapshot() {
    const endpoint = this.#shared.endpoint;
    const id = await this.#call("snapshot", []);
    const snapshot = new Snapshot(endpoint, id);
    reaper.register(snapshot, () => endpoint.release(id), snapshot);
    return snapshot;
  }

  namespace(name, opts) {
    if (typeof name !== "string" || name.length === 0) throw invalid("a namespace name is a non-empty string");
    const o = plainOptions(opts, "namespace options");
    checkKnown(o, ["defaultTtlMs", "maxTtlMs"], "namespace");
    const ttl = (x, what) => (x === undefined || x === null ? null : positiveInt(x, what));
    // null, not NaN, for "none": the spec crosses tabs through structured clone and JSON.
    const handleId = `${Math.random().toString(36).slice(2)}:${nextHandle++}`;
    const shared = this.#shared;
    const handle = new Db(shared, [name, opts !== undefined, ttl(o.defaultTtlMs, "defaultTtlMs"), ttl(o.maxTtlMs, "maxTtlMs"), handleId]);
    // Its engine handle (opened by its first call, on whichever context is the writer) goes with it.
    reaper.register(handle, () => shared.endpoint.forget(handleId));
    return handle;
  }

  async dropNamespace(name) {
    if (typeof name !== "string" || name.length === 0) throw invalid("a namespace name is a non-empty string");
    return this.#call("dropNamespace", [name]);
  }

  async clear() {
    await this.#call("clear", []);
  }

  async purgeExpired(opts) {
    opts = plainOptions(opts, "purge options");
    checkKnown(opts, ["limit"], "purge");
    const limit = opts.limit === undefined ? 10_000 : positiveInt(opts.limit, "limit");
    const report = await this.#call("purgeExpired", [limit]);
    return report.removed;
  }

  async flush() {
    return this.#call("flush", []);
  }

  async compact() {
    return this.#call("compact", []);
  }

  async stats() {
    return this.#call("stats", []);
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
    const shared = this.#shared;
    if (shared.closed) return;
    shared.stop();
    try {
      if (shared.tabs !== undefined) await shared.tabs.close();
      else await shared.local?.close();
    } finally {
      // Also when the engine's close failed: a lease kept renewing would lock every other tab out.
      await shared.lease?.release();
    }
  }
}

const OPEN_OPTIONS = ["storage", "defaultTtlMs", "clock", "maintenance", "durability", "onExpire", "openTimeoutMs", "writerTimeoutMs", "resetClock"];

/** How long a tab waits for the writer tab to answer before it takes the role over (ms). */
const DEFAULT_WRITER_TIMEOUT_MS = 5_000;

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
      if (timedOut) engine(() => raw.close()).catch(() => {});
    },
    () => {},
  );
  return Promise.race([opening, timeout]).finally(() => clearTimeout(timer));
}

/** Open (or create) database `name`. See `OpenOptions` in index.d.ts for the options. */
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
  const resetClock = flag(o.resetClock, "resetClock");
  const storage = storageKind(o.storage);
  const openTimeoutMs = o.openTimeoutMs === undefined ? DEFAULT_OPEN_TIMEOUT_MS : positiveInt(o.openTimeoutMs, "openTimeoutMs");
  const writerTimeoutMs = o.writerTimeoutMs === undefined ? DEFAULT_WRITER_TIMEOUT_MS : positiveInt(o.writerTimeoutMs, "writerTimeoutMs");
  await load();
  const shared = new Shared(o);

  /** Open the engine in this context: a LocalEndpoint, with the expire hook installed. */
  async function openEngine() {
    const opening = engine(() =>
      wasm.openDb(name, storage, {
        defaultTtlMs: o.defaultTtlMs ?? undefined,
        durability: o.durability ?? "durable",
        clock: o.clock,
        resetClock,
      }),
    );
    const raw = await (storage === "indexeddb" ? withOpenTimeout(opening, openTimeoutMs) : opening);
    if (o.onExpire) {
      raw.setExpireHook((namespace, key, value, expireAt) => {
        const decoded = decodeValue(value);
        const k = decodeKey(key, decoded.keyWasString);
        try {
          const out = o.onExpire({ key: k, value: decoded.value, expireAt, ...(namespace ? { namespace } : {}) });
          if (out === undefined || out === null) return undefined;
          const [kind, arg] = putArgs({ ttlMs: out.ttlMs, expireAt: out.expireAt });
          return [encodeValue(out.value, decoded.keyWasString), kind, arg];
        } catch (e) {
          // The key expires as if the hook had returned nothing.
          report("onExpire", k, e);
        }
      });
    }
    return new LocalEndpoint(raw, (expired) => shared.publish(expired), () => shared.wantsExpired(), (read) => shared.schedule(read));
  }

  if (storage === "indexeddb" && tabsSupported()) {
    // Every tab and worker of this origin shares the database: one runs the engine, the others
    // forward to it (tabs.js).
    shared.tabs = new Tabs(name, shared, openEngine, writerTimeoutMs);
    try {
      await shared.tabs.start();
    } catch (e) {
      await shared.tabs.close();
      throw asTtlKvError(e);
    }
  } else if (storage === "indexeddb") {
    // No many-tabs protocol here: one context at a time, guarded by a lease (lease.js).
    shared.lease = await takeLease(name);
    try {
      shared.useLocal(await openEngine());
    } catch (e) {
      await shared.lease.release();
      throw e;
    }
  } else {
    shared.useLocal(await openEngine());
  }
  return new Db(shared, null);
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

/** Open (or create) database `name`. See index.d.ts for the options. */
export const open = guarded(openDb);

/**
 * Delete database `name` and all its pages. With IndexedDB it resolves once every connection to
 * the database (in any tab) is closed; an adapter's storage belongs to the app, which deletes it.
 */
export const destroy = guarded(destroyDb);

/**
 * Load the engine from `{ module }` (a compiled WebAssembly.Module), `{ bytes }` or `{ url }`
 * before the first open(), for hosts and bundlers that hand it over; without it, open() loads
 * the engine the way this runtime's entry finds it.
 */
export const init = guarded(initEngine);
