// The checks the end-to-end test runs in a page or a worker, through `import ... from "ttlkv"`
// exactly as an app would. Each returns plain data the test compares.
import { open, destroy, TtlKvError } from "ttlkv";

/** Write typed values, a TTL, a batch that reaches an SST, and a delete; leave the Db open. */
export async function write(name) {
  const db = await open(name);
  await db.put("user:ada", { name: "Ada", roles: ["admin"] }, { ttlMs: 3_600_000 });
  await db.put("bytes", new Uint8Array([1, 2, 3]));
  await db.put("text", "hello");
  await db.put("short", "gone soon", { ttlMs: 1 });
  const ops = [];
  for (let i = 0; i < 2000; i++) ops.push({ type: "put", key: `k:${String(i).padStart(5, "0")}`, value: `v${i}` });
  await db.batch(ops);
  await db.flush();
  await db.put("after-flush", 42);
  await db.delete("k:00000");
  // No close(): every write above was acknowledged durable, so a reload must find it.
  return { stored: 2000 + 5 };
}

/** Read back what `write` left, after a reload. */
export async function read(name) {
  const db = await open(name);
  let count = 0;
  for await (const _ of db.scan({ prefix: "k:" })) count++;
  const ttl = await db.ttl("user:ada");
  const out = {
    user: await db.get("user:ada"),
    bytes: Array.from((await db.get("bytes")) ?? []),
    bytesType: (await db.get("bytes"))?.constructor?.name,
    text: await db.get("text"),
    afterFlush: await db.get("after-flush"),
    deleted: await db.get("k:00000"),
    short: await db.get("short"),
    ttlInRange: ttl > 3_000_000 && ttl <= 3_600_000,
    count,
    levels: (await db.stats()).levels.length,
  };
  await db.close();
  return out;
}

/** Fill a small quota: expect QUOTA_EXCEEDED, then reads (and the acknowledged writes) intact. */
export async function fillQuota(name) {
  const db = await open(name, { maintenance: "manual" });
  // Random bytes: IndexedDB compresses what it stores, and quota counts what lands on disk.
  const values = [];
  let acknowledged = 0;
  let error;
  for (let i = 0; i < 400; i++) {
    const value = crypto.getRandomValues(new Uint8Array(64 * 1024));
    try {
      await db.put(`big:${String(i).padStart(4, "0")}`, value);
      values.push(value);
      acknowledged++;
    } catch (e) {
      error = e;
      break;
    }
  }
  let allReadable = true;
  for (let i = 0; i < acknowledged; i++) {
    const got = await db.get(`big:${String(i).padStart(4, "0")}`);
    allReadable &&= got instanceof Uint8Array && got.length === values[i].length && got.every((b, j) => b === values[i][j]);
  }
  await db.close().catch(() => {});
  return {
    acknowledged,
    code: error?.code,
    isTtlKvError: error instanceof TtlKvError,
    causeName: error?.cause?.name,
    allReadable,
  };
}

/** `n` random bytes (IndexedDB compresses what it stores, and quota counts what lands on disk). */
function randomBytes(n) {
  const bytes = new Uint8Array(n);
  for (let at = 0; at < n; at += 65_536) crypto.getRandomValues(bytes.subarray(at, Math.min(n, at + 65_536)));
  return bytes;
}

/**
 * Another database, `<name>-filler`, filled with puts of 64 KiB until the origin's quota is full
 * (400 at most): `{ filler, filled }`, the open filler and how many puts went in.
 */
async function fillQuotaBeside(name) {
  const filler = await open(`${name}-filler`, { maintenance: "manual" });
  let filled = 0;
  try {
    for (; filled < 400; filled++) await filler.put(`f${filled}`, randomBytes(64 * 1024));
  } catch {
    // The quota is full.
  }
  return { filler, filled };
}

/**
 * A value of 900 KiB put, the origin's quota then filled by another database, and a flush whose
 * one commit (the value's data page first, then its SST's metadata and the manifest) cannot fit:
 * the flush's outcome, and whether the value reads back intact from a fresh open once the other
 * database is gone. Firefox fails a put that big at its own request, and a transaction already
 * told to `commit()` then lands its other requests: a commit must not be told so early.
 */
export async function flushOverQuota(name) {
  await destroy(`${name}-filler`);
  const big = randomBytes(900 * 1024);
  const db = await open(name, { maintenance: "manual" });
  await db.put("big", big);
  const { filler, filled } = await fillQuotaBeside(name);
  let flush = "flushed";
  try {
    await db.flush();
  } catch (e) {
    flush = e.code;
  }
  await db.close().catch(() => {});
  await filler.close().catch(() => {});
  await destroy(`${name}-filler`);
  try {
    const again = await open(name, { maintenance: "manual" });
    const got = await again.get("big");
    await again.close();
    const intact = got instanceof Uint8Array && got.length === big.length && got.every((b, j) => b === big[j]);
    return { filled, flush, reopened: intact ? "intact" : got === undefined ? "missing" : "changed" };
  } catch (e) {
    return { filled, flush, reopened: `${e.code}: ${e.message}` };
  }
}

/**
 * A small value put, the origin's quota then filled by another database, and a durable put of
 * 900 KiB that cannot fit: its outcome, and what a fresh open reads once the other database is
 * gone. The put is one commit of one write (its WAL page), which the engine tells to `commit()` as
 * soon as its check passes; Firefox fails a put that big at its own request and then completes
 * the transaction: the put must still fail, with nothing of it landed.
 */
export async function bigPutOverQuota(name) {
  await destroy(`${name}-filler`);
  const db = await open(name, { maintenance: "manual" });
  await db.put("small", "kept");
  const { filler, filled } = await fillQuotaBeside(name);
  let put = "acknowledged";
  try {
    await db.put("big", randomBytes(900 * 1024));
  } catch (e) {
    put = e.code;
  }
  await db.close().catch(() => {});
  await filler.close().catch(() => {});
  await destroy(`${name}-filler`);
  try {
    const again = await open(name, { maintenance: "manual" });
    const big = await again.get("big");
    const small = await again.get("small");
    await again.close();
    return { filled, put, big: big === undefined ? "absent" : `${big.length} bytes`, small };
  } catch (e) {
    return { filled, put, reopened: `${e.code}: ${e.message}` };
  }
}

/** After a reload: every acknowledged write of `fillQuota` is there, and nothing after it. */
export async function countBig(name) {
  const db = await open(name, { maintenance: "manual" });
  let count = 0;
  for await (const _ of db.scan({ prefix: "big:" })) count++;
  await db.close();
  return count;
}

export async function remove(name) {
  await destroy(name);
  return true;
}

/** Delete the database from under an open Db, as another tab or "clear site data" would. */
export async function takenAway(name) {
  await destroy(name);
  const db = await open(name);
  await db.put("k", "before");
  const deleted = await new Promise((resolve) => {
    const request = indexedDB.deleteDatabase(`ttlkv:${name}`);
    request.onsuccess = () => resolve("deleted");
    request.onerror = () => resolve(`error ${request.error?.name}`);
    request.onblocked = () => resolve("blocked");
  });
  const afterwards = await db.put("k", "after").then(
    () => "resolved",
    (e) => `${e.code}: ${e.message}`,
  );
  const reads = await db.get("k").then(
    (v) => v,
    (e) => e.code,
  );
  await db.close().catch(() => {});
  const fresh = await open(name);
  const value = await fresh.get("k");
  await fresh.close();
  return { deleted, afterwards, reads, valueAfterReopen: value ?? null };
}

/** Open while a delete of the database is blocked by a connection that does not let go. */
export async function blockedOpen(name) {
  await destroy(name);
  const holder = await new Promise((resolve, reject) => {
    const request = indexedDB.open(`ttlkv:${name}`, 1);
    request.onsuccess = () => resolve(request.result); // no onversionchange: it never lets go
    request.onerror = () => reject(request.error);
  });
  const pendingDelete = new Promise((resolve) => {
    const request = indexedDB.deleteDatabase(`ttlkv:${name}`);
    request.onsuccess = () => resolve("deleted");
  });
  const started = performance.now();
  const outcome = await open(name, { openTimeoutMs: 300 }).then(
    (db) => db.close().then(() => "opened"),
    (e) => `${e.code}: ${e.message}`,
  );
  const waitedMs = Math.round(performance.now() - started);
  holder.close();
  return { outcome, waitedMs, afterRelease: await pendingDelete };
}

// ---- Many tabs: each page keeps one Db open in `window.shared` and is driven step by step. ----

/** Open `name` in this tab and keep it, with a fake clock this page controls and an event log. */
export async function openShared(name, options = {}) {
  window.fakeNow = window.fakeNow ?? 1_767_225_600_000;
  window.events = [];
  window.shared = await open(name, { clock: () => window.fakeNow, maintenance: "manual", ...options });
  window.shared.on("expire", (e) => window.events.push(e.key));
  return true;
}

/** A second Db of database `name` in this page, beside the kept one (`window.second`). */
export async function openSecond(name) {
  window.second = await open(name, { clock: () => window.fakeNow, maintenance: "manual" });
  return true;
}

/** Run `db[method](...args)` on the kept Db; an error comes back as `{ code }`. */
export async function onShared(method, ...args) {
  try {
    return { value: await window.shared[method](...args) };
  } catch (e) {
    return { code: e?.code ?? String(e) };
  }
}

/** Every entry of the kept Db, as [key, value] pairs. */
export async function allShared(prefix) {
  const out = [];
  for await (const { key, value } of window.shared.scan({ prefix })) out.push([key, value]);
  return out;
}

/**
 * Write batches without end, flushing and compacting as it goes, and list each acknowledged batch
 * (`window.acknowledgedRounds`) the moment it resolves; the test reads that list, then kills the
 * browser in the middle of the writes.
 */
export async function writeUntilKilled(name) {
  const db = await open(name, { maintenance: "manual" });
  for (let round = 0; ; round++) {
    const ops = [];
    for (let i = 0; i < 200; i++) {
      ops.push({ type: "put", key: `r${String(round).padStart(5, "0")}:${String(i).padStart(3, "0")}`, value: "v".repeat(200), ttlMs: i % 2 ? 3_600_000 : undefined });
    }
    await db.batch(ops);
    (window.acknowledgedRounds ??= []).push(round);
    if (round % 3 === 2) db.flush().catch(() => {});
    if (round % 7 === 6) db.compact().catch(() => {});
  }
}

/** How many keys of each round are there (after the kill and a restart). */
export async function roundsPresent(name) {
  const db = await open(name, { maintenance: "manual" });
  const perRound = new Map();
  for await (const { key } of db.scan()) {
    const round = Number(key.slice(1, 6));
    perRound.set(round, (perRound.get(round) ?? 0) + 1);
  }
  await db.close();
  return [...perRound];
}

/**
 * Fill part of a small quota with 12 values of 64 KiB, let them expire (on this page's fake clock)
 * when `expire` is set, and keep writing fresh 64 KiB values until QUOTA_EXCEEDED. Returns how
 * many fresh values were acknowledged.
 */
export async function fillWithExpired(name, expire) {
  await destroy(name);
  window.fakeNow = 1_767_225_600_000;
  const db = await open(name, { maintenance: "manual", clock: () => window.fakeNow });
  const events = [];
  db.on("expire", (e) => events.push(e.key));
  for (let i = 0; i < 12; i++) await db.put(`old:${i}`, crypto.getRandomValues(new Uint8Array(64 * 1024)), { ttlMs: 1_000 });
  await db.flush();
  if (expire) window.fakeNow += 5_000;
  let fresh = 0;
  let error;
  for (let i = 0; i < 80; i++) {
    try {
      await db.put(`new:${i}`, crypto.getRandomValues(new Uint8Array(64 * 1024)));
      fresh++;
    } catch (e) {
      error = e;
      break;
    }
  }
  const firstFreshReadable = (await db.get("new:0")) instanceof Uint8Array;
  await db.close().catch(() => {});
  await destroy(name);
  return { fresh, code: error?.code, message: error?.message, expiredEvents: events.length, firstFreshReadable };
}
