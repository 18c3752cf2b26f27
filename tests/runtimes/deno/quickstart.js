// The quick start for Deno KV given in docs/runtimes.md, line for line (deno.test.mjs runs it with
// --unstable-kv --allow-read=. --allow-write=.).
import { open } from "ttlkv";
import { denoKvStorage } from "ttlkv/deno-kv";

const kv = await Deno.openKv("./sessions.kv");
const db = await open("sessions", { storage: denoKvStorage(kv, { prefix: ["ttlkv", "sessions"] }) });
await db.put("session:42", { user: "ada" }, { ttlMs: 30 * 60_000 });
console.log(await db.get("session:42")); // { user: "ada" }
await db.close();
kv.close();
