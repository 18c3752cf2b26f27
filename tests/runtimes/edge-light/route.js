// app/api/visits/route.js — a Next.js route on the edge runtime (Vercel Edge Functions)
import { open } from "ttlkv";

export const runtime = "edge";

// One db per isolate, reused by the requests it serves: a TTL cache in memory.
const cache = open("visits", { storage: "memory", defaultTtlMs: 60_000 });

export async function GET(request) {
  const db = await cache;
  const ip = request.headers.get("x-forwarded-for") ?? "unknown";
  const visits = ((await db.get(ip)) ?? 0) + 1;
  await db.put(ip, visits, { keepTtl: visits > 1 }); // the window starts at the first visit
  return Response.json({ visits, resetsInMs: await db.ttl(ip) });
}
