// The TtlKvError contract (index.d.ts): instanceof Error, name, code, cause; errors the engine
// makes are instances of the class (package.test.mjs checks those from real calls).
import { test } from "node:test";
import assert from "node:assert/strict";
// TTLKV_PACKAGE: see package.test.mjs.
const { TtlKvError, CODES } = await import(process.env.TTLKV_PACKAGE ?? "../../bindings/js/node.js");

test("every documented code makes a TtlKvError that is an Error", () => {
  for (const code of CODES) {
    const e = new TtlKvError(code, "boom");
    assert.ok(e instanceof Error);
    assert.ok(e instanceof TtlKvError);
    assert.equal(e.name, "TtlKvError");
    assert.equal(e.code, code);
    assert.equal(e.message, "boom");
  }
});

test("a storage error carries its cause", () => {
  const cause = new Error("disk on fire");
  const e = new TtlKvError("STORAGE", "write failed", { cause });
  assert.equal(e.cause, cause);
});

test("an unknown code is a TypeError, not a TtlKvError", () => {
  assert.throws(() => new TtlKvError("NOPE", "x"), TypeError);
});

test("a plain Error with the name and a code is not a TtlKvError: only the class makes one", () => {
  const lookalike = new Error("key of 5000 bytes exceeds 4096");
  lookalike.name = "TtlKvError";
  lookalike.code = "KEY_TOO_LARGE";
  assert.ok(!(lookalike instanceof TtlKvError));
});

test("an error the engine makes is an instance of the package's class, made by its constructor", async () => {
  const { open } = await import(process.env.TTLKV_PACKAGE ?? "../../bindings/js/node.js");
  // The engine itself refuses an adapter without its functions (the JS side passes it through).
  const e = await open("errors-from-the-engine", { storage: {} }).then(() => null, (e) => e);
  assert.equal(Object.getPrototypeOf(e), TtlKvError.prototype);
  assert.equal(e.code, "INVALID_ARGUMENT");
  assert.match(e.message, /readManifest/);
});
