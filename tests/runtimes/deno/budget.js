// Commits through the Deno KV adapter whose size Deno KV counts near its cap on one atomic
// operation (819,200 bytes: every key once, a set's key again with its value): many small pages,
// and fewer larger ones under a long prefix. Each must land whole and read back; a commit the
// adapter packed past the cap fails on every try with "Total mutation size too large".
//   deno run --unstable-kv budget.js
// Prints JSON: { failed: [what failed and why], read: [pages that did not read back] }.
import { denoKvStorage } from "ttlkv/deno-kv";
import { bytes } from "./support.js";

const kv = await Deno.openKv(":memory:");
const hex = (n, width) => n.toString(16).padStart(width, "0");
const shapes = [
  { prefix: ["ttlkv"], pages: 800, size: 1_000 },
  { prefix: ["r".repeat(62)], pages: 600, size: 2_048 },
  { prefix: ["p".repeat(254)], pages: 300, size: 4_096 },
  { prefix: ["q".repeat(254)], pages: 100, size: 7_500 },
];
const failed = [];
const read = [];
for (const [n, { prefix, pages, size }] of shapes.entries()) {
  const what = `${pages} pages of ${size} B under a prefix of ${prefix[0].length} characters`;
  const storage = denoKvStorage(kv, { prefix });
  const puts = Array.from({ length: pages }, (_, i) => [`d/${hex(n + 1, 16)}/${hex(i, 8)}`, bytes(n * 10_000 + i, size)]);
  try {
    await storage.commit({ expectedVersion: 0, manifest: { version: 1, bytes: bytes(n, 100) }, puts, deletes: [] });
  } catch (e) {
    failed.push(`${what}: ${e.code} ${e.message}`);
    continue;
  }
  for (const [key, value] of puts) {
    const back = await storage.getPage(key);
    if (!(back instanceof Uint8Array) || back.length !== value.length || back.some((b, i) => b !== value[i])) read.push(`${what}: ${key}`);
  }
}
kv.close();
console.log(JSON.stringify({ failed, read }));
