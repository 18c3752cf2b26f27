import Keyv from "keyv";
import { createCache } from "cache-manager";
import { KeyvTtlkv } from "ttlkv/keyv";
import { fileStorage } from "ttlkv/node-fs";

const store = new KeyvTtlkv({ name: "cache", storage: fileStorage("./data/cache") });
const cache = createCache({ stores: [new Keyv({ store })], ttl: 10 * 60_000 });
const user = await cache.wrap("user:1", async () => {
  console.log("loading user 1"); // once: later runs find it in ./data/cache
  return { id: 1, name: "Ada" };
});
console.log(user);
await cache.disconnect();
