// What the JavaScript entry and the engine agree on: generated from
// bindings/web/src/protocol.rs, which documents each name. Do not edit: the test
// protocol_is_one_definition fails when this file differs from what that module
// generates, and `TTLKV_WRITE_PROTOCOL=1 cargo test -p ttlkv-web --test
// protocol_is_one_definition` rewrites it.

// TTL kinds
export const TTL_DEFAULT = 0;
export const TTL_NO_EXPIRY = 1;
export const TTL_AFTER_MS = 2;
export const TTL_AT = 3;
export const TTL_KEEP = 4;

// put conditions
export const PUT_ALWAYS = 0;
export const PUT_IF_ABSENT = 1;
export const PUT_IF_PRESENT = 2;

// expire-condition bits
export const EXPIRE_NX = 1;
export const EXPIRE_XX = 2;
export const EXPIRE_GT = 4;
export const EXPIRE_LT = 8;

// packed batches
export const BATCH_PUT = 0;
export const BATCH_DELETE = 1;
export const BATCH_OP_FIELDS = 6;

// the tag byte of a stored value
export const VALUE_STRING = 0;
export const VALUE_BYTES = 1;
export const VALUE_JSON = 2;
export const VALUE_TAG_MASK = 127;
export const KEY_WAS_STRING = 128;
export const VALUE_HEADER_BYTES = 1;

// limits
export const MAX_KEY_BYTES = 4096;
export const MAX_VALUE_BYTES = 16777216;
export const MAX_JS_TTL_MS = 8753796953940992;

/** The stable error codes (`TtlKvError.code`). */
export const CODES = Object.freeze([
  "INVALID_ARGUMENT",
  "KEY_TOO_LARGE",
  "VALUE_TOO_LARGE",
  "CLOSED",
  "FENCED",
  "QUOTA_EXCEEDED",
  "CORRUPTION",
  "STORAGE",
  "UNSUPPORTED",
]);
