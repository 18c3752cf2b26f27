// The keys of the Deno KV page store: the page kinds, the key parts it owns under a database's
// prefix (their layout is described at the top of store.js), and the checks of a prefix and of a
// page key that keep one database's keys apart from another's and within Deno KV's key limits.

import { keyBytes } from "./atomic.js";
import { invalid } from "./errors.js";
import { badArgument } from "../common/arguments.js";

export const KINDS = ["w/", "m/", "d/"];
const MAX_PREFIX_BYTES = 256;
const MAX_PAGE_KEY_LENGTH = 64;

/** The key parts under a database's prefix that the store writes (see the top of store.js). */
export const OWN_PARTS = ["head", "page", "chunk", "intent", "sweep"];

export function checkedPrefix(prefix) {
  const ok = (part) => ["string", "number", "bigint", "boolean"].includes(typeof part) || part instanceof Uint8Array;
  if (!Array.isArray(prefix) || prefix.length === 0 || !prefix.every(ok)) {
    throw badArgument("denoKvStorage: prefix must be a non-empty array of Deno KV key parts (string, number, bigint, boolean, Uint8Array)");
  }
  // With none of this module's own parts in it, a prefix that extends another database's never
  // meets that database's keys.
  const own = prefix.find((part) => OWN_PARTS.includes(part));
  if (own !== undefined) throw badArgument(`denoKvStorage: a prefix may not contain ${JSON.stringify(own)}, a key part of the store's own`, RangeError);
  if (keyBytes(prefix) > MAX_PREFIX_BYTES) throw badArgument(`denoKvStorage: prefix is longer than ${MAX_PREFIX_BYTES} bytes as a key`, RangeError);
  return [...prefix];
}

export function checkPageKey(page) {
  if (typeof page !== "string" || !KINDS.includes(page.slice(0, 2)) || page.length <= 2 || page.length > MAX_PAGE_KEY_LENGTH) {
    throw invalid(`${JSON.stringify(page)} is not a page key (w/…, m/… or d/…)`);
  }
}
