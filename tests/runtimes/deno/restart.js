// A database on the Deno KV adapter survives its process: "write" puts (with TTLs, a delete, a
// namespace) and exits without closing; "read", a new process ten seconds later on a fake clock,
// finds every acknowledged write, the expired key gone (with its expire event) and the rest live.
//   deno run --unstable-kv --allow-read=DIR --allow-write=DIR restart.js write|read DIR/kv.sqlite
// Prints what "read" saw as JSON.
import { open } from "ttlkv";
import { denoKvStorage } from "ttlkv/deno-kv";

const [phase, path] = Deno.args;
const T0 = 1_767_225_600_000;
const kv = await Deno.openKv(path);
const options = { storage: denoKvStorage(kv, { prefix: ["apps", "restart"] }), maintenance: "manual" };

if (phase === "write") {
  const db = await open("restart", { ...options, clock: () => T0 });
  await db.put("keep", { plan: "pro", seats: 3 });
  await db.put("short", "expires in 5 s", { ttlMs: 5_000 });
  await db.put("long", "expires in 60 s", { expireAt: T0 + 60_000 });
  await db.put("gone", "deleted");
  await db.delete("gone");
  await db.namespace("carts").put("u1", ["apple", "pear"]);
  await db.batch([
    { type: "put", key: "b1", value: "one" },
    { type: "put", key: "b2", value: new Uint8Array([2, 2]) },
  ]);
  await db.flush();
  await db.put("after-flush", "in the WAL only");
  // No close(): every write above was acknowledged, so each must be there for the next process.
  Deno.exit(0);
}

const db = await open("restart", { ...options, clock: () => T0 + 10_000 });
const events = [];
db.on("expire", ({ key, value }) => events.push({ key, value }));
const read = {
  keep: await db.get("keep"),
  short: String(await db.get("short")),
  long: await db.get("long"),
  longTtl: await db.ttl("long"),
  gone: String(await db.get("gone")),
  cart: await db.namespace("carts").get("u1"),
  b1: await db.get("b1"),
  b2: Array.from(await db.get("b2")),
  afterFlush: await db.get("after-flush"),
  purged: await db.purgeExpired(),
};
await db.close();
console.log(JSON.stringify({ ...read, events }));
