// `node bench/fence-probe.mjs [chromium|firefox|webkit]`: whether IndexedDB could fence a commit
// without reading first, in one browser engine (Chromium by default).
//
// A ttlkv commit on IndexedDB counts the manifest's version in its transaction and lets it commit
// only once that answer has shown the writer still holds its role (bindings/web/src/store/
// indexeddb/mod.rs; it then commits by itself, once every request has succeeded): one round trip
// more than a raw put, most of what the durable put's p50 pays
// above a raw put's (docs/performance.md). IndexedDB's only conditional write is a constraint: a
// put that breaks a unique index fails with `ConstraintError`, and a failed request aborts its
// transaction. A commit that carried a record its writer's successor makes illegal could then
// call `commit()` at once, with no read, if a transaction whose request fails after `commit()`
// still aborts, in every engine. This probe asks that, `ROUNDS` times per case, each in a fresh
// transaction that puts a page, then a record whose fence value an earlier transaction took:
// - "listened, commit() at once": the failing put has an `error` listener (which does not cancel
//   the event), then `commit()`;
// - "unlistened, commit() at once": no listener on it, then `commit()`;
// - "listened, auto-commit": the listener, no `commit()` call (the transaction ends by itself);
// - "listened, a put after, commit()" and "unlistened, a put after, commit()": one more page put
//   after the failing one, then `commit()` (a commit's requests in any other order than the fence
//   last).
// For each: how the transaction ended (`complete`, or `abort` with its error's name) and whether
// the other page put of the same transaction landed. Explains the durable-put rows of
// docs/performance.md. Needs the e2e packages installed.
import { withBenchPages } from "./in-page.mjs";

const engine = process.argv[2] ?? "chromium";
const ROUNDS = 20;
const out = await withBenchPages(engine, async (page) => (await page()).evaluate(probe, ROUNDS));
for (const [name, outcomes] of Object.entries(out)) {
  const counted = Object.entries(outcomes).map(([o, n]) => `${n}× ${o}`).join(", ");
  console.log(`${engine} ${name.padEnd(34)} ${counted}`);
}

/** In the page: `{ case: { outcome: count } }` over `rounds` transactions per case. */
async function probe(rounds) {
  const request = (r) => new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
  const name = `fence-probe-${Date.now()}`;
  const opening = indexedDB.open(name, 1);
  opening.onupgradeneeded = () => {
    opening.result.createObjectStore("pages");
    opening.result.createObjectStore("meta").createIndex("fence", "fence", { unique: true });
  };
  const db = await request(opening);
  /** Run `issue(tx)` in a readwrite transaction: how it ended. */
  const ended = (issue) => new Promise((resolve) => {
    const tx = db.transaction(["pages", "meta"], "readwrite");
    tx.oncomplete = () => resolve("complete");
    tx.onabort = () => resolve(`abort (${tx.error?.name ?? "no error"})`);
    issue(tx);
  });
  // The successor's mark: fence value 1 is taken from here on.
  await ended((tx) => tx.objectStore("meta").put({ fence: 1 }, "taken"));
  const cases = {
    "listened, commit() at once": { listen: true, commitAtOnce: true },
    "unlistened, commit() at once": { listen: false, commitAtOnce: true },
    "listened, auto-commit": { listen: true, commitAtOnce: false },
    "listened, a put after, commit()": { listen: true, commitAtOnce: true, after: true },
    "unlistened, a put after, commit()": { listen: false, commitAtOnce: true, after: true },
  };
  const out = {};
  let page = 0;
  for (const [label, { listen, commitAtOnce, after }] of Object.entries(cases)) {
    const outcomes = {};
    for (let i = 0; i < rounds; i++) {
      const key = `p${page++}`;
      const how = await ended((tx) => {
        tx.objectStore("pages").put(new Uint8Array(180), key);
        const failing = tx.objectStore("meta").put({ fence: 1 }, "writer");
        if (listen) failing.addEventListener("error", () => {});
        if (after) tx.objectStore("pages").put(new Uint8Array(180), `${key}-after`);
        if (commitAtOnce) tx.commit();
      });
      const landed = (await request(db.transaction("pages").objectStore("pages").get(key))) !== undefined;
      const outcome = `${how}, page put ${landed ? "landed" : "not landed"}`;
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
    out[label] = outcomes;
  }
  db.close();
  await new Promise((resolve) => {
    const r = indexedDB.deleteDatabase(name);
    r.onsuccess = r.onerror = resolve;
  });
  return out;
}
