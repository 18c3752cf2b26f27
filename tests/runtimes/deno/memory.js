// The package in Deno on memory storage, with no permission flag: TTL puts, expiry on a fake
// clock, purge with its expire events, scans, compaction, close.
//   deno run --no-prompt memory.js
// Prints what it saw as JSON; the caller checks it.
import { open, TtlKvError } from "ttlkv";

const T0 = 1_767_225_600_000;
let now = T0;
const db = await open("deno-memory", { storage: "memory", clock: () => now, maintenance: "manual" });
const expired = [];
db.on("expire", ({ key, value, expireAt }) => expired.push({ key, value, expireAt }));

await db.put("session:a", "alice", { ttlMs: 1_000 });
await db.put("session:b", { user: "bob", roles: ["admin"] }, { expireAt: T0 + 5_000 });
await db.put("session:c", "carol", { ttlMs: 60_000 });
await db.put("config", new Uint8Array([1, 2, 3]));
for (let i = 0; i < 200; i++) await db.put(`bulk:${String(i).padStart(3, "0")}`, "x".repeat(100), { ttlMs: 2_000 });
await db.flush();

const fresh = {
  a: await db.get("session:a"),
  b: await db.get("session:b"),
  config: Array.from(await db.get("config")),
  ttlA: await db.ttl("session:a"),
  ttlConfig: await db.ttl("config"),
};

now = T0 + 1_500;
const afterA = { a: String(await db.get("session:a")), hasA: await db.has("session:a"), ttlA: await db.ttl("session:a") };
const purgedFirst = await db.purgeExpired();
const eventsFirst = expired.map((e) => e.key);

now = T0 + 10_000;
const purgedSecond = await db.purgeExpired();
const scanned = [];
for await (const { key, value, expireAt } of db.scan({ prefix: "session:" })) scanned.push({ key, value, expireAt });
const bulkLeft = [];
for await (const { key } of db.scan({ prefix: "bulk:" })) bulkLeft.push(key);
await db.compact();
const afterCompact = { c: await db.get("session:c"), config: Array.from(await db.get("config")) };

await db.close();
let afterClose;
try {
  await db.get("session:c");
  afterClose = "resolved";
} catch (e) {
  afterClose = e instanceof TtlKvError ? e.code : `not a TtlKvError: ${e}`;
}

console.log(
  JSON.stringify({
    fresh,
    afterA,
    purgedFirst,
    eventsFirst,
    purgedSecond,
    events: expired,
    scanned,
    bulkLeft,
    afterCompact,
    afterClose,
  }),
);
