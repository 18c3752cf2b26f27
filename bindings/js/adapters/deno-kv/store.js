// The page store of a ttlkv database on Deno KV: the `DenoKvPageStore` class that deno-kv.js hands
// out (reads, commits, journals, sweeps and recovery), and the key layout and commit protocol below.
// Size: over 450 lines because the class (about 415 of them) is one unit: its methods share the
// adapter's head cache, recovery and commit queue as private fields. The protocol it implements
// is explained here, beside it.
//
// This module owns these keys under the caller's prefix P (one prefix per database; prefixes may
// nest, e.g. ["ttlkv"] and ["ttlkv", "sessions"]: a prefix never contains one of the parts below,
// so one database's keys never fall under another's):
//   [...P, "head"]                       { version, manifest, pending, commit }: the manifest
//                                        version and where its bytes are, a journal not yet
//                                        applied, and the id of the commit that wrote the head
//   [...P, "page", "w/"|"m/"|"d/", rest] where page `w/…`, `m/…` or `d/…/…` is: a blob ref
//   [...P, "chunk", commit, blob, i]     the bytes of blob number `blob` of commit `commit`, in
//                                        chunks of at most 64 KiB (Deno KV's largest value)
//   [...P, "intent", commit]             a commit writing its chunks that has not reached its
//                                        commit point
//   [...P, "sweep", id]                  blob refs no longer referenced, whose chunks are to go
// A blob ref is { commit, blob, chunks, length }. Chunk keys are unique to one commit and are
// never rewritten, so a chunk is either referenced (by a page, the head or a pending journal),
// or named by an intent or a sweep record, or being written under a live intent.
//
// Why a commit is atomic across a crash, although one Deno KV atomic operation holds at most
// 1,000 mutations and 800 KiB and a compaction's commit is megabytes and thousands of pages:
// - A commit that fits in one atomic operation is one: check the head's versionstamp, write the
//   chunks, the page refs, the sweep record of the blobs it replaces, and the new head.
// - A larger one writes its chunks and a journal (every page it puts and deletes) in as many
//   operations as it takes, each checking that its intent record is unchanged; nothing refers to
//   them yet. Then one small operation is the commit point: it checks the head's versionstamp
//   (the manifest version fence) and the intent, deletes the intent and sets the head to the new
//   version, marking the journal pending. Whoever finds the journal pending (this commit, or the
//   next readManifest or commit of any adapter) applies it in slices, each checking that the head
//   is still exactly the pending one, so no late applier can write over a later commit; the last
//   slice clears the mark. Before the commit point the old state is intact; after it, the journal
//   is applied before anything reads the new manifest.
// - Garbage: a slice records the refs it replaces in a sweep record in the same operation; a
//   sweep deletes their chunks, then the record. A crash before a commit point leaves an intent:
//   the first call of an adapter rewrites every intent it finds (checking its versionstamp, so a
//   commit that reached its commit point keeps its chunks, and one still writing can write no
//   further chunk and starts again), deletes the chunks under it and then the intent, and sweeps.

import { AtomicOp, OP_BUDGET, pack, packDeletes, sendAll } from "./atomic.js";
import { CHUNK_BYTES, decodeJournal, encodeJournal, layoutOf, nextHead, placeBlob, versionOf } from "./layout.js";
import { KINDS, checkPageKey } from "./keys.js";
import { asAdapterError, corruption, invalid, storage } from "./errors.js";

const GET_MANY_KEYS = 10;
// Page steps per journal slice: with a prefix of at most MAX_PREFIX_BYTES, 200 page refs, their
// sweep record and the head stay far inside one operation's budget.
const SLICE_STEPS = 200;
const SWEEP_REFS = 200;
// A chunk listing per round trip when collecting an abandoned commit (64 KiB values each).
export const LIST_CHUNKS_BATCH = 32;
// Rounds before giving up when other adapters keep changing the head between our reads.
const MAX_ROUNDS = 8;

export class DenoKvPageStore {
  #kv;
  #prefix;
  // The last head this adapter read or wrote with no journal pending ({ value, versionstamp }):
  // a commit checks its versionstamp, and reads the head again only when that check fails.
  #head = null;
  // First-use recovery, once per adapter (again after a commit whose after-work failed).
  #recovery = null;
  // Commits of this adapter run one at a time.
  #queue = Promise.resolve();

  constructor(kv, prefix) {
    this.#kv = kv;
    this.#prefix = prefix;
  }

  async readManifest() {
    return this.#guard("readManifest", async () => {
      await this.#ready();
      let missing = null;
      for (;;) {
        const head = await this.#settledHead();
        const ref = head.value?.manifest;
        if (!ref) return null;
        const bytes = await this.#readBlob(ref);
        if (bytes) return { version: versionOf(head), bytes };
        // Its chunks are gone: a commit replaced the manifest since the head was read.
        if (head.versionstamp === missing) throw corruption("the manifest's chunks are missing");
        missing = head.versionstamp;
      }
    });
  }

  async getPage(key) {
    return this.#guard("getPage", async () => {
      const indexKey = this.#pageKey(key);
      await this.#ready();
      let missing = null;
      for (;;) {
        const entry = await this.#kv.get(indexKey);
        if (!entry.value) return null;
        const bytes = await this.#readBlob(entry.value);
        if (bytes) return bytes;
        // Its chunks are gone: a commit replaced or deleted the page since its ref was read.
        if (entry.versionstamp === missing) throw corruption(`the chunks of page ${key} are missing`);
        missing = entry.versionstamp;
      }
    });
  }

  async listPages(prefix) {
    return this.#guard("listPages", async () => {
      if (!KINDS.includes(prefix)) throw invalid(`listPages: ${JSON.stringify(prefix)} is not one of ${KINDS.join(", ")}`);
      await this.#ready();
      const keys = [];
      for await (const { key } of this.#kv.list({ prefix: this.#key("page", prefix) })) keys.push(prefix + key.at(-1));
      return keys;
    });
  }

  async commit(commit) {
    const plan = this.#planOf(commit);
    const run = this.#queue.then(() => this.#guard("commit", () => this.#commitNow(plan)));
    this.#queue = run.catch(() => {});
    return run;
  }

  // ---- commits ----

  async #commitNow(plan) {
    await this.#ready();
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const head = await this.#headAt(plan.expectedVersion);
      const id = crypto.randomUUID();
      const landed = (await this.#commitInOneOp(plan, head, id)) ?? (await this.#commitJournaled(plan, head, id));
      if (landed) return;
    }
    throw storage(`the commit lost ${MAX_ROUNDS} races in a row against other writers to the same prefix`);
  }

  /** The current head when its version is `expected`, else a FENCED error. */
  async #headAt(expected) {
    let head = this.#head ?? (await this.#settledHead());
    // The cached head may be stale: only a fresh read can tell this commit it is fenced.
    if (versionOf(head) !== expected) head = await this.#settledHead();
    if (versionOf(head) !== expected) {
      throw Object.assign(new Error(`the stored manifest is version ${versionOf(head)}, not ${expected}`), { code: "FENCED" });
    }
    return head;
  }

  /**
   * The whole commit as one atomic operation: true if it landed, false if the head changed first,
   * undefined if it does not fit in one operation.
   */
  async #commitInOneOp(plan, head, id) {
    const layout = layoutOf(plan, id);
    const op = new AtomicOp().check(this.#key("head"), head.versionstamp);
    for (const { key, value } of layout.blobs.flatMap((blob) => this.#chunks(blob))) op.set(key, value);
    // Too big already, or sure to be once every page has its ref: no need to read the refs.
    if (!op.fits() || op.mutations.length + layout.steps.length >= OP_BUDGET.mutations) return undefined;
    const garbage = await this.#addPageRefs(op, layout.steps, id);
    if (layout.manifest && head.value?.manifest) garbage.push(head.value.manifest);
    const sweeps = this.#addSweeps(op, garbage);
    const next = nextHead(head, plan, layout.manifest, null, id);
    op.set(this.#key("head"), next);
    if (!op.fits()) return undefined;
    const landed = await this.#land(op, next, id);
    if (!landed) return false;
    this.#head = landed;
    await this.#afterCommitPoint(() => this.#sweep(sweeps));
    return true;
  }

  /** The commit through a journal: true if it landed, false if the head or its intent changed first. */
  async #commitJournaled(plan, head, id) {
    const layout = layoutOf(plan, id);
    const journal = placeBlob(layout, encodeJournal(layout.steps));
    const intent = await this.#openIntent(id);
    try {
      if (!(await this.#writeChunks(layout.blobs, intent))) {
        await this.#discard(id, layout.blobs);
        return false;
      }
    } catch (e) {
      await this.#discard(id, layout.blobs);
      throw e;
    }
    const op = new AtomicOp().check(this.#key("head"), head.versionstamp).check(intent.key, intent.versionstamp);
    op.delete(intent.key);
    const sweeps = layout.manifest && head.value?.manifest ? this.#addSweeps(op, [head.value.manifest]) : [];
    const next = nextHead(head, plan, layout.manifest, journal, id);
    op.set(this.#key("head"), next);
    // The commit point. A failure that leaves its outcome unknown is thrown without discarding
    // anything: if it did not land, the intent is still there for recovery to collect.
    const landed = await this.#land(op, next, id);
    if (!landed) {
      await this.#discard(id, layout.blobs);
      return false;
    }
    await this.#afterCommitPoint(async () => {
      await this.#finishJournal(landed);
      await this.#sweep(sweeps);
    });
    return true;
  }

  /**
   * Send the operation holding a commit point; the head it wrote ({ value, versionstamp }), or
   * null if a check failed. A request that failed may still have been applied: then the head
   * names this commit. If the head cannot tell, the error is thrown and the next call recovers
   * whichever it was (a journal to finish, or an intent to collect).
   */
  async #land(op, next, id) {
    let result;
    try {
      result = await op.send(this.#kv);
    } catch (e) {
      const now = await this.#kv.get(this.#key("head")).catch(() => null);
      if (now?.value?.commit !== id) {
        this.#head = null;
        this.#recovery = null;
        throw e;
      }
      result = { ok: true, versionstamp: now.versionstamp };
    }
    if (!result.ok) {
      this.#head = null;
      return null;
    }
    return { value: next, versionstamp: result.versionstamp };
  }

  /** Work after a commit point: the commit has landed whatever happens here, so a failure only
   * leaves the work (applying a journal, sweeping) to the next recovery, which runs it first. */
  async #afterCommitPoint(work) {
    try {
      await work();
    } catch {
      this.#head = null;
      this.#recovery = null;
    }
  }

  async #openIntent(id) {
    const key = this.#key("intent", id);
    const op = new AtomicOp().check(key, null).set(key, { startedAt: Date.now() });
    const { ok, versionstamp } = await op.send(this.#kv);
    if (!ok) throw storage(`commit id ${id} is already in use`);
    return { key, versionstamp };
  }

  /** Write the chunks of `blobs`, each operation checking the intent: false once it is gone. */
  async #writeChunks(blobs, intent) {
    for (const op of pack(blobs.flatMap((blob) => this.#chunks(blob)), [intent])) {
      if (!(await op.send(this.#kv)).ok) return false;
    }
    return true;
  }

  /** Delete what a commit that did not land wrote: its chunks, then its intent. Best effort:
   * whatever is left, the intent names to the next recovery. */
  async #discard(id, blobs) {
    const keys = blobs.flatMap(({ ref }) => this.#chunkKeys(ref));
    keys.push(this.#key("intent", id));
    await sendAll(this.#kv, packDeletes(keys)).catch(() => {});
  }

  // ---- journals, page refs and sweeps ----

  /**
   * Apply the journal the head `head` marks pending, slice by slice, each slice checking that the
   * head is unchanged; the last one clears the mark. Returns the settled head, or null if another
   * adapter finished the journal or the head moved on meanwhile.
   */
  async #finishJournal(head) {
    const ref = head.value.pending;
    const bytes = await this.#readBlob(ref);
    // Its chunks were swept: another adapter finished the journal.
    if (!bytes) return null;
    const steps = decodeJournal(bytes, ref.commit);
    const next = { ...head.value, pending: null };
    const sweeps = [];
    let settled = null;
    for (let start = 0; !settled; start += SLICE_STEPS) {
      const last = start + SLICE_STEPS >= steps.length;
      const op = new AtomicOp().check(this.#key("head"), head.versionstamp);
      const garbage = await this.#addPageRefs(op, steps.slice(start, start + SLICE_STEPS), ref.commit);
      if (last) {
        garbage.push(ref);
        op.set(this.#key("head"), next);
      }
      const records = this.#addSweeps(op, garbage);
      if (op.empty) continue;
      const { ok, versionstamp } = await op.send(this.#kv);
      if (!ok) break;
      sweeps.push(...records);
      if (last) settled = this.#head = { value: next, versionstamp };
    }
    // What the slices that landed recorded is unreferenced already, whoever finishes the rest.
    await this.#sweep(sweeps);
    return settled;
  }

  /**
   * Add to `op` the page-ref changes of `steps` ([pageKey, ref or null], deletes being null) and
   * return the refs they replace. A page already holding a ref of commit `id` is done: this
   * makes applying a journal again after a crash change nothing.
   */
  async #addPageRefs(op, steps, id) {
    const keys = steps.map(([page]) => this.#pageKey(page));
    const current = await this.#getMany(keys);
    const garbage = [];
    steps.forEach(([, ref], i) => {
      const old = current[i].value;
      if (old?.commit === id) return;
      if (old) garbage.push(old);
      if (ref) op.set(keys[i], ref);
      else if (old) op.delete(keys[i]);
    });
    return garbage;
  }

  /** Add sweep records naming `refs` to `op`; returns them ({ key, refs }). */
  #addSweeps(op, refs) {
    const records = [];
    for (let i = 0; i < refs.length; i += SWEEP_REFS) {
      const record = { key: this.#key("sweep", crypto.randomUUID()), refs: refs.slice(i, i + SWEEP_REFS) };
      op.set(record.key, record.refs);
      records.push(record);
    }
    return records;
  }

  /** Delete the chunks of each record's refs, then the record. */
  async #sweep(records) {
    const keys = records.flatMap(({ key, refs }) => [...refs.flatMap((ref) => this.#chunkKeys(ref)), key]);
    await sendAll(this.#kv, packDeletes(keys));
  }

  // ---- recovery ----

  #ready() {
    this.#recovery ??= this.#recover().catch((e) => {
      this.#recovery = null;
      throw e;
    });
    return this.#recovery;
  }

  /** Finish a pending journal, collect the commits that never reached their commit point, sweep. */
  async #recover() {
    await this.#settledHead();
    const intents = [];
    for await (const { key, versionstamp } of this.#kv.list({ prefix: this.#key("intent") })) intents.push({ key, versionstamp });
    for (const intent of intents) await this.#abandon(intent);
    const records = [];
    for await (const { key, value } of this.#kv.list({ prefix: this.#key("sweep") })) records.push({ key, refs: value });
    await this.#sweep(records);
  }

  /**
   * Stop the commit of an intent (unless its commit point took the intent first) and delete every
   * chunk written under it, then the intent. Rewriting the intent stops the commit, whose chunk
   * writes and commit point all check the intent's versionstamp; the intent goes last, so a
   * crash before leaves it to the next recovery.
   */
  async #abandon(intent) {
    const op = new AtomicOp().check(intent.key, intent.versionstamp).set(intent.key, { abandonedAt: Date.now() });
    if (!(await op.send(this.#kv)).ok) return;
    const keys = [];
    const chunks = this.#kv.list({ prefix: this.#key("chunk", intent.key.at(-1)) }, { batchSize: LIST_CHUNKS_BATCH });
    for await (const { key } of chunks) keys.push(key);
    keys.push(intent.key);
    await sendAll(this.#kv, packDeletes(keys));
  }

  /** The head, with any journal it marks pending applied first. */
  async #settledHead() {
    let unfinished = null;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const { value, versionstamp } = await this.#kv.get(this.#key("head"));
      const head = { value, versionstamp };
      if (!value?.pending) return (this.#head = head);
      // The same head again: nobody finished its journal, which could not be read.
      if (versionstamp === unfinished) throw corruption(`the chunks of the pending journal of commit ${value.pending.commit} are missing`);
      const settled = await this.#finishJournal(head);
      if (settled) return settled;
      unfinished = versionstamp;
    }
    throw storage(`the head kept changing while its pending journal was being applied (${MAX_ROUNDS} rounds)`);
  }

  // ---- blobs and keys ----

  /** The bytes of a blob, or null if a chunk is missing (a sweep took it). */
  async #readBlob(ref) {
    const entries = await this.#getMany(this.#chunkKeys(ref));
    if (entries.some((e) => !(e.value instanceof Uint8Array))) return null;
    const bytes = new Uint8Array(ref.length);
    let at = 0;
    for (const { value } of entries) {
      if (at + value.length > ref.length) throw corruption(`blob ${ref.blob} of commit ${ref.commit} is longer than its ref says`);
      bytes.set(value, at);
      at += value.length;
    }
    if (at !== ref.length) throw corruption(`blob ${ref.blob} of commit ${ref.commit} is shorter than its ref says`);
    return bytes;
  }

  /** `kv.getMany` for any number of keys (Deno KV reads at most 10 at once), in parallel. */
  async #getMany(keys) {
    const reads = [];
    for (let i = 0; i < keys.length; i += GET_MANY_KEYS) reads.push(this.#kv.getMany(keys.slice(i, i + GET_MANY_KEYS)));
    return (await Promise.all(reads)).flat();
  }

  /** The chunk sets ({ key, value }) that store a blob. */
  #chunks({ ref, bytes }) {
    return this.#chunkKeys(ref).map((key, i) => ({ key, value: bytes.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES) }));
  }

  #chunkKeys(ref) {
    return Array.from({ length: ref.chunks }, (_, i) => this.#chunkKey(ref, i));
  }

  #chunkKey(ref, i) {
    return this.#key("chunk", ref.commit, ref.blob, i);
  }

  #pageKey(page) {
    checkPageKey(page);
    return this.#key("page", page.slice(0, 2), page.slice(2));
  }

  #key(...parts) {
    return [...this.#prefix, ...parts];
  }

  /** The commit's steps ([pageKey, bytes or null]: deletes of pages it does not put, then puts,
   * the last of a page's puts winning) and manifest, checked before anything is written. */
  #planOf(commit) {
    const { expectedVersion, manifest, puts, deletes } = commit ?? {};
    if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 0) throw invalid("commit: expectedVersion is not a non-negative safe integer");
    if (manifest !== null) {
      if (!Number.isSafeInteger(manifest?.version) || !(manifest.bytes instanceof Uint8Array)) {
        throw invalid("commit: manifest is neither null nor { version, bytes }");
      }
      if (manifest.version <= expectedVersion) throw invalid("commit: a new manifest's version must be greater than the expected one");
    }
    if (!Array.isArray(puts) || !Array.isArray(deletes)) throw invalid("commit: puts and deletes must be arrays");
    const latest = new Map();
    for (const [page, bytes] of puts) {
      checkPageKey(page);
      if (!(bytes instanceof Uint8Array)) throw invalid(`commit: the bytes of page ${page} are not a Uint8Array`);
      latest.set(page, bytes);
    }
    const steps = [];
    for (const page of new Set(deletes)) {
      checkPageKey(page);
      if (!latest.has(page)) steps.push([page, null]);
    }
    for (const step of latest) steps.push(step);
    return { expectedVersion, manifest, steps };
  }

  /** Run `body`, giving any error the adapter contract's shape: its own code kept, else STORAGE. */
  async #guard(what, body) {
    try {
      return await body();
    } catch (e) {
      throw asAdapterError(what, e);
    }
  }
}
