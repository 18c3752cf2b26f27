// An edge function as a Vercel Edge / Next.js edge route would be written: one db opened at
// module level, reused by every request. `?step=…` drives a sequence on a clock the requests set.
import { open } from "ttlkv";

let now = 1_767_225_600_000;
let dbPromise;
const expired = [];

function db() {
  dbPromise ??= open("edge", { storage: "memory", clock: () => now, maintenance: "manual" }).then((db) => {
    db.on("expire", (e) => expired.push(e.key));
    return db;
  });
  return dbPromise;
}

const steps = {
  async write(db) {
    await db.put("session:a", { user: 1 }, { ttlMs: 1_000 });
    await db.put("session:b", { user: 2 }, { ttlMs: 5_000 });
    await db.put("config", "permanent");
    return { ttl: await db.ttl("session:a") };
  },
  async later(db) {
    now += 2_000;
    const purged = await db.purgeExpired();
    const keys = [];
    for await (const e of db.scan({ prefix: "session:" })) keys.push(e.key);
    await db.compact();
    return { purged, expired, keys, a: await db.get("session:a"), b: await db.get("session:b") };
  },
  async clear(db) {
    await db.clear();
    return { config: (await db.get("config")) ?? null };
  },
  async close(db) {
    await db.close();
    dbPromise = undefined;
    return { closed: true };
  },
};

addEventListener("fetch", (event) => {
  const step = new URL(event.request.url).searchParams.get("step");
  event.respondWith(
    db()
      .then((db) => steps[step](db))
      .then(
        (body) => Response.json(body),
        (e) => Response.json({ error: e.code ?? String(e), message: e.message, cause: e.cause?.message }, { status: 500 }),
      ),
  );
});
