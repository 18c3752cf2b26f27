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

test("the storage adapters' factories refuse bad arguments at once with code INVALID_ARGUMENT", async () => {
  // An adapter module does not load the package's core, so its errors are plain errors with the
  // code (TypeError or RangeError by the kind of argument), not TtlKvErrors.
  // The installed package's built adapters beside its Node entry, or the working tree's sources.
  const from = (name) => import(new URL(process.env.TTLKV_PACKAGE ? `../adapters/${name}.js` : `../../bindings/js/adapters/${name}.js`, process.env.TTLKV_PACKAGE ?? import.meta.url));
  const { fileStorage } = await from("node-fs");
  const { durableObjectStorage } = await from("durable-object");
  const { denoKvStorage } = await from("deno-kv");
  const kv = { get() {}, getMany() {}, list() {}, atomic() {} };
  const storage = { get() {}, put() {}, delete() {}, list() {}, transaction() {} };
  const refusals = {
    "fileStorage(5)": () => fileStorage(5),
    "fileStorage with an unknown option": () => fileStorage("dir", { lock: 1 }),
    "fileStorage with lockTimeoutMs 0": () => fileStorage("dir", { lockTimeoutMs: 0 }),
    "durableObjectStorage(null)": () => durableObjectStorage(null),
    "durableObjectStorage with a prefix of 2 KiB": () => durableObjectStorage(storage, { prefix: "p".repeat(2048) }),
    "denoKvStorage({})": () => denoKvStorage({}),
    "denoKvStorage with an empty prefix": () => denoKvStorage(kv, { prefix: [] }),
    "denoKvStorage with a prefix holding an own part": () => denoKvStorage(kv, { prefix: ["db", "page"] }),
    "fileStorage with options 5": () => fileStorage("dir", 5),
    "durableObjectStorage with options 5": () => durableObjectStorage(storage, 5),
    "durableObjectStorage with an unknown option": () => durableObjectStorage(storage, { bogus: 1 }),
    "denoKvStorage with options 5": () => denoKvStorage(kv, 5),
    "denoKvStorage with an unknown option": () => denoKvStorage(kv, { bogus: 1 }),
  };
  // None (undefined or null) is the default.
  for (const options of [undefined, null]) {
    assert.ok(durableObjectStorage(storage, options));
    assert.ok(denoKvStorage(kv, options));
  }
  const { destroyDenoKvStorage } = await from("deno-kv");
  await assert.rejects(destroyDenoKvStorage(kv, 5), (e) => e.code === "INVALID_ARGUMENT");
  for (const [what, make] of Object.entries(refusals)) {
    assert.throws(make, (e) => e instanceof Error && e.code === "INVALID_ARGUMENT", what);
  }
});
