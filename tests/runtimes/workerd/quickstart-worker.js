// The README's quick start for a Cloudflare Worker (workerd.test.mjs runs it as written): a TTL
// cache for the isolate, opened by the first request and shared by the ones after it.
import { open } from "ttlkv";

let cache;

export default {
  async fetch(request) {
    // No I/O or timers at global scope in Workers: open on the first request instead. A failed
    // open is not kept, so the next request tries again.
    cache ??= open("cache", { storage: "memory" }).catch((e) => {
      cache = undefined;
      throw e;
    });
    const db = await cache;
    const url = new URL(request.url);
    const key = url.pathname.slice(1);
    if (request.method === "PUT") {
      const ttlMs = Number(url.searchParams.get("ttl") ?? 60_000);
      await db.put(key, await request.text(), { ttlMs });
      return new Response(null, { status: 204 });
    }
    const value = await db.get(key);
    return value === undefined ? new Response("not found", { status: 404 }) : new Response(value);
  },
};
