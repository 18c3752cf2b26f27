// What every handle of one open database shares (`Shared`): where its calls run, its expire
// listeners and events, and the one automatic maintenance timer (when a step runs, how a starved
// timer is caught up, the retry after a failed step); `useKeepAlive` for the entries.

import { decodeKey, decodeValue } from "./codec.js";
import { timerDelay } from "./timer.js";

/**
 * For the entries: how to keep the runtime from ending the work of a maintenance step before it
 * is done (workerd ends a request's I/O when the request ends, unless told to wait for it).
 */
let keepAlive;
export function useKeepAlive(fn) {
  keepAlive = fn;
}

/**
 * An error thrown by the app's expire listener or onExpire hook: reported, never rethrown (it would
 * surface where nothing can catch it, and end a Node process) and never in the way of the purge.
 */
export function report(what, key, e) {
  console.error(`ttlkv: ${what} threw for key`, key, e);
}

/** How long past its time a maintenance timer may wait before its step starts without it. */
const STARVED_MS = 50;
/** How long a maintenance step waits after the one before failed (ms). */
const FAILED_STEP_RETRY_MS = 1_000;
/** Reads between two looks at a starved maintenance timer (see `Shared.schedule`). */
const READS_PER_CHECK = 32;

/**
 * What every handle of one open database shares: where its calls run (`endpoint`: this context's
 * engine, or the writer tab's through `tabs`), its expire listeners, and — while this context
 * runs the engine — the one automatic maintenance timer.
 */
export class Shared {
  constructor(options) {
    this.endpoint = undefined;
    this.local = undefined;
    this.tabs = undefined;
    this.listeners = new Set();
    this.auto = options.maintenance !== "manual";
    this.closed = false;
    // Once `closed`, `closing` is the Promise of the close (`Db.close`), which a close beside it
    // or after it returns: one close, one outcome (set there, not here: what a browser loads).
    this.timer = undefined;
    this.armedFor = undefined;
    this.firesAt = undefined;
    this.running = false;
    this.reads = 0;
    this.failed = false;
  }

  /** Run calls on this context's engine from now on (`local` is a LocalEndpoint). */
  useLocal(local) {
    this.local = local;
    this.endpoint = local;
    this.schedule();
  }

  /** Run calls elsewhere from now on (this context lost, or never had, the writer role). */
  useRemote(remote) {
    this.local = undefined;
    this.endpoint = remote;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = undefined;
  }

  /** Whether expire events have anywhere to go: a listener here, or other tabs. */
  wantsExpired() {
    return this.listeners.size > 0 || this.tabs !== undefined;
  }

  /** Expire events of a purge this context ran: to its listeners and to every other tab. */
  publish(expired) {
    if (expired.length === 0) return;
    this.emit(expired);
    this.tabs?.broadcastExpired(expired);
  }

  emit(expired) {
    if (this.listeners.size === 0) return;
    for (const [namespace, key, value, expireAt] of expired) {
      const decoded = decodeValue(value);
      const event = { key: decodeKey(key, decoded.keyWasString), value: decoded.value, expireAt };
      if (namespace !== "") event.namespace = namespace;
      for (const fn of this.listeners) {
        try {
          fn(event);
        } catch (e) {
          report("an expire listener", event.key, e);
        }
      }
    }
  }

  /**
   * Arm the one maintenance timer for the engine's next wake-up. Called after every call that
   * reaches this context's engine, its own or forwarded by another tab (LocalEndpoint.call): an app
   * that never yields to the timer queue (a loop of awaited calls on memory storage resolves in
   * microtasks alone) would starve the timer, and flushed tables would pile up in level 0 with
   * every read probing each of them. So a timer that is STARVED_MS overdue (past the time it was
   * set to fire) is not waited for: its step starts now, beside the app's calls.
   * After a read that check is all there is to do, and it looks at the clock, so only every
   * READS_PER_CHECK-th read makes it.
   */
  schedule(afterRead = false) {
    const local = this.local;
    if (!this.auto || this.closed || this.running || local === undefined || local.stopped) return;
    if (afterRead && ++this.reads % READS_PER_CHECK !== 0) return;
    if (this.timer !== undefined) {
      const now = local.root.now();
      if (now >= this.firesAt + STARVED_MS) {
        clearTimeout(this.timer);
        // The caller's answer waits for the step (LocalEndpoint.call): in a runtime that ends a
        // request's I/O with the request (workerd), a step left running beside it would be cut
        // off half-way and hold the engine for every later request.
        return this.run();
      }
      // Armed for now or earlier: no wake-up can be earlier than that.
      if (this.armedFor <= now) return;
    }
    // A read brings no work forward, and asking the engine costs a look at every table.
    if (afterRead) return;
    const next = local.root.nextWakeupMs();
    if (next == null) return;
    // An armed timer (`armedFor` is set exactly while one is) as early as this needs nothing.
    if (this.armedFor <= next) return;
    clearTimeout(this.timer);
    const now = local.root.now();
    // After a failed step (storage failing, a clock reading that is no plausible time) the next
    // waits a while: its wake-up is due at once, and retrying at once would spin.
    const delay = timerDelay(Math.max(this.failed ? FAILED_STEP_RETRY_MS : 0, next - now));
    this.armedFor = next;
    this.firesAt = now + delay;
    this.timer = setTimeout(() => this.run(), delay);
    // The timer never keeps a Node process alive on its own (elsewhere a timer is a number).
    this.timer.unref?.();
  }

  /** Run one maintenance step; the Promise settles (never rejects) when it is done. */
  run() {
    this.timer = undefined;
    this.armedFor = undefined;
    const local = this.local;
    if (this.closed || local === undefined) return undefined;
    this.running = true;
    const step = (async () => {
      try {
        await local.call(null, "maintenance", []);
        this.failed = false;
      } catch {
        // A failed step is retried after a while; the error reaches callers of writes.
        this.failed = true;
      } finally {
        this.running = false;
      }
      this.schedule();
    })();
    keepAlive?.(step);
    return step;
  }

  /** For good: a closed database schedules and runs nothing again. */
  stop() {
    this.closed = true;
    clearTimeout(this.timer);
  }
}
