// Keys and values as the engine stores them: bytes. A key is a string (UTF-8) or a Uint8Array;
// a value is a string, a Uint8Array or a JSON-compatible value, stored behind one tag byte that
// also remembers whether its key was given as a string (so scans give keys back as strings).

import { TtlKvError } from "./errors.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

const TAG_STRING = 0;
const TAG_BYTES = 1;
const TAG_JSON = 2;
const KEY_WAS_STRING = 0x80;

export const MAX_KEY_BYTES = 4096;
export const MAX_VALUE_BYTES = 16 * 1024 * 1024;
const MAX_JSON_DEPTH = 256;

/** Key bytes and whether the key was a string. */
export function encodeKey(key) {
  let bytes;
  if (typeof key === "string") bytes = encoder.encode(key);
  else if (key instanceof Uint8Array) bytes = key;
  else throw new TtlKvError("INVALID_ARGUMENT", "a key must be a string or a Uint8Array");
  if (bytes.length === 0) throw new TtlKvError("INVALID_ARGUMENT", "a key must be at least 1 byte");
  if (bytes.length > MAX_KEY_BYTES) {
    throw new TtlKvError("KEY_TOO_LARGE", `key of ${bytes.length} bytes exceeds ${MAX_KEY_BYTES}`);
  }
  return bytes;
}

/** Key bytes back to the type it was stored with. */
export function decodeKey(bytes, wasString) {
  return wasString ? decoder.decode(bytes) : bytes;
}

// A JSON-compatible value: null, boolean, finite number, string, array, plain object. Rejects
// everything JSON.stringify would silently change (NaN, undefined, functions, Dates, cycles).
function checkJson(value, depth, seen) {
  if (value === null || typeof value === "boolean" || typeof value === "string") return;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TtlKvError("INVALID_ARGUMENT", "numbers in a value must be finite");
    return;
  }
  if (typeof value !== "object") {
    throw new TtlKvError("INVALID_ARGUMENT", `a value cannot hold a ${typeof value}`);
  }
  if (depth > MAX_JSON_DEPTH) throw new TtlKvError("INVALID_ARGUMENT", "a value is nested too deeply");
  if (seen.has(value)) throw new TtlKvError("INVALID_ARGUMENT", "a value cannot contain a cycle");
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) checkJson(value[i], depth + 1, seen);
  } else {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      throw new TtlKvError("INVALID_ARGUMENT", "objects in a value must be plain objects");
    }
    for (const k of Object.keys(value)) checkJson(value[k], depth + 1, seen);
  }
  seen.delete(value);
}

// Scratch space for encoding: a string is encoded into it behind its tag byte, then copied out
// at its exact size (one allocation per value instead of two). It is far smaller than
// MAX_VALUE_BYTES, so only `tagged` has to check the size.
const SCRATCH_BYTES = 64 * 1024;
const scratch = new Uint8Array(SCRATCH_BYTES);
const scratchAfterTag = scratch.subarray(1);

/** `string` as UTF-8 behind the tag byte `first`. */
function taggedUtf8(first, string) {
  if (string.length * 3 < SCRATCH_BYTES) {
    scratch[0] = first;
    const { written } = encoder.encodeInto(string, scratchAfterTag);
    return scratch.slice(0, written + 1);
  }
  return tagged(first, encoder.encode(string));
}

/** `payload` behind the tag byte `first`; VALUE_TOO_LARGE (before any copy) if it is too long. */
function tagged(first, payload) {
  if (payload.length > MAX_VALUE_BYTES) {
    throw new TtlKvError("VALUE_TOO_LARGE", `value of ${payload.length} bytes exceeds ${MAX_VALUE_BYTES}`);
  }
  const out = new Uint8Array(payload.length + 1);
  out[0] = first;
  out.set(payload, 1);
  return out;
}

/** Tagged value bytes for `value`, remembering whether the key was a string. */
export function encodeValue(value, keyWasString) {
  const flag = keyWasString ? KEY_WAS_STRING : 0;
  if (typeof value === "string") return taggedUtf8(TAG_STRING | flag, value);
  if (value instanceof Uint8Array) return tagged(TAG_BYTES | flag, value);
  if (value === undefined) throw new TtlKvError("INVALID_ARGUMENT", "a value cannot be undefined");
  checkJson(value, 0, new Set());
  return taggedUtf8(TAG_JSON | flag, JSON.stringify(value));
}

/** `{ value, keyWasString }` from tagged value bytes. */
export function decodeValue(bytes) {
  if (!(bytes instanceof Uint8Array) || bytes.length === 0) {
    throw new TtlKvError("CORRUPTION", "a stored value has no type tag");
  }
  const keyWasString = (bytes[0] & KEY_WAS_STRING) !== 0;
  const payload = bytes.subarray(1);
  switch (bytes[0] & 0x7f) {
    case TAG_STRING:
      return { value: decoder.decode(payload), keyWasString };
    case TAG_BYTES:
      return { value: payload.slice(), keyWasString };
    case TAG_JSON:
      // JSON.parse makes "__proto__" an own data property: it never touches a prototype.
      return { value: JSON.parse(decoder.decode(payload)), keyWasString };
    default:
      throw new TtlKvError("CORRUPTION", `unknown value type tag ${bytes[0]}`);
  }
}
