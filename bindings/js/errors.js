// TtlKvError: the one error class the npm package rejects with. Its `code` is one of the stable
// codes of the package (index.d.ts); errors created by the wasm side (name "TtlKvError" + code)
// are recognised by `instanceof` too, so callers can branch on either.

/** The stable error codes, documented in index.d.ts (`TtlKvErrorCode`). */
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

/** An error from ttlkv: `name === "TtlKvError"`, a stable `code`, and an optional `cause`. */
export class TtlKvError extends Error {
  /**
   * @param {string} code one of CODES
   * @param {string} message what happened
   * @param {{ cause?: unknown }} [options]
   */
  constructor(code, message, options) {
    super(message, options);
    if (!CODES.includes(code)) {
      throw new TypeError(`unknown TtlKvError code: ${String(code)}`);
    }
    this.name = "TtlKvError";
    this.code = code;
  }

  /** Errors thrown by the wasm side are plain Errors named "TtlKvError" with a code. */
  static [Symbol.hasInstance](value) {
    return (
      value instanceof Error &&
      value.name === "TtlKvError" &&
      typeof value.code === "string" &&
      CODES.includes(value.code)
    );
  }
}
