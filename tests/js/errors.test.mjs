// The TtlKvError contract (index.d.ts): instanceof Error, name, code, cause, and recognition of
// errors created on the wasm side.
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

test("errors made by the wasm side are recognised by instanceof", () => {
  const wasm = new Error("key of 5000 bytes exceeds 4096");
  wasm.name = "TtlKvError";
  wasm.code = "KEY_TOO_LARGE";
  assert.ok(wasm instanceof TtlKvError);
  const plain = new Error("x");
  assert.ok(!(plain instanceof TtlKvError));
});
