// A session store in Node with the npm package, on its embedded default storage (memory in Node;
// IndexedDB in a browser), the real clock and automatic maintenance.
//
// Run with `node examples/sessions.mjs` after `npm run build`. It logs
// users in with a sliding 30-minute session, refreshes one, logs one out, lists the live
// sessions, then issues one-time codes that live 1.5 s and watches them expire on their own:
// the expire events arrive from the automatic maintenance timer with no call from this script.
import { open, TtlKvError } from "../bindings/js/node.js";

const SESSION_TTL_MS = 30 * 60_000;
const db = await open("sessions", { defaultTtlMs: SESSION_TTL_MS });

const seen = [];
db.on("expire", ({ key, value, expireAt }) => {
  seen.push(key);
  console.log(`  expire event: ${key} (value ${JSON.stringify(value)}, due ${new Date(expireAt).toISOString()})`);
});

console.log("== log in three users (default TTL: 30 min)");
for (const user of ["alice", "bob", "carol"]) {
  await db.put(`session:${user}`, { user, cart: [] });
}
console.log(`  ttl(session:alice) = ${await db.ttl("session:alice")} ms`);

console.log("== alice is active: read and slide her session in one step (getEx)");
const alice = await db.getEx("session:alice", { ttlMs: SESSION_TTL_MS });
console.log(`  ${JSON.stringify(alice)}, ttl now ${await db.ttl("session:alice")} ms`);

console.log("== bob logs out; a second login for carol does nothing (ifAbsent)");
console.log(`  delete(session:bob) = ${await db.delete("session:bob")}`);
console.log(`  put(session:carol, ifAbsent) = ${await db.put("session:carol", { user: "carol", cart: ["x"] }, { ifAbsent: true })}`);

console.log("== live sessions");
for await (const { key, value, expireAt } of db.scan({ prefix: "session:" })) {
  console.log(`  ${key} = ${JSON.stringify(value)} until ${new Date(expireAt).toISOString()}`);
}

console.log("== one-time codes that live 1.5 s, in their own namespace with a 5 s cap");
const codes = db.namespace("otp", { maxTtlMs: 5_000 });
await codes.put("alice", "493817", { ttlMs: 1_500 });
await codes.put("carol", "120554"); // no TTL given: clamped to the 5 s cap
console.log(`  ttl(otp/alice) = ${await codes.ttl("alice")} ms, ttl(otp/carol) = ${await codes.ttl("carol")} ms`);

console.log("== waiting for the codes to expire on their own (automatic maintenance)");
const started = Date.now();
while (seen.length < 2 && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 100));
console.log(`  get(otp/alice) = ${await codes.get("alice")}, sessions still live: ${await db.has("session:alice")}`);

const stats = await db.stats();
console.log(`== the LSM: memtable ${stats.memtableBytes} B, WAL ${stats.walBytes} B, ${stats.levels.length} level(s) of SSTs`);

try {
  await db.put("session:dave", "x", { ttlMs: -5 });
} catch (e) {
  console.log(`== bad input is an error with a code: ${e instanceof TtlKvError} ${e.code}: ${e.message}`);
}
await db.close();
if (seen.length < 2) {
  console.error("the one-time codes did not expire on their own");
  process.exit(1);
}
