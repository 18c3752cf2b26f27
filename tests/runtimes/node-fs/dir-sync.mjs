// Which directories the file storage syncs when its first commit creates its directory and the
// parents it lacked: `node dir-sync.mjs ROOT [fault]` stores under ROOT/data/sessions (neither
// exists), with every FileHandle's sync() recorded. `fault`: "unreadable", ROOT/data cannot be
// opened (EACCES: a parent the process may write into but not read); "fails-once", the first
// sync of ROOT/data fails (EIO), and the commit is made again. Prints JSON { commits: [each
// commit's outcome], synced: [directories synced, relative to ROOT, "." for ROOT itself] }.
import fsp from "node:fs/promises";
import { syncBuiltinESMExports } from "node:module";
import { statSync } from "node:fs";
import path from "node:path";

const [root, fault] = process.argv.slice(2);
const synced = new Set();
const relative = (file) => path.relative(root, path.resolve(String(file))) || ".";
const failure = (code) => Object.assign(new Error(`${code} (injected)`), { code });
let failSync = fault === "fails-once";
const realOpen = fsp.open;
fsp.open = async (file, ...rest) => {
  if (fault === "unreadable" && relative(file) === "data") throw failure("EACCES");
  const handle = await realOpen(file, ...rest);
  const sync = handle.sync.bind(handle);
  handle.sync = async () => {
    if (!statSync(file).isDirectory()) return sync();
    if (failSync && relative(file) === "data") {
      failSync = false;
      throw failure("EIO");
    }
    synced.add(relative(file));
    return sync();
  };
  return handle;
};
// The package's `import { open } from "node:fs/promises"` sees the wrapper from here on.
syncBuiltinESMExports();
const { fileStorage } = await import("ttlkv/node-fs");

const storage = fileStorage(path.join(root, "data", "sessions"));
const commits = [];
for (let version = 0; version < (fault === "fails-once" ? 2 : 1); ) {
  const outcome = await storage
    .commit({ expectedVersion: version, manifest: { version: version + 1, bytes: new Uint8Array(3) }, puts: [[`w/000000000000000${version + 1}`, new Uint8Array(3)]], deletes: [] })
    .then(() => "ok", (e) => e.code);
  commits.push(outcome);
  if (outcome === "ok") version++;
  if (commits.length > 3) break;
}
console.log(JSON.stringify({ commits, synced: [...synced].sort() }));
