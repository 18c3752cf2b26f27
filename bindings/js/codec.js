// Keys and values as the engine stores them: bytes. A key is a string (UTF-8) or a Uint8Array;
// a value is a string, a Uint8Array or a JSON-compatible value, stored behind one tag byte that
// also remembers whether its key was given as a string (so scans give keys back as strings).

import { TtlKvError } from "./errors.js";
import {
  VALUE_STRING,
  VALUE_BYTES,
  VALUE_JSON,
  VALUE_TAG_MASK,
  KEY_WAS_STRING,
  MAX_KEY_BYTES,
  MAX_VALUE_BYTES,
  BATCH_PUT,
  BATCH_DELETE,
  BATCH_OP_FIELDS,
  TTL_DEFAULT,
  PUT_ALWAYS,
} from "./protocol.js";

const encoder = new TextEncoder();
// A leading U+FEFF is part of the text, not a byte-order mark to drop.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

// The tag byte and the limits are protocol.js's; the engine's `get` decodes string and JSON
// values itself by the same tags (`value_js` in bindings/web/src/api/answers.rs).
export { MAX_KEY_BYTES, MAX_VALUE_BYTES };
const MAX_JSON_DEPTH = 256;

/** Key bytes and whether the key was a string. */
export function encodeKey(key) {
  return keyBytes(key, true);
}

/**
 * As `encodeKey`, but a string key that fits the scratch space comes back as a view of it, not
 * a copy, under the rules of `encodeValueInPlace`: only for a call that copies it before anything
 * else runs.
 */
export function encodeKeyInPlace(key) {
  return keyBytes(key, false);
}

function keyBytes(key, copy) {
  let bytes;
  if (typeof key === "string") {
    // Every UTF-16 unit is at least one UTF-8 byte: a key longer than the limit in units is too
    // large whatever it holds. One within it fits the scratch space (3 bytes per unit at most).
    if (key.length > MAX_KEY_BYTES) checkKeyLength(utf8Length(key));
    const end = writeUtf8(scratch, 0, key);
    bytes = copy ? scratch.slice(0, end) : scratch.subarray(0, end);
  }
  else if (key instanceof Uint8Array) {
    // A copy, made now (checked first, by the array's own length, which the copy reads): the
    // app's array could change before the engine copies it (an option's getter runs after the
    // key is encoded, and a namespace's call reaches the engine later).
    checkKeyLength(lengthOf(key));
    return new Uint8Array(key);
  } else throw new TtlKvError("INVALID_ARGUMENT", "a key must be a string or a Uint8Array");
  checkKeyLength(bytes.length);
  return bytes;
}

/**
 * Whether string `key` may go to the engine as it is (`getStr`, the glue encoding it straight into
 * the engine's memory): not empty, and too short for its UTF-8 (3 bytes a unit at most) to pass
 * MAX_KEY_BYTES, and well-formed, so the checks `encodeKey` makes cannot fail for it.
 */
export function passedAsString(key) {
  return typeof key === "string" && key.length !== 0 && key.length * 3 <= MAX_KEY_BYTES && wellFormed(key);
}

/** `text`'s UTF-8 size (a lone surrogate 3 bytes, as encoded), counted without allocating it. */
function utf8Length(text) {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) bytes += 1;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2;
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/** INVALID_ARGUMENT for an empty key, KEY_TOO_LARGE for one over MAX_KEY_BYTES. */
function checkKeyLength(length) {
  if (length === 0) throw new TtlKvError("INVALID_ARGUMENT", "a key must be at least 1 byte");
  if (length > MAX_KEY_BYTES) throw new TtlKvError("KEY_TOO_LARGE", `key of ${length} bytes exceeds ${MAX_KEY_BYTES}`);
}

/**
 * Strings shorter than this are copied unit by unit while they are ASCII; longer ones go through
 * `encodeInto`. Where `encodeInto` is a call into the host's C++ bindings (browsers, workerd) the
 * loop is the faster up to about 128 units (Chromium: a 100-unit string 270–350 ns against
 * 545–920 ns); Node and Deno implement it far faster (100 units: 150 against 500 ns in Node, 100
 * against 250 ns in Deno), and their entries lower the bound (`encodeStringsFrom`).
 */
let shortString = 128;

/** Strings of `units` UTF-16 units or more are encoded by `TextEncoder.encodeInto` (see above). */
export function encodeStringsFrom(units) {
  shortString = units;
}

/**
 * Writes `string` as UTF-8 into `bytes` from `at` (the caller leaves room for 3 bytes per UTF-16
 * unit); returns the bytes written: a short ASCII string unit by unit, which beats `encodeInto`
 * and the view it needs, a longer one by `encodeInto`.
 */
function writeUtf8(bytes, at, string) {
  if (string.length >= shortString) {
    checkWellFormed(string);
    return encoder.encodeInto(string, bytes.subarray(at)).written;
  }
  let i = 0;
  for (; i < string.length; i++) {
    const unit = string.charCodeAt(i);
    if (unit >= 0x80) break;
    bytes[at + i] = unit;
  }
  if (i === string.length) return i;
  checkWellFormed(string);
  return i + encoder.encodeInto(string.slice(i), bytes.subarray(at + i)).written;
}

/** Whether `string` has no lone surrogate (`isWellFormed`, where the runtime has it). */
export const wellFormed = String.prototype.isWellFormed ? (s) => s.isWellFormed() : (s) => !/\p{Cs}/u.test(s);

/**
 * INVALID_ARGUMENT for a string with a lone surrogate: it has no UTF-8, and the encoder would
 * write U+FFFD in its place, so two different keys would be one and a value would change.
 */
function checkWellFormed(string) {
  if (!wellFormed(string)) throw new TtlKvError("INVALID_ARGUMENT", "a string cannot hold a lone surrogate");
}

/** Key bytes back to the type it was stored with. */
export function decodeKey(bytes, wasString) {
  return wasString ? decoder.decode(bytes) : bytes;
}

// A JSON-compatible value: null, boolean, finite number, string, array, plain object. Rejects
// everything JSON.stringify would silently change (NaN, undefined, functions, Dates, cycles), and
// returns a copy of its objects and arrays that holds exactly the values it checked: each
// property it meets is read once (an app's getter or proxy trap runs once), so a value cannot
// pass the check as one thing and be encoded as another (a getter that returns 1, then NaN, would
// be stored as null). The copy is what JSON.stringify encodes; its cost is about the check's own.
// An array's or plain object's `toJSON` method is called as JSON.stringify calls it (once, with
// the key it is under), and its answer, checked as any value, stands for it; the answer's own
// `toJSON` is not asked (`answered`). An object's properties are defined on the copy, not
// assigned, where `Object.prototype` has one of the name (a setter there, or the prototype frozen,
// would take or refuse an assignment; `__proto__` would set the copy's prototype), and a copy of
// an object with no prototype has none (nothing inherited reaches JSON.stringify).
function checkedJson(value, depth, seen, key, answered) {
  if (value === null || typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TtlKvError("INVALID_ARGUMENT", "numbers in a value must be finite");
    return value;
  }
  if (typeof value !== "object") {
    throw new TtlKvError("INVALID_ARGUMENT", `a value cannot hold a ${typeof value}`);
  }
  if (depth > MAX_JSON_DEPTH) throw new TtlKvError("INVALID_ARGUMENT", "a value is nested too deeply");
  if (seen.has(value)) throw new TtlKvError("INVALID_ARGUMENT", "a value cannot contain a cycle");
  const array = Array.isArray(value);
  const proto = array ? undefined : Object.getPrototypeOf(value);
  if (!array && proto !== Object.prototype && proto !== null) {
    throw new TtlKvError("INVALID_ARGUMENT", "objects in a value must be plain objects");
  }
  if (!answered) {
    const toJSON = value.toJSON;
    if (typeof toJSON === "function") {
      return checkedJson(Reflect.apply(toJSON, value, [String(key)]), depth + 1, seen, key, true);
    }
  }
  seen.add(value);
  let copy;
  if (array) {
    copy = [];
    const length = value.length;
    for (let i = 0; i < length; i++) copy.push(checkedJson(value[i], depth + 1, seen, i, false));
  } else {
    copy = proto === null ? Object.create(null) : {};
    for (const k of Object.keys(value)) {
      const v = checkedJson(value[k], depth + 1, seen, k, false);
      if (k in Object.prototype) Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true, configurable: true });
      else copy[k] = v;
    }
  }
  seen.delete(value);
  return copy;
}

function tooLarge(bytes) {
  throw new TtlKvError("VALUE_TOO_LARGE", `value of ${bytes} bytes exceeds ${MAX_VALUE_BYTES}`);
}

/** VALUE_TOO_LARGE for text longer than the limit in UTF-16 units (each at least a UTF-8 byte). */
function refuseLongText(text) {
  if (text.length > MAX_VALUE_BYTES) tooLarge(utf8Length(text));
}

/**
 * `[tag, payload]` for `value`: the payload is a string, to be stored as UTF-8, or bytes already
 * checked against MAX_VALUE_BYTES. INVALID_ARGUMENT for what cannot be stored.
 */
function valuePayload(value) {
  if (typeof value === "string") return [VALUE_STRING, value];
  if (value instanceof Uint8Array) {
    const length = lengthOf(value);
    if (length > MAX_VALUE_BYTES) tooLarge(length);
    return [VALUE_BYTES, value];
  }
  if (value === undefined) throw new TtlKvError("INVALID_ARGUMENT", "a value cannot be undefined");
  return [VALUE_JSON, JSON.stringify(checkedJson(value, 0, new Set(), "", false))];
}

/** The tag byte of a value with tag `tag` whose key was (or was not) a string. */
const tagByte = (tag, keyWasString) => tag | (keyWasString ? KEY_WAS_STRING : 0);

// Scratch space for encoding: a string is encoded into it behind its tag byte, then copied out
// at its exact size (one allocation per value instead of two), or handed over in place to a call
// that copies it at once (`encodeValueInPlace`). It is far smaller than MAX_VALUE_BYTES, so only
// a string too long for it has its size checked.
const SCRATCH_BYTES = 64 * 1024;
const scratch = new Uint8Array(SCRATCH_BYTES);

/**
 * A Uint8Array's length as the array itself holds it, which is what copying it (`set`, `new
 * Uint8Array(bytes)`) reads: a subclass's or an own `length` property cannot tell a check one
 * length and the copy another.
 */
const typedArrayLength = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), "length").get;
export const lengthOf = (bytes) => Reflect.apply(typedArrayLength, bytes, []);

/** `payload` (checked) behind the tag byte `first`. */
function tagged(first, payload) {
  const out = new Uint8Array(lengthOf(payload) + 1);
  out[0] = first;
  out.set(payload, 1);
  return out;
}

/** Tagged value bytes for `value`, remembering whether the key was a string. */
export function encodeValue(value, keyWasString) {
  return encode(value, keyWasString, true);
}

/**
 * As `encodeValue`, but a string that fits the scratch space comes back as a view of it, not a
 * copy: valid only until the next encode. Only for a call that copies it before anything else
 * runs (the engine's own methods on this context copy their arguments into WebAssembly memory as
 * they are called). A value of more than 64 bytes is a buffer outside V8's heap, whose making
 * took a tenth of a put's time.
 */
export function encodeValueInPlace(value, keyWasString) {
  return encode(value, keyWasString, false);
}

function encode(value, keyWasString, copy) {
  const [tag, payload] = valuePayload(value);
  const first = tagByte(tag, keyWasString);
  if (typeof payload !== "string") return tagged(first, payload);
  if (payload.length * 3 < SCRATCH_BYTES) {
    scratch[0] = first;
    const end = writeUtf8(scratch, 1, payload) + 1;
    return copy ? scratch.slice(0, end) : scratch.subarray(0, end);
  }
  checkWellFormed(payload);
  refuseLongText(payload);
  const bytes = encoder.encode(payload);
  if (bytes.length > MAX_VALUE_BYTES) tooLarge(bytes.length);
  return tagged(first, bytes);
}

// A batch crosses into the engine as one buffer: every op's key bytes, then (for a put) its
// tagged value bytes, back to back, with six numbers per op beside them in a Float64Array:
// [type (BATCH_PUT or BATCH_DELETE), key length, value length, TTL kind, TTL argument, condition].
// One copy into WebAssembly memory per batch instead of two typed arrays per op.

// A batch is packed into buffers kept from one batch to the next (a batch of 1,000 small ops
// needs about 180 KB: made anew each time, outside V8's heap, they brought its collector round
// every few batches), unless another batch is being packed into them: an app's getter, run
// while its batch is packed, may pack one of its own. Each is kept up to 256 KiB (2,048 ops'
// bytes at the start, 5,461 ops' numbers); a larger batch packs into buffers of its own.
const KEEP_BYTES = 256 * 1024;
const packing = { bytes: new Uint8Array(0), meta: new Float64Array(0), busy: false };

/**
 * Builds the packed form of a batch, one op at a time (see above). `release` once the engine
 * has the batch (`finish`), whatever happened: the buffers may be the ones kept for the next.
 */
export class PackedBatch {
  #bytes;
  #length = 0;
  #meta;
  #ops = 0;
  #pendingKey = 0;
  #pendingKeyWasString = false;
  #opCount;
  #kept;

  constructor(opCount) {
    // Room for 128 bytes per op, up to 1 MiB; it grows as the ops need.
    const bytes = Math.min(Math.max(256, opCount * 128), 1024 * 1024);
    const fields = opCount * BATCH_OP_FIELDS;
    const kept = !packing.busy && bytes <= KEEP_BYTES && fields * 8 <= KEEP_BYTES;
    // Made before the kept buffers are marked taken: a failure to make them leaves them free.
    if (kept && packing.bytes.length < bytes) packing.bytes = new Uint8Array(bytes);
    if (kept && packing.meta.length < fields) packing.meta = new Float64Array(fields);
    this.#bytes = kept ? packing.bytes : new Uint8Array(bytes);
    this.#meta = kept ? packing.meta : new Float64Array(fields);
    this.#opCount = opCount;
    this.#kept = kept;
    packing.busy ||= kept;
  }

  /** Hands the buffers back to be kept for the next batch (if they came from there). */
  release() {
    if (!this.#kept) return;
    this.#kept = false;
    if (this.#bytes.length <= KEEP_BYTES) packing.bytes = this.#bytes;
    packing.busy = false;
  }

  /** Room for `extra` more bytes. */
  #reserve(extra) {
    const needed = this.#length + extra;
    if (needed <= this.#bytes.length) return;
    const grown = new Uint8Array(Math.max(needed, this.#bytes.length * 2));
    grown.set(this.#bytes.subarray(0, this.#length));
    this.#bytes = grown;
  }

  /** Appends `string` as UTF-8; returns its byte length. */
  #utf8(string) {
    this.#reserve(string.length * 3);
    const written = writeUtf8(this.#bytes, this.#length, string);
    this.#length += written;
    return written;
  }

  /** Appends `bytes`; returns their length. */
  #append(bytes) {
    const length = lengthOf(bytes);
    this.#reserve(length);
    this.#bytes.set(bytes, this.#length);
    this.#length += length;
    return length;
  }

  /** Appends the key's bytes; returns their length. Same errors as `encodeKey`. */
  #key(key) {
    // Bytes are copied into the batch here, before the op's other fields are read, and checked
    // by their own length (which the copy reads) first.
    if (key instanceof Uint8Array) {
      checkKeyLength(lengthOf(key));
      return this.#append(key);
    }
    // Not a key, or a string too long whatever it holds: checked whole before anything is copied.
    if (typeof key !== "string" || key.length > MAX_KEY_BYTES) return this.#append(encodeKey(key));
    const length = this.#utf8(key);
    checkKeyLength(length);
    return length;
  }

  /** Appends `value` behind its tag byte; returns the tagged length. Same errors as `encodeValue`. */
  #value(value, keyWasString) {
    const [tag, payload] = valuePayload(value);
    if (typeof payload === "string") refuseLongText(payload);
    this.#reserve(1);
    this.#bytes[this.#length++] = tagByte(tag, keyWasString);
    if (typeof payload !== "string") return this.#append(payload) + 1;
    const written = this.#utf8(payload);
    if (written > MAX_VALUE_BYTES) tooLarge(written);
    return written + 1;
  }

  /**
   * Starts the next op with its key (same errors as `encodeKey`); `put` or `delete` completes it.
   * The key comes first, so a bad key is the error reported for an op whatever else is wrong.
   */
  key(key) {
    this.#pendingKey = this.#key(key);
    this.#pendingKeyWasString = typeof key === "string";
  }

  /** Completes the op as a put: `ttlKind`, `ttlArg` and `condition` as the engine's `put` takes them. */
  put(value, ttlKind, ttlArg, condition) {
    const valueLength = this.#value(value, this.#pendingKeyWasString);
    this.#op(BATCH_PUT, valueLength, ttlKind, ttlArg, condition);
  }

  /** Completes the op as a delete. */
  delete() {
    this.#op(BATCH_DELETE, 0, TTL_DEFAULT, 0, PUT_ALWAYS);
  }

  #op(type, valueLength, ttlKind, ttlArg, condition) {
    // An app's getter may add to the array while its ops are read: an op past the count the
    // batch began with is refused, whatever room a kept buffer has.
    if (this.#ops === this.#opCount) throw new TtlKvError("INVALID_ARGUMENT", "the batch's array grew while it was read");
    const meta = this.#meta;
    const at = this.#ops++ * BATCH_OP_FIELDS;
    meta[at] = type;
    meta[at + 1] = this.#pendingKey;
    meta[at + 2] = valueLength;
    meta[at + 3] = ttlKind;
    meta[at + 4] = ttlArg;
    meta[at + 5] = condition;
  }

  /**
   * `[bytes, meta]`: the arguments of the engine's `batch`; views of the buffers `inPlace`, for a
   * call that copies them before it returns (`encodeValueInPlace`'s rule), or where they are this
   * batch's own (no later batch packs into them); else copies.
   */
  finish(inPlace) {
    const bytes = this.#bytes.subarray(0, this.#length);
    const meta = this.#meta.subarray(0, this.#ops * BATCH_OP_FIELDS);
    return inPlace || !this.#kept ? [bytes, meta] : [bytes.slice(), meta.slice()];
  }
}

/** `{ value, keyWasString }` from tagged value bytes. */
export function decodeValue(bytes) {
  if (!(bytes instanceof Uint8Array) || bytes.length === 0) {
    throw new TtlKvError("CORRUPTION", "a stored value has no type tag");
  }
  const keyWasString = (bytes[0] & KEY_WAS_STRING) !== 0;
  const payload = bytes.subarray(1);
  switch (bytes[0] & VALUE_TAG_MASK) {
    case VALUE_STRING:
      return { value: decoder.decode(payload), keyWasString };
    case VALUE_BYTES:
      return { value: payload.slice(), keyWasString };
    case VALUE_JSON:
      // JSON.parse makes "__proto__" an own data property: it never touches a prototype.
      return { value: JSON.parse(decoder.decode(payload)), keyWasString };
    default:
      throw new TtlKvError("CORRUPTION", `unknown value type tag ${bytes[0]}`);
  }
}
