// The writes of the crash test (node-fs.test.mjs), shared by the writer that does them
// (writer.mjs) and the test that checks what survived: write `i` of round `round` is a pure
// function of (seed, round, i), and so is every value, so the test can rebuild the state any
// prefix of the writes leaves without the values crossing a pipe.

/** The keys written: few enough that keys are overwritten and deleted again and again. */
export const KEYS = 48;
/** Round r's clock stands still at clockOf(r): expiry is exact, and TTLs run out across rounds. */
export const T0 = Date.UTC(2030, 0, 1);
export const clockOf = (round) => T0 + round * 1000;
/** TTLs: out by the next round, two rounds on, or not within the test. */
const TTLS = [500, 2_500, 3_600_000];

/** A small fast PRNG (mulberry32) seeded from several integers. */
function prng(...seeds) {
  let a = 0x9e3779b9;
  for (const s of seeds) a = Math.imul(a ^ (s >>> 0), 0x85ebca6b) + 0x6b43a9b5;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A value's recipe: big byte strings (flushes and compactions come soon), text and JSON. */
function valueSpec(next, id) {
  const r = next();
  if (r < 0.4) return { kind: "bytes", size: 16_384 + Math.floor(next() * 240_000), id };
  if (r < 0.7) return { kind: "text", size: 1 + Math.floor(next() * 3_000), id };
  return { kind: "json", size: Math.floor(next() * 20), id };
}

/** The value a recipe stands for. */
export function valueOf(spec) {
  if (spec.kind === "bytes") {
    const words = new Uint32Array(Math.ceil(spec.size / 4));
    const next = prng(...spec.id);
    for (let w = 0; w < words.length; w++) words[w] = next() * 4294967296;
    return new Uint8Array(words.buffer, 0, spec.size);
  }
  if (spec.kind === "text") return `${spec.id.join(".")}:`.repeat(spec.size).slice(0, spec.size);
  return { id: spec.id, list: Array.from({ length: spec.size }, (_, n) => n * spec.id[2]) };
}

function putOp(next, id) {
  const key = `k${String(Math.floor(next() * KEYS)).padStart(2, "0")}`;
  const op = { type: "put", key, value: valueSpec(next, id) };
  if (next() < 0.35) op.ttlMs = TTLS[Math.floor(next() * TTLS.length)];
  return op;
}

function deleteOp(next) {
  return { type: "delete", key: `k${String(Math.floor(next() * KEYS)).padStart(2, "0")}` };
}

/** Write `i` of round `round`: a put (with or without TTL), a delete, or a batch of both. */
export function opAt(seed, round, i) {
  const next = prng(seed, round, i);
  const r = next();
  if (r < 0.6) return putOp(next, [seed, round, i, 0]);
  if (r < 0.8) return deleteOp(next);
  const size = 2 + Math.floor(next() * 4);
  const ops = Array.from({ length: size }, (_, j) => (next() < 0.7 ? putOp(next, [seed, round, i, j + 1]) : deleteOp(next)));
  return { type: "batch", ops };
}

/** The same write as `db` calls take it. */
export function perform(db, op) {
  const real = (o) => (o.type === "put" ? { ...o, value: valueOf(o.value) } : o);
  if (op.type === "put") return db.put(op.key, valueOf(op.value), op.ttlMs ? { ttlMs: op.ttlMs } : undefined);
  if (op.type === "delete") return db.delete(op.key);
  return db.batch(op.ops.map(real));
}

/** Apply write `op`, done at time `now`, to `state` (key -> { value: spec, expireAt }). */
export function applyOp(state, op, now) {
  for (const o of op.type === "batch" ? op.ops : [op]) {
    if (o.type === "delete") state.delete(o.key);
    else state.set(o.key, { value: o.value, expireAt: o.ttlMs ? now + o.ttlMs : null });
  }
}
