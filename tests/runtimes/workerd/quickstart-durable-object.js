// The README's quick start for a Durable Object (workerd.test.mjs runs it as written): one
// database per object, its pages in the object's own storage, so it outlives the isolate.
import { DurableObject } from "cloudflare:workers";
import { open } from "ttlkv";
import { durableObjectStorage } from "ttlkv/durable-object";

export class Sessions extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    // Requests wait until the database is open.
    ctx.blockConcurrencyWhile(async () => {
      this.db = await open("sessions", { storage: durableObjectStorage(ctx.storage) });
    });
  }

  async fetch(request) {
    const url = new URL(request.url);
    const key = url.pathname.slice(1);
    if (request.method === "PUT") {
      const ttl = url.searchParams.get("ttl");
      await this.db.put(key, await request.json(), ttl ? { ttlMs: Number(ttl) } : {});
      return new Response(null, { status: 204 });
    }
    // { key, value, expireAt } (expireAt: ms since the epoch, or null for no expiry).
    const entry = await this.db.getEntry(key);
    return entry ? Response.json(entry) : new Response("not found", { status: 404 });
  }
}

export default {
  async fetch(request, env) {
    // One object per user: each user's sessions live in their own object and database.
    const user = new URL(request.url).searchParams.get("user") ?? "anonymous";
    return env.SESSIONS.get(env.SESSIONS.idFromName(user)).fetch(request);
  },
};
