// Checking the app's arguments: option objects (plainOptions, checkKnown, readOptions), numbers
// and flags, and what put, expire and scan options mean to the engine (putArgs, conditionBits,
// scanArgs). Every rejection here is an INVALID_ARGUMENT TtlKvError. Each option is read once:
// a check and the call it guards see the same answer, whatever the app's getter or proxy says
// next, or its object holds later.

import { TtlKvError } from "./errors.js";
import { encodeKey, lengthOf, wellFormed } from "./codec.js";
import {
  TTL_DEFAULT, TTL_NO_EXPIRY, TTL_AFTER_MS, TTL_AT, TTL_KEEP,
  PUT_ALWAYS, PUT_IF_ABSENT, PUT_IF_PRESENT,
  EXPIRE_NX, EXPIRE_XX, EXPIRE_GT, EXPIRE_LT, MAX_JS_TTL_MS,
} from "./protocol.js";

export const invalid = (message) => new TtlKvError("INVALID_ARGUMENT", message);

export function plainOptions(opts, what) {
  if (opts === undefined || opts === null) return {};
  if (typeof opts !== "object" || Array.isArray(opts)) throw invalid(`${what} must be an object`);
  return opts;
}

/** A database's or namespace's (`what`) name: a non-empty string without a lone surrogate. */
export function checkName(name, what) {
  if (typeof name !== "string" || !name || !wellFormed(name)) throw invalid(`a ${what} name is a non-empty, well-formed string`);
}

/**
 * `opts` (an options object, or nothing) as a fresh object of its options named in `allowed`,
 * each read once (`optionOf`), after an own option not in `allowed` is refused (`what` names the
 * call). What the call then checks and uses is this object's, not the app's, which may answer
 * differently the next time or change later.
 */
export function readOptions(opts, allowed, what) {
  opts = plainOptions(opts, `${what} options`);
  checkKnown(opts, allowed, what);
  const read = {};
  for (const k of allowed) read[k] = optionOf(opts, k);
  return read;
}

/**
 * Option `k` of `opts`, own or inherited from a prototype of the app's (a class's getter or
 * method), as a plain read finds it; but not from `Object.prototype`: a property put there is on
 * every object, no option the app gave (a polluted `Object.prototype.storage` would otherwise
 * turn every database that names no storage into a memory one).
 */
function optionOf(opts, k) {
  if (hasOwn(opts, k)) return opts[k];
  for (let o = Object.getPrototypeOf(opts); o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    if (hasOwn(o, k)) return opts[k];
  }
  return undefined;
}

const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
/** Whether `Object.prototype` holds a put option (each name a constant: a lookup of its own). */
const putOptionOnObjectPrototype = () => {
  const o = Object.prototype;
  return "ttlMs" in o || "expireAt" in o || "keepTtl" in o || "noExpiry" in o || "ifAbsent" in o || "ifPresent" in o;
};

/** The names of the options `read` gives (not `undefined`), for a rule that allows one of them. */
export const givenOf = (read) => Object.keys(read).filter((k) => read[k] !== undefined);

export function checkKnown(opts, allowed, what) {
  for (const k of Object.keys(opts)) {
    if (!allowed.includes(k)) throw invalid(`unknown ${what} option "${k}"`);
  }
}

export function positiveInt(x, what) {
  if (typeof x !== "number" || !Number.isInteger(x) || x <= 0 || !Number.isSafeInteger(x)) {
    throw invalid(`${what} must be an integer greater than 0`);
  }
  return x;
}

/** A TTL in ms: an integer from 1 to MAX_JS_TTL_MS (past it, an expiry is no exact JS number). */
export function checkedTtl(x, what) {
  if (positiveInt(x, what) > MAX_JS_TTL_MS) tooLong(what);
  return x;
}

export const tooLong = (what) => {
  throw invalid(`${what} must be at most ${MAX_JS_TTL_MS}`);
};

export function integer(x, what) {
  if (typeof x !== "number" || !Number.isSafeInteger(x)) throw invalid(`${what} must be a finite integer`);
  return x;
}

export function flag(x, what) {
  if (x === undefined) return false;
  if (typeof x !== "boolean") throw invalid(`${what} must be a boolean`);
  return x;
}

const PUT_OPTIONS = ["ttlMs", "expireAt", "keepTtl", "noExpiry", "ifAbsent", "ifPresent"];

/** What `putArgs` answers for a put without options: one array for every such put. */
const PLAIN_PUT = Object.freeze([TTL_DEFAULT, 0, PUT_ALWAYS]);

/** [ttlKind, ttlArg, condition] for the engine from put options. */
export function putArgs(opts) {
  if (opts === undefined || opts === null) return PLAIN_PUT;
  opts = plainOptions(opts, "put options");
  checkKnown(opts, PUT_OPTIONS, "put");
  // A put's options are on its hot path: read plainly unless Object.prototype holds one of them.
  const read = putOptionOnObjectPrototype() ? readOptions(opts, PUT_OPTIONS, "put") : opts;
  const { ttlMs, expireAt, keepTtl, noExpiry } = read;
  // Counted first: a put's options are on its hot path, the names only for the error.
  if ((ttlMs !== undefined) + (expireAt !== undefined) + (keepTtl !== undefined) + (noExpiry !== undefined) > 1) {
    const given = givenOf({ ttlMs, expireAt, keepTtl, noExpiry });
    throw invalid(`at most one of ttlMs, expireAt, keepTtl, noExpiry (got ${given.join(", ")})`);
  }
  let kind = TTL_DEFAULT;
  let arg = 0;
  if (ttlMs !== undefined) [kind, arg] = [TTL_AFTER_MS, checkedTtl(ttlMs, "ttlMs")];
  else if (expireAt !== undefined) [kind, arg] = [TTL_AT, integer(expireAt, "expireAt")];
  else if (flag(keepTtl, "keepTtl")) kind = TTL_KEEP;
  else if (flag(noExpiry, "noExpiry")) kind = TTL_NO_EXPIRY;
  const ifAbsent = flag(read.ifAbsent, "ifAbsent");
  const ifPresent = flag(read.ifPresent, "ifPresent");
  if (ifAbsent && ifPresent) throw invalid("ifAbsent and ifPresent cannot both be set");
  return [kind, arg, ifAbsent ? PUT_IF_ABSENT : ifPresent ? PUT_IF_PRESENT : PUT_ALWAYS];
}

/** Whether a batch op's field is one of its put options (the rest are `type`, `key`, `value`). */
const isPutOption = (field) => field !== "type" && field !== "key" && field !== "value";

/**
 * `putArgs` of a batch's put op: its own enumerable fields other than `type`, `key` and `value`
 * are the put's options. An op with no other field (every enumerable one checked, inherited too)
 * takes the plain put's answer without an options object. Reads no field but the options: the
 * op's `value` is read once, by the caller.
 */
export function batchPutArgs(op) {
  for (const field in op) {
    if (isPutOption(field)) {
      const opts = {};
      for (const own of Object.keys(op)) if (isPutOption(own)) opts[own] = op[own];
      return putArgs(opts);
    }
  }
  return PLAIN_PUT;
}

export function conditionBits(cond) {
  cond = plainOptions(cond, "expire condition");
  checkKnown(cond, ["nx", "xx", "gt", "lt"], "expire condition");
  return (flag(cond.nx, "nx") ? EXPIRE_NX : 0) | (flag(cond.xx, "xx") ? EXPIRE_XX : 0) | (flag(cond.gt, "gt") ? EXPIRE_GT : 0) | (flag(cond.lt, "lt") ? EXPIRE_LT : 0);
}

export function scanArgs(opts) {
  const { prefix, start, end, limit: given, reverse } = readOptions(opts, ["prefix", "start", "end", "limit", "reverse"], "scan");
  const keyOrNone = (k, what) => (k === undefined ? undefined : encodeKey(k, what));
  // An empty prefix or start bounds nothing: every key has it / comes after it.
  // (Bytes by their own length, which the copy `encodeKey` makes reads.)
  const emptyIsNone = (k) => ((typeof k === "string" ? k.length : k instanceof Uint8Array ? lengthOf(k) : 1) === 0 ? undefined : k);
  let limit = -1;
  if (given !== undefined) {
    if (typeof given !== "number" || !Number.isSafeInteger(given) || given < 0) {
      throw invalid("limit must be an integer >= 0");
    }
    limit = given;
  }
  return {
    prefix: keyOrNone(emptyIsNone(prefix)),
    start: keyOrNone(emptyIsNone(start)),
    end: keyOrNone(end),
    limit,
    reverse: flag(reverse, "reverse"),
  };
}
