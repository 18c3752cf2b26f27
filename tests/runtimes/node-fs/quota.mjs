// Fills a small file system (node-fs.test.mjs mounts a tmpfs of a few MiB on `dir`) until a
// write fails, and reports as JSON: the error, what the directory held after it, and whether
// every write that resolved reads back, in this process and through a new adapter.
//   node quota.mjs <dir>
import { readdirSync } from "node:fs";
import { open } from "ttlkv";
import { fileStorage } from "ttlkv/node-fs";

const dir = process.argv[2];
const value = (i) => new Uint8Array(200_000).fill(i % 251);
const same = (a, b) => a instanceof Uint8Array && a.length === b.length && a.every((x, n) => x === b[n]);
const db = await open("full", { storage: fileStorage(dir), maintenance: "manual" });
let acked = 0;
let error;
for (; acked < 1000; acked++) {
  try {
    await db.put(`k${acked}`, value(acked));
  } catch (e) {
    error = e;
    break;
  }
}
const leftovers = readdirSync(dir).filter((name) => name.endsWith(".tmp") || name.startsWith("JOURNAL") || name.startsWith("LOCK"));
const readsBack = async (db) => {
  for (let i = 0; i < acked; i++) if (!same(await db.get(`k${i}`), value(i))) return false;
  return (await db.get(`k${acked}`)) === undefined;
};
const here = await readsBack(db);
await db.close();
const reopened = await open("full", { storage: fileStorage(dir), maintenance: "manual" });
const again = await readsBack(reopened);
await reopened.close();
console.log(
  JSON.stringify({
    acked,
    code: error?.code,
    name: error?.name,
    message: error?.message,
    causeCode: error?.cause?.code,
    rootCause: error?.cause?.cause?.code,
    leftovers,
    here,
    again,
  }),
);
