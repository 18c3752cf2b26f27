// `Db`: an open database, or one namespace of it — the object open() gives the app. Each method
// checks and encodes its arguments and makes its engine call through the database's endpoint
// (`Shared.endpoint`); these are the per-call hot paths.

import { TtlKvError } from "./errors.js";
import { encodeKey, encodeKeyInPlace, encodeValue, encodeValueInPlace, passedAsString, PackedBatch } from "./codec.js";
import { invalid, readOptions, givenOf, checkName, checkKnown, positiveInt, checkedTtl, tooLong, integer, putArgs, batchPutArgs, conditionBits, scanArgs } from "./options.js";
import { valueOf, entryOf, reaper, scanPages, Snapshot } from "./snapshot.js";
import { guardMethods, guardedPromise, rejectAsInputError } from "./guard.js";
import { TTL_AFTER_MS, TTL_AT, TTL_NO_EXPIRY, MAX_JS_TTL_MS } from "./protocol.js";

let nextHandle = 0;

/** An open database, or one namespace of it. */
export class Db {
  #ns;
  #shared;
  constructor(shared, ns) {
    this.#shared = shared;
    this.#ns = ns;
  }

  /** The answer of an engine call, or a Promise of it; throws as the endpoint's `call` does. */
  #call(method, args) {
    this.#checkOpen();
    return this.#shared.endpoint.call(this.#ns, method, args);
  }

  /** Throws CLOSED once the database is closed (also for a call that asks the engine nothing). */
  #checkOpen() {
    if (this.#shared.closed) throw new TtlKvError("CLOSED", "the database is closed");
  }

  /**
   * This context's engine, where a call in this keyspace reaches it before `#call` returns (see
   * `LocalEndpoint.runsAtOnce`: the default keyspace, the database open); else `undefined`.
   */
  #atOnce() {
    const shared = this.#shared;
    const endpoint = shared.endpoint;
    return this.#ns === null && !shared.closed && endpoint?.runsAtOnce === true ? endpoint : undefined;
  }

  /**
   * Whether a call with `key` may hand over what it encodes in the scratch space in place: where
   * the call reaches this context's engine before `#call` returns (`#atOnce`), with a string key
   * (a key of the app's own Uint8Array could run its code, a getter, while the engine's glue
   * copies the arguments): nothing can encode into the scratch space in between.
   */
  #inPlace(key) {
    return typeof key === "string" && this.#atOnce() !== undefined;
  }

  put(key, value, opts) {
    return (async () => {
      const k = encodeKey(key);
      // The options first: reading them can run the app's code (a getter), which could encode
      // another value into the scratch space the value below may be handed over in.
      const [kind, arg, cond] = putArgs(opts);
      // The key is a copy: the value may take the scratch space after it (`#inPlace`).
      const v = (this.#inPlace(key) ? encodeValueInPlace : encodeValue)(value, typeof key === "string");
      return this.#call("put", [k, v, kind, arg, cond]);
    })();
  }

  /**
   * The hottest call, so it guards itself (see `guardMethods`): an answer the engine has at once
   * is settled here, with no async function's extra turn and no second Promise from the guard.
   * In the default keyspace on this context's engine it skips the endpoint's dispatch
   * (`LocalEndpoint.get`), its key handed over in place (`#inPlace`).
   */
  get(key) {
    try {
      const local = this.#atOnce();
      const raw = local === undefined
        ? this.#call("get", [encodeKey(key)])
        : local.get(passedAsString(key) ? key : (typeof key === "string" ? encodeKeyInPlace : encodeKey)(key));
      if (raw instanceof Promise) return guardedPromise(raw.then(valueOf));
      return Promise.resolve(valueOf(raw));
    } catch (e) {
      return rejectAsInputError(e);
    }
  }

  async getMany(keys) {
    if (!Array.isArray(keys)) throw invalid("getMany takes an array of keys");
    this.#checkOpen();
    // Array.from visits a hole as `undefined`, which is no key (`map` would skip it).
    const encoded = Array.from(keys, (k) => encodeKey(k));
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
    // Any integer up to MAX_JS_TTL_MS: ms <= 0 deletes the key, as PEXPIRE does (the engine decides).
    const ms = integer(ttlMs, "ttlMs");
    if (ms > MAX_JS_TTL_MS) tooLong("ttlMs");
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
    const o = readOptions(opts, ["ttlMs", "expireAt", "persist"], "getEx");
    const given = givenOf(o);
    if (given.length > 1) throw invalid("getEx takes at most one of ttlMs, expireAt, persist");
    // No option: a plain get, which changes nothing.
    if (given.length === 0) return valueOf(await this.#call("get", [k]));
    let kind;
    let arg = 0;
    if (o.ttlMs !== undefined) [kind, arg] = [TTL_AFTER_MS, checkedTtl(o.ttlMs, "ttlMs")];
    else if (o.expireAt !== undefined) [kind, arg] = [TTL_AT, integer(o.expireAt, "expireAt")];
    else if (o.persist === true) kind = TTL_NO_EXPIRY;
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
    let answer;
    try {
      for (const op of ops) {
        if (op === null || typeof op !== "object") throw invalid("a batch operation must be an object");
        const type = op.type;
        packed.key(op.key);
        if (type === "put") {
          const [kind, arg, cond] = batchPutArgs(op);
          packed.put(op.value, kind, arg, cond);
        } else if (type === "delete") {
          checkKnown(op, ["type", "key"], "delete");
          packed.delete();
        } else {
          throw invalid(`unknown batch operation type ${JSON.stringify(type)}`);
        }
      }
      // Asked after the ops are read (their getters may have closed the database): in place only
      // where the engine copies the batch before `#call` returns.
      answer = this.#call("batch", packed.finish(this.#atOnce() !== undefined));
    } finally {
      packed.release();
    }
    const ok = await answer;
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
    checkName(name, "namespace");
    const o = readOptions(opts, ["defaultTtlMs", "maxTtlMs"], "namespace");
    const ttl = (x, what) => (x === undefined || x === null ? null : checkedTtl(x, what));
    // null, not NaN, for "none": the spec crosses tabs through structured clone and JSON.
    const handleId = `${Math.random().toString(36).slice(2)}:${nextHandle++}`;
    const shared = this.#shared;
    const handle = new Db(shared, [name, opts !== undefined, ttl(o.defaultTtlMs, "defaultTtlMs"), ttl(o.maxTtlMs, "maxTtlMs"), handleId]);
    // Its engine handle (opened by its first call, on whichever context is the writer) goes with it.
    reaper.register(handle, () => shared.endpoint.forget(handleId));
    return handle;
  }

  async dropNamespace(name) {
    checkName(name, "namespace");
    return this.#call("dropNamespace", [name]);
  }

  async clear() {
    await this.#call("clear", []);
  }

  async purgeExpired(opts) {
    const { limit: given } = readOptions(opts, ["limit"], "purge");
    const limit = given === undefined ? 10_000 : positiveInt(given, "limit");
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
    // A close beside one under way (or after it) waits for it and shares its outcome.
    if (shared.closed) return shared.closing;
    shared.stop();
    return (shared.closing = (async () => {
      try {
        if (shared.tabs !== undefined) await shared.tabs.close();
        else await shared.local?.close();
      } finally {
        // Also when the engine's close failed: a lease kept renewing would lock every other tab out.
        await shared.lease?.release();
      }
    })());
  }
}

guardMethods(Db, ["get"]);
