// A second process opening a directory a first one has open (node-fs.test.mjs): it takes the
// writer role, writes, and prints what it read of the first one's writes.
//   node second-writer.mjs <dir>
import { open } from "ttlkv";
import { fileStorage } from "ttlkv/node-fs";

const db = await open("fenced", { storage: fileStorage(process.argv[2]) });
await db.put("second", "written by the second process");
console.log(JSON.stringify({ first: await db.get("first") }));
await db.close();
