// TtlKvError: the one error class the npm package rejects with. Its `code` is one of the stable
// codes (CODES, generated from the engine's error kinds into protocol.js). The engine creates
// its errors with this class too (the loader hands it over: `useErrorClass`), so `instanceof`
// holds for every error, whichever side made it.

import { CODES } from "./protocol.js";

export { CODES };

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
}
