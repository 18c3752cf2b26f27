// The process the crash test kills (node-fs.test.mjs): it opens the database in `dir` with the
// packed package's file storage and does the writes of ops.mjs one after the other, printing
// `ack <i>` once write i has resolved (a line written to a pipe is sent at once on Linux), until
// it is killed. Mode "compact" also runs flush + compact in a loop beside the writes, and prints
// `compact` / `compacted` around each compaction so the test can kill it inside one.
//   node writer.mjs <dir> <seed> <round> <mode>
import { open } from "ttlkv";
import { fileStorage } from "ttlkv/node-fs";
import { clockOf, opAt, perform } from "./ops.mjs";

const [dir, seedArg, roundArg, mode] = process.argv.slice(2);
const seed = Number(seedArg);
const round = Number(roundArg);
const now = clockOf(round);

// Never outlive a test that failed to kill it.
setTimeout(() => process.exit(3), 30_000).unref();

const say = (line) => process.stdout.write(`${line}\n`);
const fail = (e) => {
  process.stderr.write(`writer failed: ${e?.stack ?? e}\n`);
  process.exit(2);
};

const db = await open("crash", { storage: fileStorage(dir), clock: () => now });
say("ready");
if (mode === "compact") {
  (async () => {
    for (;;) {
      await db.flush();
      say("compact");
      await db.compact();
      say("compacted");
    }
  })().catch(fail);
}
try {
  for (let i = 0; ; i++) {
    await perform(db, opAt(seed, round, i));
    say(`ack ${i}`);
  }
} catch (e) {
  fail(e);
}
