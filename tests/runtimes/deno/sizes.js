// A database on the Deno KV adapter whose commits are far above one Deno KV atomic operation's
// caps (1,000 mutations, 800 KiB): a 5 MiB value, WAL commits of 800 KB, three flushes of 5.6 MB
// and a compaction of all three. The rounds' keys interleave, the 5 MiB value among them, so the
// compaction's last step merges the third round with everything before it (over 1,000 pages and
// 20 MB in one commit). Run twice on one KV file: "write", then "read" in a new process.
//   deno run --unstable-kv --allow-read=DIR --allow-write=DIR sizes.js write|read DIR/kv.sqlite
// Prints JSON: what the largest commit held (write), what was found (read).
import { open } from "ttlkv";
import { denoKvStorage } from "ttlkv/deno-kv";
import { bytes, digest } from "./support.js";

const [phase, path] = Deno.args;
const ROUNDS = 3;
const PER_ROUND = 700;
const VALUE_BYTES = 8_000;
const HUGE_BYTES = 5 * 1024 * 1024;

const kv = await Deno.openKv(path);
const largest = { pages: 0, bytes: 0 };
const storage = measured(denoKvStorage(kv, { prefix: ["sizes"] }));
const db = await open("sizes", { storage, maintenance: "manual" });
const key = (round, i) => `k${String(i).padStart(4, "0")}:r${round}`;
const HUGE_KEY = "k0350:huge";

if (phase === "write") {
  await db.put(HUGE_KEY, bytes(7, HUGE_BYTES));
  for (let round = 0; round < ROUNDS; round++) {
    for (let start = 0; start < PER_ROUND; start += 100) {
      const ops = [];
      for (let i = start; i < start + 100; i++) ops.push({ type: "put", key: key(round, i), value: bytes(round * PER_ROUND + i, VALUE_BYTES) });
      await db.batch(ops);
    }
    await db.flush();
  }
  await db.compact();
  await db.close();
  console.log(JSON.stringify({ largest }));
} else {
  const wrong = [];
  let found = 0;
  const check = async (k, expected) => {
    const value = await db.get(k);
    if (value instanceof Uint8Array && digest(value) === digest(expected)) found++;
    else wrong.push(k);
  };
  await check(HUGE_KEY, bytes(7, HUGE_BYTES));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < PER_ROUND; i++) await check(key(round, i), bytes(round * PER_ROUND + i, VALUE_BYTES));
  }
  await db.close();
  console.log(JSON.stringify({ found, wrong }));
}

/** `adapter`, noting in `largest` the most pages (put or deleted) and bytes of any one commit. */
function measured(adapter) {
  return {
    readManifest: () => adapter.readManifest(),
    getPage: (k) => adapter.getPage(k),
    listPages: (prefix) => adapter.listPages(prefix),
    commit(c) {
      largest.pages = Math.max(largest.pages, c.puts.length + c.deletes.length);
      largest.bytes = Math.max(largest.bytes, c.puts.reduce((n, [, b]) => n + b.length, 0));
      return adapter.commit(c);
    },
  };
}
