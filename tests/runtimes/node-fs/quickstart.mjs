import { open } from "ttlkv";
import { fileStorage } from "ttlkv/node-fs";

// One directory per database: what a write resolved survives a restart, or a crash.
const db = await open("sessions", { storage: fileStorage("./data/sessions") });
const visits = ((await db.get("visits")) ?? 0) + 1;
await db.put("visits", visits);
await db.put("session:alice", { user: "alice" }, { ttlMs: 30 * 60_000 });
console.log(`visit ${visits}`, await db.get("session:alice"));
await db.close();
