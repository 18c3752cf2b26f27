// Many tabs, one writer. Every tab and worker of an origin that opens IndexedDB database `name`
// takes part; exactly one of them — the holder of the Web Lock `ttlkv:<name>` — runs the engine.
// The others forward every call to it over the BroadcastChannel `ttlkv:<name>` and get the same
// results and errors it would give. When the writer goes away (closed, navigated, killed) the lock
// passes to a waiting tab, which opens the engine — recovering from the manifest and WAL, with
// nothing acknowledged lost — announces itself, and every tab resends the calls still waiting for
// an answer. A tab whose calls get no answer for `writerTimeoutMs` (a frozen writer) takes the
// lock over (`steal`), one takeover at a time however many of its calls timed out; the frozen
// writer's commits then fail with FENCED (the new writer advanced the manifest), and it carries on
// as a forwarding tab. A context waits in the lock's queue with one request at most, withdrawn
// when it closes. Expire events reach every tab.
//
// A call resent after a handover may already have run on the writer that went away (its answer
// was lost with it). Each forwarded call carries an id, and a write records its outcome under it
// in the same atomic batch as its effect: a resent call is answered from that record and runs
// once (engine.js `once`). Snapshots live on the writer that made them and end with it (CLOSED).
import { CODES, TtlKvError } from "./errors.js";
import { forwardedCallError } from "./engine.js";
import { timerDelay } from "./timer.js";

/** Whether this context can coordinate with others (Web Locks and BroadcastChannel). */
export function tabsSupported() {
  return (
    typeof BroadcastChannel === "function" &&
    typeof navigator !== "undefined" &&
    typeof navigator.locks?.request === "function"
  );
}

/** The Web Lock and the BroadcastChannel through which the contexts of database `name` take part. */
const channelName = (name) => `ttlkv:${name}`;

/** Every `Tabs` of this context not closed yet. */
const openHere = new Set();

/** This context, as the `deleted` messages it posts name it. */
const here = randomId();

/**
 * Database `name` was deleted (`destroy()`, here): tell every context of the origin. Its writer's
 * connection let the delete through, but its engine would go on answering from what it holds in
 * memory; told, it gives the role up, and the next writer opens the database anew, empty. This
 * context's own are told at once, before `destroy()` resolves (the message would reach them a
 * task later, after the app's next call), and ignore the message when it reaches them: by then
 * one may hold the role again, on the new database. The message goes out on the channel of each
 * of them that is not closing, where there is one, so that it reaches the writer before the calls
 * that tab sends next (messages from two channels are not ordered against each other).
 */
export function announceDeleted(name) {
  const message = { t: "deleted", from: here };
  let posted = false;
  for (const tabs of openHere) {
    if (tabs.lockName !== channelName(name)) continue;
    tabs.receive({ t: "deleted" });
    if (!tabs.closing) {
      tabs.post(message);
      posted = true;
    }
  }
  if (posted) return;
  const channel = new BroadcastChannel(channelName(name));
  channel.postMessage(message);
  channel.close();
}

function randomId() {
  return Math.random().toString(36).slice(2) + Date.now().toString(36);
}

/**
 * The version of what tabs send each other: a call's method, arguments and answer. A writer
 * answers a call of another version (a tab still running an older or newer ttlkv after the site
 * was updated) with UNSUPPORTED instead of reading it as its own. Raise it whenever a call's
 * arguments or answer change meaning. A call that names none is of version 1: what every ttlkv
 * sent before calls were versioned.
 */
export const TABS_PROTOCOL = 1;
const UNVERSIONED = 1;

function plainError(e) {
  return { code: e?.code ?? "STORAGE", message: String(e?.message ?? e) };
}

/** The error a writer's answer carries, as a TtlKvError (STORAGE where its code is none this version knows). */
function answeredError(error) {
  const code = CODES.includes(error?.code) ? error.code : "STORAGE";
  return new TtlKvError(code, typeof error?.message === "string" ? error.message : "the writer tab's answer held no error");
}

/** The coordinator of one open database in this context. */
export class Tabs {
  /**
   * @param name the database name
   * @param shared the database's Shared (endpoint, listeners)
   * @param becomeWriter async () => LocalEndpoint: open the engine here
   * @param writerTimeoutMs how long a forwarded call may go unanswered before taking over
   */
  constructor(name, shared, becomeWriter, writerTimeoutMs) {
    this.lockName = channelName(name);
    this.shared = shared;
    this.becomeWriter = becomeWriter;
    this.writerTimeoutMs = writerTimeoutMs;
    this.me = randomId();
    this.nextCall = 0;
    this.pending = new Map();
    // The answers of the calls forwarded and not settled yet (a call run here after a handover
    // leaves `pending` before it settles): what a close waits for.
    this.answers = new Set();
    this.closing = false; // close() has begun: no call is forwarded any more
    this.closed = false;
    this.role = "starting";
    this.grant = undefined; // the lock request this context holds the lock through
    this.release = undefined;
    this.queued = false;
    this.stealing = false;
    this.leaving = new AbortController();
    this.channel = new BroadcastChannel(this.lockName);
    this.channel.onmessage = (event) => this.receive(event.data);
    openHere.add(this);
    this.remote = {
      call: (ns, method, args) => this.forward({ ns, method, args }),
      callSnapshot: (id, method, args) => this.forward({ snapshot: id, method, args }),
      release: (id) => this.post({ t: "release", snapshot: id }),
      forget: (id) => this.post({ t: "forget", handle: id }),
    };
  }

  /** Take the writer role if it is free, else start forwarding; resolves once calls can be made. */
  async start() {
    if (!(await this.request({ ifAvailable: true }))) {
      this.follow();
      this.queue();
    }
  }

  /**
   * Ask for the lock that makes this context the writer (`ifAvailable`: only if it is free;
   * `steal`: take it from a writer that stopped answering). Once granted, open the engine here and
   * hold the lock until `close()` or until another tab steals it. Resolves with whether the lock
   * was granted, once the engine is open; rejects if the request or the engine failed.
   */
  request(options, granted) {
    const grant = {};
    return new Promise((resolve, reject) => {
      navigator.locks
        .request(this.lockName, options, async (lock) => {
          granted?.();
          if (lock === null || this.closed) return resolve(false);
          this.grant = grant;
          try {
            await this.takeRole(grant);
          } catch (e) {
            // The engine did not open here: stay a follower and let the lock go to another tab. A
            // closing context stops waiting for its calls (they fail CLOSED, though the next
            // writer might answer them: its close must not wait on a takeover that may never be).
            this.grant = undefined;
            this.follow();
            this.giveUp?.();
            this.retry();
            return reject(e);
          }
          resolve(true);
          if (this.grant !== grant || this.closed) return undefined;
          return new Promise((release) => {
            this.release = release;
          });
        })
        .catch((e) => {
          // Not granted (the request failed, or close() withdrew it), or stolen from this context.
          reject(e);
          if (this.grant === grant) this.lostRole();
        });
    });
  }

  /**
   * Wait in the lock's queue for the role, with one request at most: a context that lost the role
   * while its request was still queued must not add another (each would open an engine in turn).
   */
  queue() {
    if (this.queued || this.closed) return;
    this.queued = true;
    this.request({ signal: this.leaving.signal }, () => {
      this.queued = false;
    }).catch(() => {});
  }

  /** Open the engine here and start answering calls (this context was granted the lock `grant`). */
  async takeRole(grant) {
    const local = await this.becomeWriter();
    // Closed meanwhile, or another tab stole the lock while the engine opened: this engine must
    // not answer calls (another one does).
    if (this.closed || this.grant !== grant) {
      await local.close().catch(() => {});
      return;
    }
    this.role = "writer";
    this.shared.useLocal(local);
    this.post({ t: "writer", from: this.me });
    // Our own calls that were waiting for a writer run here now (the one before may have applied
    // them, so they go as resent calls).
    for (const [id, call] of this.pending) {
      this.pending.delete(id);
      clearTimeout(call.timer);
      this.run({ ...call.full, again: true }).then(call.resolve, call.reject);
    }
  }

  follow() {
    this.role = "follower";
    this.shared.useRemote(this.remote);
  }

  /**
   * Our lock was stolen: another tab decided this writer stopped answering. This context's
   * commits from here on fail with FENCED (the new writer advanced the manifest); it forwards
   * its calls from now on and queues for the role again. An engine still opening under the stolen
   * lock is closed by `takeRole`. Also where the database was deleted under this writer: its
   * engine is closed (its commits fail, the connection is gone) and the role passes on.
   */
  lostRole() {
    this.grant = undefined;
    if (this.closed) return;
    const local = this.shared.local;
    const release = this.release;
    this.release = undefined;
    this.follow();
    // The lock, if still held (a deleted database's writer), goes once the engine has closed:
    // the commits of its close do not race the next writer's open.
    Promise.resolve(local?.close()).catch(() => {}).then(release);
    this.queue();
  }

  /** Run a forwarded call on this context's engine. */
  run(message) {
    const local = this.shared.local;
    if (local === undefined) return Promise.reject(new TtlKvError("FENCED", "this tab is no longer the writer"));
    if (message.snapshot !== undefined) return local.callSnapshot(message.snapshot, message.method, message.args);
    try {
      return Promise.resolve(local.call(message.ns, message.method, message.args, message.id, message.again));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Taking the role here failed, or the lock went to another tab meanwhile: the waiting calls try
   * again after `writerTimeoutMs` (a call's timer that fired while the engine opened did not).
   */
  retry() {
    for (const waiting of this.pending.values()) this.arm(waiting);
  }

  /** Send a call to the writer; resolves or rejects with its answer. */
  forward(message) {
    if (this.closing) return Promise.reject(new TtlKvError("CLOSED", "the database is closed"));
    if (this.role === "writer") return this.run(message);
    const id = `${this.me}:${this.nextCall++}`;
    const full = { ...message, t: "call", v: TABS_PROTOCOL, id, from: this.me };
    const answer = new Promise((resolve, reject) => {
      const call = { message, full, resolve, reject, timer: undefined };
      this.pending.set(id, call);
      this.arm(call);
      this.post(full);
    });
    const settled = () => this.answers.delete(answer);
    this.answers.add(answer);
    answer.then(settled, settled);
    return answer;
  }

  arm(call) {
    clearTimeout(call.timer);
    call.timer = setTimeout(() => {
      if (this.closed || this.role !== "follower" || this.stealing || this.grant || !this.pending.has(call.full.id)) return;
      // The writer holds the lock but does not answer (frozen, hung): take the role over, once.
      // Other calls' timers fire while the engine opens here (after a steal, or under a lock this
      // context's queued request was granted), and each steal would take the lock from the one
      // before it and open one more engine.
      this.stealing = true;
      const done = () => {
        this.stealing = false;
        // A takeover that failed (or lost the lock at once): the waiting calls may try again.
        if (this.role === "follower") this.retry();
      };
      this.request({ steal: true }).then(done, done);
    }, timerDelay(this.writerTimeoutMs));
  }

  receive(data) {
    if (this.closed || data === null || typeof data !== "object") return;
    switch (data.t) {
      case "call": {
        if (this.role !== "writer" || typeof data.id !== "string" || typeof data.from !== "string") return;
        const version = data.v ?? UNVERSIONED;
        const refused =
          version !== TABS_PROTOCOL
            ? new TtlKvError(
                "UNSUPPORTED",
                `a tab runs another version of ttlkv than the writer tab (its calls are of version ${String(version)}, ` +
                  `the writer's of ${TABS_PROTOCOL}): reload the site's tabs so that they all run one version`,
              )
            : forwardedCallError(data);
        // `final`: this context still is the writer, not closing, so a CLOSED answer is the
        // call's own (a snapshot released, a namespace dropped), not this writer going away.
        (refused ? Promise.reject(refused) : this.run(data)).then(
          (value) => this.post({ t: "reply", id: data.id, to: data.from, ok: true, value }),
          (e) => this.post({ t: "reply", id: data.id, to: data.from, ok: false, error: plainError(e), final: this.role === "writer" && !this.closing }),
        );
        return;
      }
      case "release":
        if (this.role === "writer") this.shared.local?.release(data.snapshot);
        return;
      case "forget":
        if (this.role === "writer") this.shared.local?.forget(data.handle);
        return;
      case "reply": {
        if (data.to !== this.me) return;
        const call = this.pending.get(data.id);
        if (call === undefined) return;
        // A writer that is FENCED or CLOSED is going away: the call waits for the next writer (it
        // is resent to it, and runs there once) instead of failing, perhaps after it took effect.
        // A CLOSED the writer marks `final` is the call's own answer (a writer of an earlier
        // version marks none, and its calls wait as before).
        const error = data.ok ? undefined : answeredError(data.error);
        if (error && (error.code === "FENCED" || (error.code === "CLOSED" && !data.final))) {
          this.arm(call);
          return;
        }
        this.pending.delete(data.id);
        clearTimeout(call.timer);
        if (data.ok) call.resolve(data.value);
        else call.reject(error);
        return;
      }
      case "writer":
        // A new writer: whatever we asked the old one and got no answer for goes to it.
        if (data.from === this.me) return;
        if (this.role === "writer") {
          // Two writers cannot both hold the lock; ours was taken. Stop writing here.
          return;
        }
        for (const call of this.pending.values()) {
          this.arm(call);
          call.full.again = true;
          this.post(call.full);
        }
        return;
      case "expire":
        if (Array.isArray(data.expired)) this.shared.emit(data.expired);
        return;
      case "deleted":
        // The writer, or a context opening the engine under the lock (it may have read the
        // database before the delete), gives the role up. One that is closing stops answering
        // calls (they go to the next writer) and lets its close close the engine.
        if (data.from === here || !this.grant) return;
        if (this.closing) this.role = "follower";
        else this.lostRole();
        return;
      default:
    }
  }

  broadcastExpired(expired) {
    this.post({ t: "expire", expired });
  }

  post(message) {
    if (this.closed) return;
    try {
      this.channel.postMessage(message);
    } catch {
      // A closed channel: this context is going away.
    }
  }

  /**
   * Leave: wait for the answers of the calls forwarded before (each may have reached the writer:
   * it settles with its outcome, from the writer, from the next one after a handover, or from
   * this context's engine if the role passes here meanwhile), unless the engine fails to open
   * here under the role (then they fail CLOSED); close the engine if this context is the
   * writer (rejecting as its close does: committing pending writes failed), give the role up,
   * stop listening.
   */
  async close() {
    if (this.closing) return;
    this.closing = true;
    await Promise.race([Promise.allSettled(this.answers), new Promise((r) => (this.giveUp = r))]);
    for (const call of this.pending.values()) {
      clearTimeout(call.timer);
      call.reject(new TtlKvError("CLOSED", "the database is closed"));
    }
    this.pending.clear();
    try {
      await this.shared.local?.close();
    } finally {
      this.shared.local = undefined;
      this.closed = true;
      openHere.delete(this);
      this.channel.close();
      this.release?.();
      // A request still queued would hold this context in memory, and be granted to no one.
      this.leaving.abort();
    }
  }
}
