// Type-level test of bindings/js/index.d.ts: it is only type-checked, never run.
//   npx tsc --noEmit --strict --module nodenext --moduleResolution nodenext --target es2022 tests/types/usage.ts
// Every declared API is used in a type-correct way, and the `@ts-expect-error` lines prove that
// misuse is rejected (tsc fails if such a line has no error).

import { open, destroy, init, TtlKvError, CODES } from "../../bindings/js/index.js";
import type {
  BatchOp,
  Db,
  DestroyOptions,
  Entry,
  ExpireCondition,
  ExpireEvent,
  ExpireListener,
  ExpireReplacement,
  GetExOptions,
  JsonValue,
  Key,
  LevelStats,
  ManifestRecord,
  Namespace,
  NamespaceOptions,
  OpenOptions,
  PageCommit,
  PageKindPrefix,
  PageStoreAdapter,
  PurgeOptions,
  PutOptions,
  ScanOptions,
  Snapshot,
  SstStats,
  Stats,
  StorageOption,
  TtlKvErrorCode,
  Value,
} from "../../bindings/js/index.js";

/** A page-store adapter over a Map, as a class (methods are called with the adapter as `this`). */
class MapAdapter implements PageStoreAdapter {
  pages = new Map<string, Uint8Array>();
  manifest: ManifestRecord | null = null;

  async readManifest(): Promise<ManifestRecord | null> {
    return this.manifest;
  }
  async getPage(key: string): Promise<Uint8Array | undefined> {
    return this.pages.get(key);
  }
  async listPages(prefix: PageKindPrefix): Promise<string[]> {
    return [...this.pages.keys()].filter((k) => k.startsWith(prefix));
  }
  async commit({ expectedVersion, manifest, puts, deletes }: PageCommit): Promise<void> {
    if ((this.manifest?.version ?? 0) !== expectedVersion) {
      throw Object.assign(new Error("fenced"), { code: "FENCED" satisfies TtlKvErrorCode });
    }
    for (const k of deletes) this.pages.delete(k);
    for (const [k, bytes] of puts) this.pages.set(k, bytes);
    if (manifest) this.manifest = manifest;
  }
}

/** A synchronous adapter as a plain object literal is fine too. */
const syncAdapter: PageStoreAdapter = {
  readManifest: () => null,
  getPage: (_key) => undefined,
  listPages: (_prefix) => [],
  commit: (_commit) => {},
};

type Session = { user: string; cart: string[] };

async function main(): Promise<void> {
  // --- open / destroy -------------------------------------------------------------------------
  const onExpire = (e: ExpireEvent): ExpireReplacement | undefined =>
    e.key === "renew" ? { value: "renewed", ttlMs: 1_000 } : undefined;
  const options: OpenOptions = {
    storage: "memory",
    defaultTtlMs: 30 * 60_000,
    clock: Date.now,
    maintenance: "manual",
    durability: "relaxed",
    onExpire,
  };
  const db: Db = await open("sessions", options);
  await open("plain");
  await open("nulls", { storage: null, defaultTtlMs: null });
  await open("adapter", { storage: new MapAdapter(), durability: "durable", maintenance: "auto" });
  const storages: StorageOption[] = ["auto", "indexeddb", "memory", syncAdapter];
  const destroyOptions: DestroyOptions = { storage: "memory" };
  await destroy("sessions", destroyOptions);
  await destroy("sessions");
  void storages;

  // --- keys and values ------------------------------------------------------------------------
  const bytesKey: Key = new Uint8Array([0xff]);
  const session: Session = { user: "alice", cart: [] };
  const json: JsonValue = { a: [1, 2.5, null, true], b: { c: "d" } };
  const values: Value[] = ["s", new Uint8Array([1, 2, 3]), 42, null, false, json, session];
  void values;

  // --- put and its options --------------------------------------------------------------------
  const wrote: boolean = await db.put("session:alice", session);
  await db.put(bytesKey, new Uint8Array([1]), { ttlMs: 1_000 });
  await db.put("k", "v", { expireAt: Date.now() + 5_000, ifPresent: true });
  await db.put("k", "v", { keepTtl: true });
  await db.put("k", "v", { noExpiry: true, ifAbsent: true });
  await db.put("k", "v", {});
  const maybeTtl: number | undefined = Math.random() > 0.5 ? 10 : undefined;
  const putOptions: PutOptions = { ttlMs: maybeTtl, ifAbsent: false };
  await db.put("k", [1, 2, 3], putOptions);
  void wrote;

  // --- reads ----------------------------------------------------------------------------------
  const v: Value | undefined = await db.get("k");
  const s: Session | undefined = await db.get<Session>("session:alice");
  const many: (Value | undefined)[] = await db.getMany(["a", bytesKey]);
  const manySessions: (Session | undefined)[] = await db.getMany<Session>(["a"] as const);
  const entry: Entry | undefined = await db.getEntry("k");
  if (entry) {
    const k: Key = entry.key;
    const at: number | null = entry.expireAt;
    void k, at;
  }
  const typedEntry: Entry<Session> | undefined = await db.getEntry<Session>("session:alice");
  const has: boolean = await db.has("k");
  const deleted: boolean = await db.delete("k");
  const ttl: number = await db.ttl("k");
  void v, s, many, manySessions, typedEntry, has, deleted, ttl;

  // --- TTL verbs ------------------------------------------------------------------------------
  const cond: ExpireCondition = { xx: true, gt: true };
  const e1: boolean = await db.expire("k", 100, cond);
  const e2: boolean = await db.expire("k", 100);
  const e3: boolean = await db.expireAt("k", Date.now() + 150, { lt: true });
  const e4: boolean = await db.expireAt("k", Date.now() + 150);
  const p: boolean = await db.persist("k");
  const slid: Session | undefined = await db.getEx<Session>("session:alice", { ttlMs: 30 * 60_000 });
  const getEx: GetExOptions[] = [{ ttlMs: 5 }, { expireAt: 0 }, { persist: true }, {}];
  for (const o of getEx) await db.getEx("k", o);
  const plain: string | undefined = await db.getEx<string>("k"); // no option: a plain get
  await db.getEx("k", {});
  void e1, e2, e3, e4, p, slid, plain;

  // --- scan -----------------------------------------------------------------------------------
  const scan: ScanOptions = { prefix: "session:", start: "session:a", end: bytesKey, limit: 10, reverse: true };
  for await (const e of db.scan(scan)) {
    const key: Key = e.key;
    const value: Value = e.value;
    void key, value;
  }
  for await (const e of db.scan<Session>()) {
    const user: string = e.value.user;
    void user;
  }
  const iterable: AsyncIterable<Entry> = db.scan({});
  void iterable;

  // --- batch ----------------------------------------------------------------------------------
  const ops: BatchOp[] = [
    { type: "put", key: "a", value: 1 },
    { type: "put", key: bytesKey, value: "x", ttlMs: 50, ifAbsent: true },
    { type: "put", key: "b", value: { n: 1 }, keepTtl: true },
    { type: "delete", key: "c" },
  ];
  const batched: void = await db.batch(ops);
  await db.batch([{ type: "delete", key: "z" }] as const);
  void batched;

  // --- snapshot -------------------------------------------------------------------------------
  const snap: Snapshot = await db.snapshot();
  const sv: Value | undefined = await snap.get("k");
  const ss: Session | undefined = await snap.get<Session>("session:alice");
  const se: Entry | undefined = await snap.getEntry("k");
  const sh: boolean = await snap.has("k");
  const st: number = await snap.ttl("k");
  for await (const e of snap.scan({ prefix: "session:" })) void e.expireAt;
  for await (const e of snap.scan<Session>()) void e.value.cart;
  const released: void = snap.release();
  void sv, ss, se, sh, st, released;

  // --- namespaces -----------------------------------------------------------------------------
  const nsOptions: NamespaceOptions = { defaultTtlMs: 1_000, maxTtlMs: 5_000 };
  const otp: Namespace = db.namespace("otp", nsOptions);
  const sameKind: Db = otp;
  await otp.put("code", "123");
  await db.namespace("cache").put("k", "v");
  await db.namespace("cleared", { defaultTtlMs: null, maxTtlMs: null }).get("k");
  const dropped: boolean = await db.dropNamespace("otp");
  const clearResult: void = await db.clear();
  void clearResult;
  await db.namespace("carts").clear();
  await init({ bytes: new Uint8Array(8) });
  await init({ url: new URL("https://example.test/ttlkv.wasm") });
  await init({ module: new WebAssembly.Module(new Uint8Array(8)) });
  void sameKind, dropped;

  // --- maintenance, stats, events, close ------------------------------------------------------
  const purgeOptions: PurgeOptions = { limit: 100 };
  const removed: number = await db.purgeExpired(purgeOptions);
  await db.purgeExpired();
  const flushed: void = await db.flush();
  const compacted: void = await db.compact();
  const stats: Stats = await db.stats();
  const level: LevelStats | undefined = stats.levels[0];
  const sst: SstStats | undefined = level?.ssts[0];
  const sizes: number = stats.memtableBytes + stats.walBytes + stats.cacheBytes + stats.rowCacheBytes;
  const rowCacheReads: number = stats.rowCacheHits + stats.rowCacheMisses;
  const p100: number | undefined = sst?.expiryPercentiles?.[4];
  const minAt: number | null | undefined = sst?.minExpireAt;
  void removed, flushed, compacted, sizes, rowCacheReads, p100, minAt, sst?.id, sst?.bytes, sst?.rows, sst?.maxExpireAt, level?.level;

  const listener: ExpireListener = ({ key, value, expireAt, namespace }) => {
    const ns: string | undefined = namespace;
    void key, value, expireAt, ns;
  };
  db.on("expire", listener);
  db.off("expire", listener);
  const closed: void = await db.close();
  void closed;

  // --- errors ---------------------------------------------------------------------------------
  const codes: readonly TtlKvErrorCode[] = CODES;
  const first: "INVALID_ARGUMENT" = CODES[0];
  void codes, first;
  const made = new TtlKvError("STORAGE", "write failed", { cause: new Error("disk") });
  const made2 = new TtlKvError("CLOSED", "closed");
  const name: "TtlKvError" = made.name;
  const cause: unknown = made.cause;
  const isError: Error = made2;
  void name, cause, isError;
  try {
    await db.get("k");
  } catch (e: unknown) {
    if (e instanceof TtlKvError) {
      const code: TtlKvErrorCode = e.code;
      const message: string = e.message;
      switch (e.code) {
        case "CLOSED":
        case "FENCED":
        case "QUOTA_EXCEEDED":
          break;
        default:
          void code, message;
      }
    }
  }

  // --- misuse is rejected ---------------------------------------------------------------------
  // @ts-expect-error a number is not a key
  await db.put(42, "v");
  // @ts-expect-error a number is not a key (reads too)
  await db.get(1);
  // @ts-expect-error unknown durability
  await open("x", { durability: "eventual" });
  // @ts-expect-error unknown maintenance mode
  await open("x", { maintenance: "sometimes" });
  // @ts-expect-error unknown storage kind
  await open("x", { storage: "localStorage" });
  // @ts-expect-error unknown open option
  await open("x", { cacheSize: 10 });
  // @ts-expect-error the name is required
  await open();
  // @ts-expect-error an adapter needs all four functions
  await open("x", { storage: { readManifest: async () => null } });
  // @ts-expect-error destroy cannot delete an adapter's storage
  await destroy("x", { storage: new MapAdapter() });
  // @ts-expect-error undefined is not a value
  await db.put("k", undefined);
  // @ts-expect-error a Date is not JSON-compatible
  await db.put("k", new Date());
  // @ts-expect-error a function is not a value
  await db.put("k", () => 1);
  // @ts-expect-error at most one of ttlMs, expireAt, keepTtl, noExpiry
  await db.put("k", "v", { ttlMs: 10, noExpiry: true });
  // @ts-expect-error ttlMs is a number
  await db.put("k", "v", { ttlMs: "10" });
  // @ts-expect-error unknown put option
  await db.put("k", "v", { bogus: 1 });
  // @ts-expect-error getEx takes only one of them
  await db.getEx("k", { ttlMs: 1, persist: true });
  // @ts-expect-error persist must be true
  await db.getEx("k", { persist: false });
  // @ts-expect-error unknown expire condition
  await db.expire("k", 10, { ifAbsent: true });
  // @ts-expect-error unknown batch op type
  await db.batch([{ type: "merge", key: "k", value: 1 }]);
  // @ts-expect-error a delete op takes no value
  await db.batch([{ type: "delete", key: "k", value: 1 }]);
  // @ts-expect-error unknown scan option
  db.scan({ from: "a" });
  // @ts-expect-error only "expire" events exist
  db.on("change", listener);
  // @ts-expect-error unknown error code
  new TtlKvError("NOPE", "x");
  // @ts-expect-error codes are read-only
  CODES.push("NOPE");
  // @ts-expect-error Snapshot has no writes
  await snap.put("k", "v");
  // @ts-expect-error a namespace name is a string
  db.namespace(7);
  // @ts-expect-error init takes one source
  await init({ bytes: new Uint8Array(8), url: "x.wasm" });
  // @ts-expect-error clear takes no argument
  await db.clear("k");
  // @ts-expect-error stats are read through a promise
  void db.stats().memtableBytes;
}

void main();
