// Type-checked by keyv.test.mjs against the packed package's declarations, with keyv and
// cache-manager's own.
import Keyv from "keyv";
import { createCache } from "cache-manager";
import { open } from "ttlkv";
import { KeyvTtlkv, type KeyvStored } from "ttlkv/keyv";
import { fileStorage } from "ttlkv/node-fs";

const db = await open("cache", { storage: "memory" });
const shared = new KeyvTtlkv({ db });
const owned = new KeyvTtlkv({ name: "files", storage: fileStorage("./data/cache"), defaultTtlMs: 60_000 });
const keyv = new Keyv<{ name: string }>({ store: shared, namespace: "users" });
await keyv.set("user:1", { name: "Ada" }, 1_000);
const user: { name: string } | undefined = await keyv.get("user:1");
const cache = createCache({ stores: [new Keyv({ store: owned })] });
await cache.set("k", 1, 5_000);
const stored: KeyvStored | undefined = await shared.get("users:user:1");
keyv.iterator = keyv.generateIterator(shared.iterator.bind(shared));
shared.on("error", (e) => console.error(e));
// @ts-expect-error either a database or a name, not both
new KeyvTtlkv({ db, name: "x" });
// @ts-expect-error open options need a name
new KeyvTtlkv({ defaultTtlMs: 5 });
console.log(user, stored);
await cache.disconnect();
await db.close();
