// The errors of the Deno KV page store: the coded errors it throws (INVALID_ARGUMENT, CORRUPTION,
// STORAGE) and the mapping of whatever Deno KV throws to an error of the adapter contract.

function coded(code, message, cause) {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code });
}

export const invalid = (message) => coded("INVALID_ARGUMENT", message);
export const corruption = (message, cause) => coded("CORRUPTION", message, cause);
export const storage = (message) => coded("STORAGE", message);

const OWN_CODES = ["FENCED", "QUOTA_EXCEEDED", "CORRUPTION", "INVALID_ARGUMENT", "STORAGE"];
// How a full store answers: SQLite's "database or disk is full" locally, a quota message on
// a hosted KV.
const FULL = /quota|(database|disk) is full/i;

/** An error of the adapter contract: ours as they are; Deno KV's as QUOTA_EXCEEDED when the store
 * is full, else STORAGE, with the original as `cause`. */
export function asAdapterError(what, e) {
  if (OWN_CODES.includes(e?.code)) return e;
  const message = `Deno KV failed in ${what}: ${e?.message ?? String(e)}`;
  return coded(FULL.test(String(e?.message)) ? "QUOTA_EXCEEDED" : "STORAGE", message, e);
}
