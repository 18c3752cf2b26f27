import Keyv from "keyv";
import { KeyvTtlkv } from "ttlkv/keyv";

const keyv = new Keyv({ store: new KeyvTtlkv({ name: "cache" }), namespace: "users" });
await keyv.set("user:1", { name: "Ada" }, 60_000); // TTL in ms, kept by ttlkv
console.log(await keyv.get("user:1"));             // { name: 'Ada' }
await keyv.clear();                                // every key of "users", in one step
console.log(await keyv.get("user:1"));             // undefined
await keyv.disconnect();
