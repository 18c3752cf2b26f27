// A stateless worker holding one ttlkv database for the isolate: opened by the first request,
// reused by every later one. Memory storage, a fake clock the test moves with /advance, and
// manual maintenance, so that what each request sees is exact. The test (workerd.test.mjs)
// drives the database with /call, one method per request, and reads the JSON answers.
import { open } from "ttlkv";

const T0 = 1_767_225_600_000;
let now = T0;
let opens = 0;
let dbPromise;
const expired = [];

function database() {
  dbPromise ??= (async () => {
    opens++;
    const db = await open("requests", { storage: "memory", clock: () => now, maintenance: "manual" });
    db.on("expire", (event) => expired.push(event));
    return db;
  })();
  return dbPromise;
}

async function collect(iterable) {
  const out = [];
  for await (const item of iterable) out.push(item);
  return out;
}

const routes = {
  /** Move the fake clock by `ms`. */
  advance: async ({ ms }) => (now += ms),
  /** `db[method](...args)`. */
  call: async ({ method, args = [] }) => (await database())[method](...args),
  scan: async ({ options }) => collect((await database()).scan(options)),
  /** The expire events delivered since the last look. */
  events: async () => expired.splice(0),
  /** How many times the database was opened, and the fake time. */
  info: async () => ({ opens, now }),
};

export default {
  async fetch(request) {
    const route = routes[new URL(request.url).pathname.slice(1)];
    if (!route) return new Response("no such route", { status: 404 });
    const body = request.method === "POST" ? await request.json() : {};
    try {
      const result = await route(body);
      // JSON has no undefined: say so instead.
      return Response.json(result === undefined ? { undefined: true } : { result });
    } catch (e) {
      return Response.json({ error: { name: e?.name, code: e?.code, message: String(e?.message ?? e) } });
    }
  },
};
