// One of several processes taking turns on one directory (node-fs.test.mjs): `count` times it
// opens the database (fencing whoever had it), writes its own key and closes it, printing
// `ack <key>` for each write that resolved. A write fenced by another process's open wrote
// nothing (that is the contract): it opens again and retries. So does an open that another
// process's open got ahead of (`open` rejects with FENCED then: docs/api.md).
//   node contender.mjs <dir> <id> <count>
import { open } from "ttlkv";
import { fileStorage } from "ttlkv/node-fs";

const [dir, id, count] = process.argv.slice(2);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let fenced = 0;
for (let i = 0; i < Number(count); ) {
  const key = `p${id}-${i}`;
  let db;
  try {
    db = await open("contended", { storage: fileStorage(dir) });
    await db.put(key, { id: Number(id), i });
    console.log(`ack ${key}`);
    i++;
  } catch (e) {
    if (e.code !== "FENCED") throw e;
    fenced++;
    await sleep(Math.random() * 10);
  } finally {
    await db?.close().catch((e) => {
      if (e.code !== "FENCED") throw e;
    });
  }
}
console.log(`fenced ${fenced}`);
