// Test support for the scripts Deno runs (tests/runtimes/deno.test.mjs copies this directory into
// a scratch project): a Deno KV with a fault injected at its N-th operation, an audit of what the
// Deno KV adapter keeps under a prefix, and an adapter's contents in comparable form.

/** The error an injected fault throws. */
export class InjectedFault extends Error {
  constructor(n, what) {
    super(`injected fault at KV operation ${n} (${what})`);
    this.name = "InjectedFault";
  }
}

/**
 * `kv` with a fault at operation number `at` (1-based: a get, a getMany, a list and an atomic
 * commit are one operation each). `mode`:
 * - "crash": that operation and every later one throw without reaching the KV (the process died);
 * - "crash-after": that operation reaches the KV, then it and every later one throw (the process
 *   died before the reply came back);
 * - "refused": that operation alone throws `error` without reaching the KV;
 * - "lost-reply": that operation alone reaches the KV and then throws.
 * `onOp(n)` runs before operation n. `count()` is how many operations were made; after `heal()`
 * no fault comes any more.
 */
export function faultyKv(kv, { at = Infinity, mode = "crash", error, onOp } = {}) {
  let n = 0;
  let dead = false;
  async function step(what, run) {
    const mine = ++n;
    await onOp?.(mine);
    if (dead) throw new InjectedFault(mine, what);
    if (mine !== at) return run();
    if (mode === "crash" || mode === "refused") {
      dead = mode === "crash";
      throw error ?? new InjectedFault(mine, what);
    }
    await run();
    dead = mode === "crash-after";
    throw new InjectedFault(mine, what);
  }
  return {
    count: () => n,
    heal: () => {
      at = Infinity;
    },
    get: (key) => step("get", () => kv.get(key)),
    getMany: (keys) => step("getMany", () => kv.getMany(keys)),
    async *list(selector, options) {
      yield* await step("list", () => Array.fromAsync(kv.list(selector, options)));
    },
    atomic() {
      const calls = [];
      const op = {
        check: (...checks) => (calls.push(["check", ...checks]), op),
        set: (key, value) => (calls.push(["set", key, value]), op),
        delete: (key) => (calls.push(["delete", key]), op),
        commit: () =>
          step("atomic", () => {
            const real = kv.atomic();
            for (const [method, ...args] of calls) real[method](...args);
            return real.commit();
          }),
      };
      return op;
    },
  };
}

/**
 * What is wrong with the keys the adapter keeps under `prefix` once a recovery has run: a pending
 * journal, intents or sweep records left, chunks no ref points at (orphans), chunks a ref
 * points at that are missing. An empty list when all is well.
 */
export async function audit(kv, prefix) {
  const problems = [];
  const chunks = new Set();
  const refs = [];
  for await (const { key, value } of kv.list({ prefix })) {
    const [kind, ...rest] = key.slice(prefix.length);
    if (kind === "head") {
      if (value.pending) problems.push("a journal is still pending");
      if (value.manifest) refs.push(value.manifest);
    } else if (kind === "page") refs.push(value);
    else if (kind === "chunk") chunks.add(rest.join("/"));
    else problems.push(`a ${kind} record is left: ${rest.join("/")}`);
  }
  for (const ref of refs) {
    for (let i = 0; i < ref.chunks; i++) {
      const name = `${ref.commit}/${ref.blob}/${i}`;
      if (!chunks.delete(name)) problems.push(`chunk ${name} is referenced but missing`);
    }
  }
  for (const name of chunks) problems.push(`chunk ${name} is an orphan`);
  return problems;
}

/**
 * Everything an adapter holds, page bytes as digests, in one string (equal strings, equal
 * stores). Pages are read before the manifest, as the engine reads them after its own commits.
 */
export async function contents(adapter) {
  const keys = (await Promise.all(["w/", "m/", "d/"].map((kind) => adapter.listPages(kind)))).flat();
  const pages = Object.fromEntries(await Promise.all(keys.map(async (key) => [key, digest(await adapter.getPage(key))])));
  const manifest = await adapter.readManifest();
  return canonical({ manifest: manifest && { version: manifest.version, bytes: digest(manifest.bytes) }, pages });
}

/** What a commit leaves in a store holding `before` (a `contents` string), as `contents` says it. */
export function contentsAfter(before, { manifest, puts, deletes }) {
  const state = JSON.parse(before);
  for (const key of deletes) delete state.pages[key];
  for (const [key, bytes] of puts) state.pages[key] = digest(bytes);
  if (manifest) state.manifest = { version: manifest.version, bytes: digest(manifest.bytes) };
  return canonical(state);
}

function canonical({ manifest, pages }) {
  return JSON.stringify({ manifest, pages: Object.fromEntries(Object.entries(pages).sort(([a], [b]) => (a < b ? -1 : 1))) });
}

/** Length and FNV-1a of `bytes`. */
export function digest(bytes) {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193);
  return `${bytes.length}:${(h >>> 0).toString(16)}`;
}

/** `len` pseudo-random bytes determined by `seed`. */
export function bytes(seed, len) {
  const out = new Uint8Array(len);
  let s = (seed * 2654435761 + 1) >>> 0 || 1;
  for (let i = 0; i < len; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out[i] = s & 0xff;
  }
  return out;
}

/** The page key of SST data page `index` of file `file` (as the engine names it). */
export const dataPage = (file, index) => `d/${file.toString(16).padStart(16, "0")}/${index.toString(16).padStart(8, "0")}`;
/** The page key of WAL page `file`. */
export const walPage = (file) => `w/${file.toString(16).padStart(16, "0")}`;
/** The page key of SST meta page `file`. */
export const metaPage = (file) => `m/${file.toString(16).padStart(16, "0")}`;

/** The code of an adapter's rejection, or "resolved". */
export async function outcome(promise) {
  try {
    await promise;
    return "resolved";
  } catch (e) {
    return e?.code ?? `no code: ${e}`;
  }
}
