// Shared pieces of the benchmark workloads: a seeded random source, Zipf-distributed key choice,
// the session value, timing helpers. Plain ES module: loaded by Node and by the browser page.

/** A seeded PRNG (mulberry32): the same sequence for every peer. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` key indexes in [0, n), Zipf-distributed (s = 0.99), hot keys spread over the key space. */
export function zipfIndexes(n, count, seed) {
  const random = rng(seed);
  const cdf = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    total += 1 / Math.pow(i + 1, 0.99);
    cdf[i] = total;
  }
  const out = new Uint32Array(count);
  for (let j = 0; j < count; j++) {
    const u = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    // Scatter ranks over the key space so hot keys are not neighbours.
    out[j] = Number((BigInt(lo) * 2654435761n) % BigInt(n));
  }
  return out;
}

/**
 * `count` key indexes in [0, n), each an independent seeded uniform choice (`rng(seed)`): every key
 * equally likely, so hits are spread over the whole key space (some keys drawn twice, some never).
 */
export function uniformIndexes(n, count, seed) {
  const random = rng(seed);
  const out = new Uint32Array(count);
  for (let j = 0; j < count; j++) out[j] = Math.floor(random() * n);
  return out;
}

/** The sessions' TTL: the memory peers' and ttlkv's default in the session mix (30 minutes). */
export const SESSION_TTL = 30 * 60_000;

export const key = (i) => `session:${String(i).padStart(8, "0")}`;

/** A session value of about 1 KiB as JSON. */
export function sessionValue(i) {
  return { user: `user-${i}`, roles: ["reader"], cart: [{ sku: `sku-${i % 97}`, qty: 1 }], csrf: "x".repeat(900), seen: i };
}

/**
 * The session mix's reference, not a peer but a ceiling: what any store costs that answers
 * through a Promise (and, for an object, hands back a fresh copy of it, as ttlkv does; lru-cache
 * hands back the stored object itself). A string needs no copy: it cannot be changed. One
 * definition for the bench's mix (bench/node.mjs) and for what bench/mix-counted.mjs counts
 * against it.
 */
export function mixReference(json) {
  const m = new Map();
  return json
    ? { set: async (k, v) => void m.set(k, JSON.stringify(v)), get: async (k) => JSON.parse(m.get(k)), close: () => m.clear() }
    : { set: async (k, v) => void m.set(k, v), get: async (k) => m.get(k), close: () => m.clear() };
}

/**
 * ttlkv as the memory workloads open it (memory storage, relaxed, the sessions' TTL), named
 * `name`, through `open` and `destroy` of the package under test: the bench's own build
 * (bench/node.mjs) or another root's (bench/mix-counted.mjs).
 */
export async function memoryTtlkv(open, destroy, name) {
  const db = await open(name, { storage: "memory", durability: "relaxed", defaultTtlMs: SESSION_TTL });
  return {
    set: (k, v) => db.put(k, v),
    get: (k) => db.get(k),
    batch: (ops) => db.batch(ops),
    // What the load left to flush and compact, done before the clock starts; maintenance that
    // the timed operations' own writes cause runs inside the timed window.
    settle: async () => {
      await db.flush();
      await db.compact();
    },
    // A memory database lives on by name after close() until destroy(): the next peer, or the
    // next sample, must not run beside this one's data.
    close: async () => {
      await db.close();
      await destroy(name, { storage: "memory" });
    },
  };
}

/**
 * The bench's purge database (bench/node.mjs, `purge`), through `open` and `destroy` of the
 * package under test (bench/purge-alone.mjs passes another build's): `total` keys of 100-byte
 * strings in batches of 1,000, `due` of them (chosen by a seeded shuffle) with a TTL of 1 s, on
 * a clock the caller moves, flushed and compacted; then the clock is moved past their expiry.
 * `close()` closes and destroys it.
 */
export async function purgeTtlkv(open, destroy, name, due, total) {
  let now = 1_767_225_600_000;
  const db = await open(name, { storage: "memory", durability: "relaxed", maintenance: "manual", clock: () => now });
  const ids = shuffle(Array.from({ length: total }, (_, i) => i), 7);
  const dueSet = new Set(ids.slice(0, due));
  for (let i = 0; i < total; i += 1000) {
    const ops = [];
    for (let j = i; j < Math.min(total, i + 1000); j++) {
      ops.push({ type: "put", key: key(j), value: value100(j), ...(dueSet.has(j) ? { ttlMs: 1_000 } : {}) });
    }
    await db.batch(ops);
  }
  await db.flush();
  await db.compact();
  now += 5_000;
  return {
    db,
    close: async () => {
      await db.close();
      await destroy(name, { storage: "memory" });
    },
  };
}

/** The peers of the IndexedDB ingest (`window.bench.ingest` in bench/browser/bench.js). */
export const IDB_INGEST_PEERS = ["raw IndexedDB, one transaction", "raw IndexedDB, one put per transaction", "idb-keyval setMany", "idb-keyval set", "Dexie bulkPut", "ttlkv"];

/** A 100-byte string value. */
export const value100 = (i) => `v${String(i).padStart(10, "0")}`.padEnd(100, ".");

export function shuffle(array, seed) {
  const random = rng(seed);
  for (let i = array.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [array[i], array[j]] = [array[j], array[i]];
  }
  return array;
}

/** The median of `samples` (any order); the mean of the middle two for an even count. */
export function median(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(middle)] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** `samples` as a note lists them: whole numbers from 100 up, one decimal below. */
export function sampleList(samples) {
  return samples.map((v) => (v >= 100 ? Math.round(v).toLocaleString("en") : v.toFixed(1))).join(", ");
}

export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
