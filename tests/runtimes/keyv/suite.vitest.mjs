// @keyv/test-suite (Keyv's compliance tests for storage adapters, written for vitest) on
// KeyvTtlkv, in the scratch project keyv.test.mjs makes: the packed package, run by vitest.
//
// Every test gets a fresh database: the suite reuses key names from test to test and clears
// between them through the store under test; a fresh database keeps a failure of clear() to the
// tests about clear(). Its clock is the default one (Date.now), which the suite moves with
// timekeeper where it tests expiry.
import * as vitest from "vitest";
import Keyv from "keyv";
import { keyvApiTests, keyvIteratorTests, keyvNamespaceTest, keyvValueTests } from "@keyv/test-suite";
import { destroy, open } from "ttlkv";
import { KeyvTtlkv } from "ttlkv/keyv";

let db;
let n = 0;
vitest.beforeEach(async () => {
  const name = `suite-${n++}`;
  db = await open(name, { storage: "memory" });
  return async () => {
    await db.close();
    await destroy(name, { storage: "memory" });
  };
});
const store = () => new KeyvTtlkv({ db });

/**
 * Keyv 5 turns `keyv.iterator()` on only for stores of its own list of dialects; this is how an
 * app turns it on for KeyvTtlkv (keyv.d.ts says so).
 */
class IterableKeyv extends Keyv {
  constructor(...args) {
    super(...args);
    this.iterator = this.generateIterator(this.store.iterator.bind(this.store));
  }
}

vitest.describe("keyvApiTests", () => keyvApiTests(vitest, Keyv, store));
vitest.describe("keyvValueTests", () => keyvValueTests(vitest, Keyv, store));
vitest.describe("keyvNamespaceTest", () => keyvNamespaceTest(vitest, Keyv, store));
vitest.describe("keyvIteratorTests", () => keyvIteratorTests(vitest, IterableKeyv, store));
