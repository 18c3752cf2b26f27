// Wrappers around a Durable Object's storage for the tests: one that enforces the platform's
// limits (local workerd stores what production would refuse: values over 128 KiB, keys over
// 2 KiB, calls of more than 128 keys), and one that fails a transaction at its n-th operation.

const MAX_KEY_BYTES = 2048;
const MAX_VALUE_BYTES = 128 * 1024;
/** What a serialized Uint8Array adds to its bytes (version, tags, lengths), at most. */
const SERIALIZED_OVERHEAD = 32;
const MAX_KEYS_PER_CALL = 128;

const utf8Length = (s) => new TextEncoder().encode(s).length;

/** The bytes a value takes once stored, as far as the limit goes. */
function storedSize(value) {
  if (value instanceof Uint8Array) {
    // A view serializes its whole buffer: only a value that owns its buffer is its own size.
    return value.buffer.byteLength + SERIALIZED_OVERHEAD;
  }
  return utf8Length(JSON.stringify(value)) + SERIALIZED_OVERHEAD;
}

/**
 * `storage` that refuses, as production does, any call over the limits, and records each refusal
 * in `violations` (a test asserts there are none: the refusal alone might be caught and hidden).
 */
export function enforceLimits(storage, violations = []) {
  const refuse = (message) => {
    violations.push(message);
    throw new RangeError(message);
  };
  const checkKey = (key) => {
    if (utf8Length(key) > MAX_KEY_BYTES) refuse(`a key of ${utf8Length(key)} bytes (at most ${MAX_KEY_BYTES})`);
  };
  const checkKeys = (keys, op) => {
    if (keys.length > MAX_KEYS_PER_CALL) refuse(`${op} of ${keys.length} keys (at most ${MAX_KEYS_PER_CALL})`);
    keys.forEach(checkKey);
  };
  const checkValue = (key, value) => {
    const size = storedSize(value);
    if (size > MAX_VALUE_BYTES) refuse(`a value of ${size} bytes under ${key} (at most ${MAX_VALUE_BYTES})`);
  };
  const ops = (target) => ({
    get(keys, options) {
      checkKeys(Array.isArray(keys) ? keys : [keys], "get");
      return target.get(keys, options);
    },
    put(keyOrEntries, value, options) {
      const entries = typeof keyOrEntries === "string" ? { [keyOrEntries]: value } : keyOrEntries;
      checkKeys(Object.keys(entries), "put");
      for (const [key, v] of Object.entries(entries)) checkValue(key, v);
      return target.put(keyOrEntries, value, options);
    },
    delete(keys, options) {
      checkKeys(Array.isArray(keys) ? keys : [keys], "delete");
      return target.delete(keys, options);
    },
    list(options) {
      return target.list(options);
    },
  });
  return {
    ...ops(storage),
    transaction(closure) {
      return storage.transaction((txn) => closure(ops(txn)));
    },
  };
}

/** The error a fault-injecting transaction throws. */
export class InjectedFault extends Error {}

/**
 * `storage` whose transactions fail at their `n`-th operation (counted over get, put, delete and
 * list of every transaction): `when` is "before" (the operation never reaches storage) or
 * "after" (it was applied, then the transaction fails). `beforeThrow`, if given, is awaited
 * between the fault and the throw, while the transaction is still open. `state.reached` tells
 * whether the fault was injected; `state.ops` counts the operations.
 */
export function failingAt(storage, n, when, { beforeThrow } = {}) {
  const state = { ops: 0, reached: false };
  const wrap = (txn) => {
    const op =
      (name) =>
      async (...args) => {
        state.ops++;
        if (state.ops !== n) return txn[name](...args);
        state.reached = true;
        if (when === "after") await txn[name](...args);
        await beforeThrow?.();
        throw new InjectedFault(`injected fault ${when} transaction operation ${n} (${name})`);
      };
    return { get: op("get"), put: op("put"), delete: op("delete"), list: op("list") };
  };
  return {
    state,
    get: (...args) => storage.get(...args),
    put: (...args) => storage.put(...args),
    delete: (...args) => storage.delete(...args),
    list: (...args) => storage.list(...args),
    transaction: (closure) => storage.transaction((txn) => closure(wrap(txn))),
  };
}
