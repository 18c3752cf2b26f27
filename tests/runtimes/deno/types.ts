import { open, type PageStoreAdapter } from "ttlkv";
import { denoKvStorage, destroyDenoKvStorage } from "ttlkv/deno-kv";

const kv: Deno.Kv = await Deno.openKv(":memory:");
const storage: PageStoreAdapter = denoKvStorage(kv, { prefix: ["ttlkv", "sessions"] });
const db = await open("sessions", { storage });
await db.close();
await destroyDenoKvStorage(kv, { prefix: ["ttlkv", "sessions"] });
denoKvStorage(kv);
// @ts-expect-error: a prefix is an array of key parts
denoKvStorage(kv, { prefix: "ttlkv" });
// @ts-expect-error: not a Deno KV
denoKvStorage({ get() {} });
