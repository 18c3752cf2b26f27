// Atomic operations within Deno KV's limits: `AtomicOp` builds one and counts the size Deno KV
// will count for it (mutations, bytes of keys and values), `pack` splits a list of mutations into
// as few operations as fit, `keyBytes` and `valueBytes` are the estimates the budget rests on.

// Deno KV's caps on one atomic operation are 1,000 mutations, 819,200 bytes of keys and values
// and 81,920 bytes of keys; the byte budgets leave room for the estimates below being a little off.
// Deno counts toward the 819,200 every key of a check or a mutation once, and a set's key a
// second time with its value: a set costs twice its key plus its value.
export const OP_BUDGET = { mutations: 1_000, bytes: 790_000, keyBytes: 78_000, value: 65_536 };

const encoder = new TextEncoder();

/** An atomic operation being built, with the size Deno KV will count for it (estimated from above). */
export class AtomicOp {
  checks = [];
  mutations = [];
  #keyBytes = 0;
  #bytes = 0;
  #largestValue = 0;

  check(key, versionstamp) {
    this.checks.push({ key, versionstamp });
    return this.#count(key);
  }

  set(key, value) {
    this.mutations.push({ key, value });
    return this.#count(key, value);
  }

  delete(key) {
    this.mutations.push({ key });
    return this.#count(key);
  }

  /** Add a set ({ key, value }) or a delete ({ key }). */
  add({ key, value }) {
    return value === undefined ? this.delete(key) : this.set(key, value);
  }

  get empty() {
    return this.mutations.length === 0;
  }

  /** Whether it is within Deno KV's limits, with `more` mutation (if given) added. */
  fits(more) {
    const keySize = more ? keyBytes(more.key) : 0;
    const valueSize = more?.value === undefined ? 0 : valueBytes(more.value);
    return (
      this.mutations.length + (more ? 1 : 0) <= OP_BUDGET.mutations &&
      this.#bytes + (more ? bytesOf(keySize, more.value === undefined ? undefined : valueSize) : 0) <= OP_BUDGET.bytes &&
      this.#keyBytes + keySize <= OP_BUDGET.keyBytes &&
      Math.max(this.#largestValue, valueSize) <= OP_BUDGET.value
    );
  }

  /** Commit it: `{ ok, versionstamp }`, `ok` false when a check failed. */
  async send(kv) {
    const op = kv.atomic();
    for (const check of this.checks) op.check(check);
    for (const { key, value } of this.mutations) {
      if (value === undefined) op.delete(key);
      else op.set(key, value);
    }
    return op.commit();
  }

  /** Counts a check or a delete (`value` undefined) or a set of `value` under `key`. */
  #count(key, value) {
    const size = keyBytes(key);
    const valueSize = value === undefined ? undefined : valueBytes(value);
    this.#keyBytes += size;
    this.#bytes += bytesOf(size, valueSize);
    if (valueSize !== undefined) this.#largestValue = Math.max(this.#largestValue, valueSize);
    return this;
  }
}

/** What a check or delete (`valueSize` undefined) or a set of a value of `valueSize` bytes adds to
 * an operation's total size, its key `keySize` bytes: the key once; for a set, the key again and
 * the value. Callers pass the size they estimated (a record's is a JSON serialization). */
function bytesOf(keySize, valueSize) {
  return valueSize === undefined ? keySize : 2 * keySize + valueSize;
}

/** `mutations` ({ key, value } sets, { key } deletes) in order, in as few operations as fit,
 * each carrying `checks` ({ key, versionstamp }). */
export function pack(mutations, checks) {
  const fresh = () => checks.reduce((op, { key, versionstamp }) => op.check(key, versionstamp), new AtomicOp());
  const ops = [];
  let op = fresh();
  for (const m of mutations) {
    if (!op.empty && !op.fits(m)) {
      ops.push(op);
      op = fresh();
    }
    op.add(m);
  }
  if (!op.empty) ops.push(op);
  return ops;
}

export const packDeletes = (keys) => pack(keys.map((key) => ({ key })), []);

export async function sendAll(kv, ops) {
  for (const op of ops) await op.send(kv);
}

/** Bytes of a key as Deno KV encodes it, counted from above. */
export function keyBytes(key) {
  let n = 0;
  for (const part of key) {
    if (typeof part === "string") n += escapedBytes(encoder.encode(part));
    else if (part instanceof Uint8Array) n += escapedBytes(part);
    else if (typeof part === "bigint") n += 3 + Math.ceil(part.toString(16).length / 2);
    else n += 9;
  }
  return n;
}

// A tag, the bytes with every 0x00 escaped as two bytes, and a terminator.
function escapedBytes(bytes) {
  let zeros = 0;
  for (const b of bytes) if (b === 0) zeros++;
  return bytes.length + zeros + 2;
}

/** Bytes of a value as Deno KV stores it: raw for bytes, V8-serialized (never above twice its
 * JSON, for the small records this module writes) for anything else. */
function valueBytes(value) {
  return value instanceof Uint8Array ? value.length : 2 * JSON.stringify(value).length + 16;
}
