// Which directories the file storage syncs when its first commit creates its directory and the
// parents it lacked: `node dir-sync.mjs ROOT` stores under ROOT/data/sessions (neither exists),
// with every FileHandle's sync() recorded. Prints JSON { synced: [directories synced, relative to
// ROOT, "." for ROOT itself] }.
import fsp from "node:fs/promises";
import { syncBuiltinESMExports } from "node:module";
import { statSync } from "node:fs";
import path from "node:path";

const [root] = process.argv.slice(2);
const synced = new Set();
const realOpen = fsp.open;
fsp.open = async (file, ...rest) => {
  const handle = await realOpen(file, ...rest);
  const sync = handle.sync.bind(handle);
  handle.sync = async () => {
    if (statSync(file).isDirectory()) synced.add(path.relative(root, path.resolve(String(file))) || ".");
    return sync();
  };
  return handle;
};
// The package's `import { open } from "node:fs/promises"` sees the wrapper from here on.
syncBuiltinESMExports();
const { fileStorage } = await import("ttlkv/node-fs");

const storage = fileStorage(path.join(root, "data", "sessions"));
await storage.commit({ expectedVersion: 0, manifest: { version: 1, bytes: new Uint8Array(3) }, puts: [["w/0000000000000001", new Uint8Array(3)]], deletes: [] });
console.log(JSON.stringify({ synced: [...synced].sort() }));
