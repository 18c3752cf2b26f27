// A stateless worker with ttlkv's automatic maintenance (the default) on the real clock: what
// happens to the maintenance timer when the request that armed it ends (workerd cancels a
// request's timers and I/O with it). Two databases, each opened by the first request that needs
// it: "memory" on memory storage, "slow" on an adapter whose every operation waits a few ms, the
// way storage reached over the network would.
import { open } from "ttlkv";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Pages in a Map, each operation after a short wait (a timer: I/O of the request that waits). */
function slowAdapter() {
  const pages = new Map();
  let manifest = null;
  return {
    async readManifest() {
      await sleep(2);
      return manifest;
    },
    async getPage(key) {
      await sleep(2);
      return pages.get(key);
    },
    async listPages(prefix) {
      await sleep(2);
      return [...pages.keys()].filter((k) => k.startsWith(prefix)).sort();
    },
    async commit({ expectedVersion, manifest: next, puts, deletes }) {
      await sleep(20);
      if ((manifest?.version ?? 0) !== expectedVersion) throw Object.assign(new Error("stale manifest version"), { code: "FENCED" });
      for (const key of deletes) pages.delete(key);
      for (const [key, bytes] of puts) pages.set(key, bytes.slice());
      if (next) manifest = { version: next.version, bytes: next.bytes.slice() };
    },
  };
}

const databases = {};
const expired = { memory: [], slow: [] };

function database(which) {
  databases[which] ??= (async () => {
    const db = await open(which, { storage: which === "memory" ? "memory" : slowAdapter() });
    db.on("expire", (event) => expired[which].push(event.key));
    return db;
  })();
  return databases[which];
}

const routes = {
  async put(db, q) {
    return db().then((d) => d.put(q.get("key"), "v", q.has("ttl") ? { ttlMs: Number(q.get("ttl")) } : {}));
  },
  async get(db, q) {
    return (await db()).get(q.get("key"));
  },
  async purge(db) {
    return (await db()).purgeExpired();
  },
  /** A put, then this request stays open for `wait` ms. */
  async "put-and-wait"(db, q) {
    await routes.put(db, q);
    await sleep(Number(q.get("wait")));
  },
};

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const [, which, name] = url.pathname.split("/");
    if (!(which in expired)) return new Response("no such database", { status: 404 });
    // /<db>/events touches no database: it only reports what the listener got so far.
    if (name === "events") return Response.json({ expired: expired[which] });
    const route = routes[name];
    if (!route) return new Response("no such route", { status: 404 });
    const result = await route(() => database(which), url.searchParams);
    return Response.json({ result: result ?? null, expired: expired[which] });
  },
};
