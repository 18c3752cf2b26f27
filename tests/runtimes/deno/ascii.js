// Text values read back in Deno, whose global `Buffer` lets the server engine hand ASCII text
// over as a slice of its memory: ASCII and non-ASCII strings and JSON, read once, then again
// after a 12 MiB value made the engine's memory grow (which detaches the view the slices come
// from), then the large value itself. No permission flag.
//   deno run ascii.js
// Prints JSON: each read's values, by round.
import { open } from "ttlkv";

const values = {
  short: "session:0001",
  json: { user: "u1", roles: ["a", "b"], n: 12.5 },
  notAscii: "caf\u00e9 \u2603",
  jsonNotAscii: { name: "Zo\u00eb" },
};
const db = await open("ascii", { storage: "memory" });
for (const [key, value] of Object.entries(values)) await db.put(key, value);
const readAll = async () => Object.fromEntries(await Promise.all(Object.keys(values).map(async (key) => [key, await db.get(key)])));
const first = await readAll();
const large = "y".repeat(12 * 1024 * 1024);
await db.put("large", large);
const afterGrowth = await readAll();
const largeBack = await db.get("large");
await db.close();
console.log(JSON.stringify({ values, first, afterGrowth, largeIntact: largeBack === large }));
