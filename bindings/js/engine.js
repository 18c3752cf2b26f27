// The engine as the JS entry talks to it: by method name and plain arguments (encoded keys and
// values, numbers), so that the same call can run here or be forwarded to the tab that holds the
// writer role (tabs.js). `LocalEndpoint` runs calls on this context's WebAssembly engine; it owns
// the namespace and snapshot handles and fires expire events for purges.
import { TtlKvError, CODES } from "./errors.js";

/** Run an engine call, turning whatever it throws into a TtlKvError. */
export async function engine(call) {
  try {
    checkNotTrapped();
    return await call();
  } catch (e) {
    throw asTtlKvError(e);
  }
}

/**
 * The WebAssembly trap that stopped this context's engine, if one did (it traps when it runs out
 * of memory). A trap leaves the instance part-way through a step: its state is not to be trusted
 * and its executor not to be entered again, so every later call fails STORAGE at once instead of
 * never settling.
 */
let trap;

/** Throws the STORAGE error of an engine that trapped (see `trap`). */
function checkNotTrapped() {
  if (trap) throw trapped();
}

const trapped = () => new TtlKvError("STORAGE", `the engine trapped (${trap.message}) and runs no more calls`, { cause: trap });

/**
 * A failure of an engine call as a TtlKvError. The engine's own errors already are one; an error
 * with one of our codes (from a tab's answer) keeps its code; a trap stops the engine (`trap`);
 * anything else is a STORAGE failure with the original as its cause: arguments were checked
 * before the call.
 */
export function asTtlKvError(e) {
  if (e instanceof TtlKvError) return e;
  if (e instanceof WebAssembly.RuntimeError) {
    trap ??= e;
    return trapped();
  }
  if (e instanceof Error && typeof e.code === "string" && CODES.includes(e.code)) {
    return new TtlKvError(e.code, e.message, { cause: e.cause });
  }
  return new TtlKvError("STORAGE", String(e && e.message ? e.message : e), { cause: e });
}

// The kinds of argument a call passes the engine (the engine checks each number's range itself).
const BYTES = (x) => x instanceof Uint8Array;
const NUMBER = (x) => typeof x === "number";
const FLAG = (x) => typeof x === "boolean";
const NAME = (x) => typeof x === "string";
const NUMBER_OR_NONE = (x) => x === null || typeof x === "number";
const BOUND = (x) => x === undefined || x instanceof Uint8Array;
const OPS = (x) => x instanceof Float64Array;
const KEY = [BYTES];
const NONE = [];

/**
 * Engine methods a call may name, each with the kinds of the arguments `db.js` passes it
 * (anything else is refused, also when it comes from a tab). A call another tab forwards is held
 * to them (`forwardedCallError`): the engine's bindings would read a string where bytes belong
 * as zeros, a number out of a byte's range modulo 256.
 */
const DB_METHODS = new Map([
  ["put", [BYTES, BYTES, NUMBER, NUMBER, NUMBER]],
  ["get", KEY], ["getEntry", KEY], ["has", KEY], ["delete", KEY], ["ttl", KEY], ["persist", KEY],
  ["expire", [BYTES, NUMBER, NUMBER]], ["expireAt", [BYTES, NUMBER, NUMBER]], ["getEx", [BYTES, NUMBER, NUMBER]],
  ["batch", [BYTES, OPS]], ["dropNamespace", [NAME]], ["purgeExpired", [NUMBER]],
  ["snapshot", NONE], ["clear", NONE], ["flush", NONE], ["compact", NONE], ["stats", NONE], ["maintenance", NONE],
]);
/** The same for a snapshot's methods (`snapshot.js`). */
const SNAPSHOT_METHODS = new Map([
  ["get", KEY], ["getEntry", KEY], ["has", KEY], ["ttl", KEY], ["scan", [BOUND, BOUND, BOUND, NUMBER, FLAG]],
]);
/** A namespace as `Db.namespace` names it: `[name, hasOptions, defaultTtlMs, maxTtlMs, handleId]`. */
const NAMESPACE = [NAME, FLAG, NUMBER_OR_NONE, NUMBER_OR_NONE, NAME];

const fits = (values, kinds) => Array.isArray(values) && values.length === kinds.length && kinds.every((kind, i) => kind(values[i]));

/**
 * Why call `message` (`{ ns, method, args }`, or `{ snapshot, method, args }`), forwarded by
 * another tab, cannot run here (an INVALID_ARGUMENT TtlKvError), or `undefined` when it can: its
 * method must be one this context's own calls make, with arguments of the kinds they pass.
 */
export function forwardedCallError(message) {
  const { ns, snapshot, method, args } = message;
  const methods = snapshot === undefined ? DB_METHODS : SNAPSHOT_METHODS;
  const kinds = typeof method === "string" ? methods.get(method) : undefined;
  if (kinds === undefined) return new TtlKvError("INVALID_ARGUMENT", `unknown method ${String(method)}`);
  const keyspace = snapshot === undefined ? ns === null || fits(ns, NAMESPACE) : NAME(snapshot);
  if (!keyspace || !fits(args, kinds)) return new TtlKvError("INVALID_ARGUMENT", `a forwarded ${method} call's arguments are not what ttlkv passes`);
  return undefined;
}
/**
 * Writes that record their outcome under the call id another tab gives them (the engine writes
 * the record in the same batch as the effect), so that a call resent after a handover is answered
 * from its record instead of running twice.
 */
const RECORDED = new Set(["put", "delete", "expire", "expireAt", "persist", "getEx", "batch"]);
/** Calls that change nothing the maintenance schedule depends on. */
const READS = new Set(["get", "getEntry", "has", "ttl"]);

/**
 * Calls on this context's engine. `ns` names the keyspace: `null` for the default one, or
 * `[name, hasOptions, defaultTtlMs, maxTtlMs, handleId]` (null = none) as `Db.namespace` gives
 * it. Each namespace handle has its own engine handle, so a handle made before `dropNamespace`
 * stays closed while a later `namespace()` of the same name opens the new keyspace; it is kept
 * until the namespace handle is garbage-collected (`forget`).
 */
export class LocalEndpoint {
  /**
   * @param root the engine's root handle (WasmDb)
   * @param publish called with the `expired` list of every purge this endpoint runs
   * @param wantsExpired whether anyone listens for expire events (else purges leave the list
   *   empty: building it costs a fifth of a large purge)
   * @param called called after each call that succeeded, with whether it was a read (the
   *   automatic maintenance timer is re-armed there); when it gives back a Promise (a step that
   *   was overdue started), the call's answer waits for it
   */
  constructor(root, publish, wantsExpired, called) {
    this.root = root;
    this.publish = publish;
    this.wantsExpired = wantsExpired;
    this.called = called;
    this.namespaces = new Map();
    this.snapshots = new Map();
    // Snapshot ids are unique across writers (a random prefix per endpoint): after a handover a
    // tab's ids from the old writer must find nothing here (CLOSED), not another tab's snapshot.
    this.snapshotPrefix = `${Math.random().toString(36).slice(2)}.`;
    this.nextSnapshot = 1;
    // Forwarded writes still running here, by call id (a resend waits for the first run).
    this.running = new Map();
  }

  /**
   * A call in the default keyspace without a call id reaches the engine before `call` returns,
   * and the engine copies its arguments into WebAssembly memory then: its caller may pass views
   * of memory it reuses afterwards (`encodeValueInPlace`). A namespace's call waits for its
   * handle, a forwarded one may wait for an earlier run, and other endpoints send or queue theirs.
   */
  get runsAtOnce() {
    return true;
  }

  /** Whether the engine stopped at a trap (`trap`): nothing may enter it, not even a timer. */
  get stopped() {
    return trap !== undefined;
  }

  /** The engine handle of namespace handle `ns` (opened by its first call), by its handle id. */
  handle(ns) {
    if (ns === null) return Promise.resolve(this.root);
    const key = ns[4];
    let handle = this.namespaces.get(key);
    if (handle === undefined) {
      handle = engine(() => this.root.namespace(ns[0], ns[1], ns[2] ?? NaN, ns[3] ?? NaN));
      this.namespaces.set(key, handle);
      handle.catch(() => this.namespaces.delete(key));
    }
    return handle;
  }

  /** Namespace handle `id` was garbage-collected: drop its engine handle (if it has one here). */
  forget(id) {
    this.namespaces.delete(id);
  }

  /**
   * Run `method` with `args` in keyspace `ns`; a snapshot comes back as its id. The answer is
   * given as it is when the engine has it at once (memory storage, a cached page: no Promise,
   * no task queued), else as a Promise; a failure is thrown or rejected, as a TtlKvError.
   */
  call(ns, method, args, callId, again) {
    if (!DB_METHODS.has(method)) throw new TtlKvError("INVALID_ARGUMENT", `unknown method ${String(method)}`);
    if (callId !== undefined && RECORDED.has(method)) return this.once(ns, method, args, callId, again);
    const result = ns === null && method !== "snapshot" ? this.run(this.root, method, args) : this.callIn(ns, method, args);
    // Here, where this context's calls and those other tabs forward meet: a write from any tab may
    // bring the next maintenance step (commit, flush, purge) forward.
    const read = READS.has(method);
    if (result instanceof Promise) return result.then((r) => this.settled(read, r));
    return this.settled(read, result);
  }

  /**
   * `call(null, "get", [key])`, the hottest call, without the dispatch every other call goes
   * through: the default keyspace's `get` on the root handle, its answer as `call` gives it.
   * `key` is its bytes, or a string `passedAsString` lets through (checked by its caller, `Db.get`;
   * the engine checks every key again, with the same codes).
   */
  get(key) {
    let result;
    try {
      checkNotTrapped();
      result = typeof key === "string" ? this.root.getStr(key) : this.root.get(key);
    } catch (e) {
      throw asTtlKvError(e);
    }
    if (result instanceof Promise) {
      return result.then((r) => this.settled(true, r), (e) => Promise.reject(asTtlKvError(e)));
    }
    return this.settled(true, result);
  }

  /** Answer `r` once a maintenance step that was overdue and starts now is done (Shared.schedule). */
  settled(read, r) {
    const step = this.called(read);
    return step ? step.then(() => r) : r;
  }

  /**
   * A write another tab forwarded under `id`: it runs once, whatever the number of times it is
   * sent. The engine records its outcome under `id` in the same batch as its effect; a call sent
   * `again` (after a handover: the writer that got it first may have applied it and gone away
   * before answering) is answered from that record, or waits for the run still going here.
   */
  once(ns, method, args, id, again) {
    let answer = this.running.get(id);
    if (answer !== undefined) return answer;
    const run = async () => {
      const recording = (await this.handle(ns)).recording(id);
      try {
        const result = await this.run(recording, method, args);
        this.called(false);
        return result;
      } finally {
        recording.free();
      }
    };
    answer = again
      ? engine(() => this.root.recordedCall(id)).then((record) =>
          record === undefined ? run() : method === "getEx" ? record[1] : method === "batch" || record[0],
        )
      : engine(run);
    this.running.set(id, answer);
    const done = () => this.running.delete(id);
    answer.then(done, done);
    return answer;
  }

  async callIn(ns, method, args) {
    const handle = await this.handle(ns);
    if (method !== "snapshot") return this.run(handle, method, args);
    const snapshot = await engine(async () => handle.snapshot());
    const id = this.snapshotPrefix + this.nextSnapshot++;
    this.snapshots.set(id, snapshot);
    return id;
  }

  /**
   * `method` on engine handle `handle` (see `call`). A write that finds storage full has already
   * been tried again by the engine, after reclaiming what expired data holds (its expire events
   * come through the reclaim listener, see `open.js`).
   */
  run(handle, method, args) {
    if (method === "purgeExpired" || method === "maintenance" || method === "clear") args = [...args, this.wantsExpired()];
    let result;
    try {
      checkNotTrapped();
      result = handle[method](...args);
    } catch (e) {
      throw asTtlKvError(e);
    }
    if (result instanceof Promise) {
      return result.then((r) => this.answer(method, r), (e) => Promise.reject(asTtlKvError(e)));
    }
    return this.answer(method, result);
  }

  /** A call's answer, once its expire events are published; `stats` with the handles held here. */
  answer(method, result) {
    if (method === "purgeExpired" || method === "clear") this.publish(result.expired);
    if (method === "maintenance") this.publish(result.purge.expired);
    if (method === "stats") Object.assign(result, { snapshots: this.snapshots.size, namespaceHandles: this.namespaces.size });
    return result;
  }

  /** Run `method` on snapshot `id`. */
  callSnapshot(id, method, args) {
    const snapshot = this.snapshots.get(id);
    if (snapshot === undefined) return Promise.reject(new TtlKvError("CLOSED", "the snapshot was released"));
    if (!SNAPSHOT_METHODS.has(method)) return Promise.reject(new TtlKvError("INVALID_ARGUMENT", `unknown method ${String(method)}`));
    return engine(async () => snapshot[method](...args));
  }

  release(id) {
    const snapshot = this.snapshots.get(id);
    this.snapshots.delete(id);
    if (!trap) snapshot?.release();
  }

  close() {
    if (!trap) for (const snapshot of this.snapshots.values()) snapshot.release();
    this.snapshots.clear();
    return engine(() => this.root.close());
  }
}
