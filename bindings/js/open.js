// Opening and deleting a database (openDb, destroyDb): the open options, which storage is meant
// (storageKind), the IndexedDB open timeout, and where the engine runs — in this context, under a
// lease (lease.js), or shared by every tab of the origin (tabs.js).

import { TtlKvError } from "./errors.js";
import { encodeValue, decodeKey, decodeValue } from "./codec.js";
import { engine, asTtlKvError, LocalEndpoint } from "./engine.js";
import { Tabs, tabsSupported, announceDeleted } from "./tabs.js";
import { takeLease } from "./lease.js";
import * as wasm from "./pkg/ttlkv_web.js";
import { invalid, readOptions, checkName, positiveInt, checkedTtl, flag, putArgs } from "./options.js";
import { load } from "./load.js";
import { timerDelay } from "./timer.js";
import { Shared, report } from "./shared.js";
import { Db } from "./db.js";

const OPEN_OPTIONS = ["storage", "defaultTtlMs", "clock", "maintenance", "durability", "onExpire", "openTimeoutMs", "writerTimeoutMs", "resetClock"];
/** What an `onExpire` hook's replacement may hold (`ExpireReplacement` in index.d.ts). */
const REPLACEMENT_FIELDS = ["value", "ttlMs", "expireAt"];

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
    }, timerDelay(ms));
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
export async function openDb(name, options) {
  checkName(name, "database");
  // Read once: what is checked here is what the engine and the hooks get, for good.
  const o = readOptions(options, OPEN_OPTIONS, "open");
  if (o.defaultTtlMs != null) checkedTtl(o.defaultTtlMs, "defaultTtlMs");
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
          // Called as a method of the app's own options object, as `options.onExpire(…)` would be.
          const out = Reflect.apply(o.onExpire, options, [{ key: k, value: decoded.value, expireAt, ...(namespace ? { namespace } : {}) }]);
          if (out === undefined || out === null) return undefined;
          // Each field read once; one the replacement does not know (a misspelled `ttl`) would
          // otherwise be dropped and the key rewritten with the default TTL.
          const replacement = readOptions(out, REPLACEMENT_FIELDS, "onExpire replacement");
          const [kind, arg] = putArgs({ ttlMs: replacement.ttlMs, expireAt: replacement.expireAt });
          return [encodeValue(replacement.value, decoded.keyWasString), kind, arg];
        } catch (e) {
          // The key expires as if the hook had returned nothing.
          report("onExpire", k, e);
        }
      });
    }
    // A write that finds storage full makes the engine reclaim what expired data holds: the keys
    // its purges remove fire their events like any purge's.
    raw.setReclaimListener((report) => shared.publish(report.expired));
    return new LocalEndpoint(raw, (expired) => shared.publish(expired), () => shared.wantsExpired(), (read) => shared.schedule(read));
  }

  if (storage === "indexeddb" && tabsSupported()) {
    // Every tab and worker of this origin shares the database: one runs the engine, the others
    // forward to it (tabs.js).
    shared.tabs = new Tabs(name, shared, openEngine, writerTimeoutMs);
    try {
      await shared.tabs.start();
    } catch (e) {
      // The start's error is the one to report, not a close's after it.
      await shared.tabs.close().catch(() => {});
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
export async function destroyDb(name, options) {
  checkName(name, "database");
  const o = readOptions(options, ["storage"], "destroy");
  const storage = storageKind(o.storage);
  if (typeof storage === "object") {
    throw new TtlKvError("UNSUPPORTED", "destroy() cannot delete an adapter's storage: the app that supplies the adapter owns it");
  }
  await load();
  if (storage === "indexeddb") {
    await engine(() => wasm.destroyIndexedDb(name));
    if (tabsSupported()) announceDeleted(name);
  } else await engine(async () => wasm.destroyMemory(name));
}
