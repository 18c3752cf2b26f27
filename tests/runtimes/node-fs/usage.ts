// Type-checked by node-fs.test.mjs against the packed package's declarations.
import { open, type PageStoreAdapter } from "ttlkv";
import { fileStorage, type FileStorageOptions } from "ttlkv/node-fs";

const options: FileStorageOptions = { lockTimeoutMs: 5_000 };
const storage: PageStoreAdapter = fileStorage("./data/sessions", options);
const db = await open("sessions", { storage });
await db.put("session:alice", { user: "alice" }, { ttlMs: 60_000 });
fileStorage(new URL("file:///tmp/ttlkv"));
// @ts-expect-error lockTimeoutMs is a number of ms
fileStorage("./data", { lockTimeoutMs: "5s" });
// @ts-expect-error the directory is required
fileStorage();
await db.close();
