// The engine endpoint (bindings/js/engine.js) that the writer context runs calls on, for its own
// calls and those other tabs forward to it. Unit tests on the working tree's sources.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { LocalEndpoint } from "../../bindings/js/engine.js";
import { TtlKvError } from "../../bindings/js/errors.js";
import { encodeKey, encodeValue, PackedBatch } from "../../bindings/js/codec.js";
import { TTL_DEFAULT, TTL_AFTER_MS, PUT_ALWAYS, PUT_IF_ABSENT } from "../../bindings/js/protocol.js";
import { Tabs, TABS_PROTOCOL } from "../../bindings/js/tabs.js";
import { Snapshot } from "../../bindings/js/snapshot.js";

const wasm = await import("../../bindings/js/pkg/ttlkv_web.js");
await wasm.default({ module_or_path: readFileSync(new URL("../../bindings/js/pkg/ttlkv_web_bg.wasm", import.meta.url)) });

let n = 0;
async function endpoint() {
  const raw = await wasm.openDb(`endpoint-${n++}`, "memory", { durability: "durable" });
  return new LocalEndpoint(raw, () => {}, () => false, () => {});
}

const put = (e, key, value) => e.call(null, "put", [encodeKey(key), encodeValue(value, true), TTL_DEFAULT, 0, PUT_ALWAYS]);

/**
 * The many-tabs coordinator of a fresh database name, on a stand-in for its Shared; its engine
 * opens with `becomeWriter`, and an unanswered call takes the role after `writerTimeoutMs`.
 */
const coordinator = (name, becomeWriter = async () => {}, writerTimeoutMs = 60_000) =>
  new Tabs(`${name}-${n++}`, { useRemote() {}, emit() {} }, becomeWriter, writerTimeoutMs);

/** One turn of the event loop: what was queued before it has run. */
const turn = () => new Promise((r) => setTimeout(r, 0));

async function rejects(promise, code) {
  await assert.rejects(promise, (e) => e instanceof TtlKvError && e.code === code);
}

test("a snapshot id from one writer is CLOSED on the next, and releasing it there frees nothing of its own", async () => {
  // After a handover a follower still holds ids the old writer gave out; the new writer's own
  // snapshots must not answer to them.
  const [old, next] = [await endpoint(), await endpoint()];
  await put(old, "k", "old writer");
  await put(next, "k", "new writer");
  const stale = await old.call(null, "snapshot", []);
  const own = await next.call(null, "snapshot", []);
  assert.notEqual(stale, own);
  await rejects(next.callSnapshot(stale, "get", [encodeKey("k")]), "CLOSED");
  next.release(stale);
  assert.equal(await next.callSnapshot(own, "get", [encodeKey("k")]), "new writer", "the new writer's snapshot is still there");
  assert.equal(await old.callSnapshot(stale, "get", [encodeKey("k")]), "old writer");
  await old.close();
  await next.close();
});

test("a conditional put resent to the next writer after the first applied it gets the first outcome, and runs once", async () => {
  // The follower's put(k, v, { ifAbsent: true }) reached the old writer, which applied it and went
  // away before answering; the follower sends it again to the next writer.
  const name = `resent-${n++}`;
  const open = async () => new LocalEndpoint(await wasm.openDb(name, "memory", { durability: "durable" }), () => {}, () => false, () => {});
  const args = [encodeKey("otp"), encodeValue("493817", true), TTL_DEFAULT, 0, PUT_IF_ABSENT];
  const old = await open();
  assert.equal(await old.call(null, "put", args, "tab-b:7"), true);
  await old.close();
  const next = await open();
  assert.equal(await next.call(null, "put", args, "tab-b:7", true), true, "the outcome the first run had");
  assert.equal(await next.call(null, "put", args, "tab-b:8", true), false, "a call that never ran runs now");
  // A getEx sent again answers with the value it read the first time.
  await next.call(null, "put", [encodeKey("s"), encodeValue("data", true), TTL_DEFAULT, 0, PUT_ALWAYS]);
  assert.equal(await next.call(null, "getEx", [encodeKey("s"), TTL_AFTER_MS, 5_000], "tab-b:9"), "data");
  await next.call(null, "delete", [encodeKey("s")]);
  assert.equal(await next.call(null, "getEx", [encodeKey("s"), TTL_AFTER_MS, 5_000], "tab-b:9", true), "data");
  await next.close();
});

test("a batch a follower forwards keeps its ops when resent after a handover, whatever was packed since, and runs once", async () => {
  const name = `resent-batch-${n++}`;
  const open = async () => new LocalEndpoint(await wasm.openDb(name, "memory", { durability: "durable" }), () => {}, () => false, () => {});
  // Packed as a follower packs a call that does not reach an engine at once: copies, not views.
  const pack = (entries) => {
    const packed = new PackedBatch(entries.length);
    for (const [key, value, condition] of entries) {
      packed.key(key);
      packed.put(value, TTL_DEFAULT, 0, condition);
    }
    const args = packed.finish(false);
    packed.release();
    return args;
  };
  const args = pack([["otp", "493817", PUT_IF_ABSENT], ["note", "first", PUT_ALWAYS]]);
  const old = await open();
  assert.equal(await old.call(null, "batch", args, "tab-d:1"), true);
  await old.close();
  // Another batch packed into the kept buffers meanwhile.
  pack([["otp", "000000", PUT_ALWAYS], ["note", "other", PUT_ALWAYS]]);
  const next = await open();
  assert.equal(await next.call(null, "batch", args, "tab-d:1", true), true, "the outcome the first run had");
  assert.equal(await next.call(null, "get", [encodeKey("otp")]), "493817");
  assert.equal(await next.call(null, "get", [encodeKey("note")]), "first");
  assert.equal(await next.call(null, "batch", args, "tab-d:2", true), false, "a call that never ran runs now: its condition fails");
  await next.close();
});

test("a call resent while its first run is still going here waits for that run instead of running twice", async () => {
  const e = await endpoint();
  const args = [encodeKey("k"), encodeValue("v", true), 0, 0, 1];
  const first = e.call(null, "put", args, "tab-c:1");
  const again = e.call(null, "put", args, "tab-c:1", true);
  assert.deepEqual(await Promise.all([first, again]), [true, true]);
  await e.close();
});

test("a FENCED or CLOSED answer from a writer that is going away leaves the forwarded call waiting for the next writer", async () => {
  // A follower resent its call to a new writer, then the old one woke and answered it FENCED:
  // the call must not fail (it may have taken effect on the new writer), it waits for its answer.
  const tabs = coordinator("reply");
  tabs.follow();
  const answer = tabs.forward({ ns: null, method: "put", args: [] });
  const id = `${tabs.me}:0`;
  let settled = false;
  answer.then(() => (settled = true), () => (settled = true));
  try {
    for (const code of ["FENCED", "CLOSED"]) {
      tabs.receive({ t: "reply", id, to: tabs.me, ok: false, error: { code, message: "the old writer" } });
      await turn();
      assert.equal(settled, false, `still waiting after ${code}`);
    }
    tabs.receive({ t: "reply", id, to: tabs.me, ok: true, value: true });
    assert.equal(await answer, true, "the next writer's answer");
  } finally {
    // Answered (again, if an assertion failed first): the close waits for the call's answer.
    tabs.receive({ t: "reply", id, to: tabs.me, ok: true, value: true });
    await tabs.close();
  }
});

test("a CLOSED answer that is the call's own (a namespace dropped, a snapshot released) fails the forwarded call at once; one from a writer going away does not", async () => {
  // Waiting for another writer there would take the role from a writer that answers.
  const writer = coordinator("own-closed");
  const dropped = new TtlKvError("CLOSED", "the namespace was dropped");
  writer.role = "writer";
  writer.shared.local = { call: () => Promise.reject(dropped), close: async () => {} };
  const replies = [];
  writer.post = (message) => replies.push(message);
  const ns = ["sessions", false, null, null, "h:1"];
  const call = (id) => writer.receive({ t: "call", id, from: "b", ns, method: "get", args: [encodeKey("k")] });
  try {
    call("b:0");
    await turn();
    assert.equal(replies[0].final, true, "the writer, still the writer, marks its CLOSED final");
    writer.closing = true;
    call("b:1");
    await turn();
    assert.equal(replies[1].final, false, "a writer that is closing does not");
  } finally {
    writer.closing = false;
    await writer.close();
  }

  const follower = coordinator("own-closed");
  follower.follow();
  follower.post = () => {};
  let outcome;
  follower.forward({ ns: 1, method: "get", args: [] }).then(() => (outcome = "waited for another writer"), (e) => (outcome = e.code));
  const reply = { t: "reply", id: `${follower.me}:0`, to: follower.me };
  follower.receive({ ...reply, ok: false, error: replies[0].error, final: true });
  await turn();
  // Answered, if it still waits: nothing is left waiting when the test ends.
  follower.receive({ ...reply, ok: true, value: undefined });
  await turn();
  assert.equal(outcome, "CLOSED");
  await follower.close();
});

test("a follower's close waits for the answers of the calls it forwarded, which settle with them, and fails what is forwarded after it began", async () => {
  // The writer may have applied the call already: CLOSED would read as "not done".
  const tabs = coordinator("leave-waits");
  tabs.follow();
  const posted = [];
  tabs.post = (message) => posted.push(message.method);
  const answer = tabs.forward({ ns: null, method: "put", args: [] });
  let closed = false;
  const closing = tabs.close().then(() => (closed = true));
  const late = rejects(tabs.forward({ ns: null, method: "get", args: [] }), "CLOSED");
  await turn();
  assert.equal(closed, false, "the close waits for the writer's answer");
  tabs.receive({ t: "reply", id: `${tabs.me}:0`, to: tabs.me, ok: true, value: true });
  assert.equal(await answer, true, "the writer's answer");
  await closing;
  await late;
  assert.deepEqual(posted, ["put"], "a call made once the close began never reaches the writer");
  await rejects(tabs.forward({ ns: null, method: "get", args: [] }), "CLOSED");
});

test("a closing follower whose takeover loses the lock to another tab's goes on waiting for its calls' answers", async () => {
  // The other tab (here, the test) took the lock while this one's engine opened: it is about to
  // answer the calls, which the closing tab must not fail CLOSED meanwhile.
  const requests = [];
  const saved = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  Object.defineProperty(globalThis, "navigator", {
    configurable: true,
    value: { locks: { request: (name, options, granted) => new Promise((resolve, reject) => requests.push({ options, granted, reject })) } },
  });
  const tick = () => new Promise((r) => setTimeout(r, 1));
  let opened;
  const tabs = coordinator("lost-race", () => new Promise((r) => (opened = r)), 1);
  try {
    tabs.follow();
    tabs.post = () => {};
    let outcome;
    tabs.forward({ ns: null, method: "put", args: [] }).then((v) => (outcome = v), (e) => (outcome = e.code));
    let closed = false;
    const closing = tabs.close().then(() => (closed = true));
    while (requests.length === 0) await tick();
    assert.equal(requests[0].options.steal, true, "the unanswered call's timer steals the role");
    requests[0].granted({});
    await tick();
    requests[0].reject(new DOMException("stolen by another tab", "AbortError"));
    opened({ close: async () => {} });
    for (let i = 0; i < 5; i++) await tick();
    assert.equal(outcome, undefined, "the call still waits for an answer");
    assert.equal(closed, false, "and so does the close");
    tabs.receive({ t: "reply", id: `${tabs.me}:0`, to: tabs.me, ok: true, value: true });
    await closing;
    assert.equal(outcome, true, "the new writer's answer");
  } finally {
    tabs.receive({ t: "reply", id: `${tabs.me}:0`, to: tabs.me, ok: true, value: true });
    await tabs.close();
    if (saved) Object.defineProperty(globalThis, "navigator", saved);
    else delete globalThis.navigator;
  }
});

test("a writerTimeoutMs past what a timer holds waits as long as a timer can, and takes no role from a writer that answers", async () => {
  // setTimeout keeps its delay in 32 bits: 2 ** 32 ms would fire at once in a browser (after
  // 1 ms in Node), and every forwarded call would steal the role from a healthy writer.
  const requests = [];
  const saved = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  Object.defineProperty(globalThis, "navigator", {
    configurable: true,
    value: { locks: { request: (name, options) => (requests.push(options), new Promise(() => {})) } },
  });
  const delays = [];
  const realSetTimeout = globalThis.setTimeout;
  globalThis.setTimeout = (fn, ms, ...rest) => (delays.push(ms), realSetTimeout(fn, ms, ...rest));
  const tabs = coordinator("long-writer-timeout", async () => {}, 2 ** 32 + 5);
  try {
    tabs.follow();
    tabs.post = () => {};
    const before = requests.length;
    tabs.forward({ ns: null, method: "put", args: [] }).catch(() => {});
    globalThis.setTimeout = realSetTimeout;
    assert.deepEqual(delays, [2_147_483_647], "the call's timer is armed for the longest delay a timer holds");
    for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 1));
    assert.equal(requests.slice(before).filter((o) => o.steal).length, 0, "no takeover");
  } finally {
    globalThis.setTimeout = realSetTimeout;
    tabs.receive({ t: "reply", id: `${tabs.me}:0`, to: tabs.me, ok: true, value: true });
    await tabs.close();
    if (saved) Object.defineProperty(globalThis, "navigator", saved);
    else delete globalThis.navigator;
  }
});

test("a snapshot's scan asks the engine for a page of entries at a time, however many it covers", async () => {
  // One call for the whole range would build every entry in the engine's memory at once.
  const e = await endpoint();
  for (let i = 0; i < 700; i++) await put(e, `k${String(i).padStart(4, "0")}`, i);
  const id = await e.call(null, "snapshot", []);
  const asked = [];
  const recording = {
    callSnapshot(snapshot, method, args) {
      if (method === "scan") asked.push(args[3]);
      return e.callSnapshot(snapshot, method, args);
    },
    release: (snapshot) => e.release(snapshot),
  };
  let seen = 0;
  for await (const entry of new Snapshot(recording, id).scan()) {
    assert.equal(entry.key, `k${String(seen).padStart(4, "0")}`);
    seen++;
  }
  assert.equal(seen, 700);
  assert.deepEqual(asked, [256, 256, 256], "three pages, the last one short");
  asked.length = 0;
  seen = 0;
  for await (const _ of new Snapshot(recording, id).scan({ limit: 300 })) seen++;
  assert.equal(seen, 300);
  assert.deepEqual(asked, [256, 44]);
  e.release(id);
  await e.close();
});

test("a writer runs a call another tab forwards only if it is of its own version and passes what ttlkv passes; the engine never sees the rest", async () => {
  // A tab left open over a site's update runs another version; a hand-made message could carry
  // a string where bytes belong (the engine's bindings would read it as zeros) or a TTL kind
  // out of a byte's range (read modulo 256).
  const e = await endpoint();
  const shared = { useRemote() {}, emit() {}, local: e };
  const tabs = new Tabs(`checked-${n++}`, shared, async () => e, 60_000);
  tabs.role = "writer";
  const posted = [];
  tabs.post = (m) => posted.push(m);
  const key = encodeKey("k");
  const value = encodeValue("v", true);
  const send = async (call) => {
    posted.length = 0;
    tabs.receive({ t: "call", v: TABS_PROTOCOL, id: `other:${n++}`, from: "other", ns: null, ...call });
    for (let i = 0; i < 5 && posted.length === 0; i++) await turn();
    assert.equal(posted.length, 1, "one reply");
    return posted[0];
  };
  try {
    const newer = await send({ v: TABS_PROTOCOL + 1, method: "put", args: [key, value, TTL_DEFAULT, 0, PUT_ALWAYS] });
    assert.equal(newer.ok, false);
    assert.equal(newer.error.code, "UNSUPPORTED");
    assert.match(newer.error.message, /another version of ttlkv/);
    // A tab from before calls were versioned sends none: its calls are of version 1.
    const unversioned = await send({ v: undefined, method: "has", args: [key] });
    assert.deepEqual([unversioned.ok, unversioned.error?.code], TABS_PROTOCOL === 1 ? [true, undefined] : [false, "UNSUPPORTED"]);
    for (const [what, call] of [
      ["a string key", { method: "put", args: ["k", value, TTL_DEFAULT, 0, PUT_ALWAYS] }],
      ["a TTL kind as a string", { method: "put", args: [key, value, String(TTL_AFTER_MS), 5, PUT_ALWAYS] }],
      ["an argument short", { method: "put", args: [key, value, TTL_DEFAULT, 0] }],
      ["args that are no array", { method: "delete", args: { 0: key, length: 1 } }],
      ["a namespace that is no namespace", { ns: "otp", method: "delete", args: [key] }],
      ["a method of Object.prototype", { method: "constructor", args: [] }],
      ["a snapshot scan with a string bound", { ns: undefined, snapshot: "s.1", method: "scan", args: ["a", undefined, undefined, 10, false] }],
    ]) {
      const reply = await send(call);
      assert.equal(reply.ok, false, what);
      assert.equal(reply.error.code, "INVALID_ARGUMENT", what);
    }
    assert.equal(await e.call(null, "get", [key]), undefined, "nothing was written");
    const fine = await send({ method: "put", args: [key, value, TTL_DEFAULT, 0, PUT_ALWAYS] });
    assert.equal(fine.ok, true, "a call of this version with the right arguments runs");
    assert.equal(await e.call(null, "get", [key]), "v");
  } finally {
    // The writer's close closes its engine, and the channel that would keep the process alive.
    await tabs.close();
  }
});

test("the engine refuses a code out of a byte's range instead of reading it modulo 256", async () => {
  // 258 read as a byte is TTL_AFTER_MS (2), 257 is PUT_IF_ABSENT (1), 17 holds the nx bit.
  const e = await endpoint();
  try {
    const key = encodeKey("k");
    const value = encodeValue("v", true);
    await rejects(Promise.resolve().then(() => e.call(null, "put", [key, value, 256 + TTL_AFTER_MS, 5, PUT_ALWAYS])), "INVALID_ARGUMENT");
    await rejects(Promise.resolve().then(() => e.call(null, "put", [key, value, TTL_DEFAULT, 0, 256 + PUT_IF_ABSENT])), "INVALID_ARGUMENT");
    await rejects(Promise.resolve().then(() => e.call(null, "getEx", [key, 256 + TTL_AFTER_MS, 5])), "INVALID_ARGUMENT");
    await put(e, "k", "v");
    await rejects(Promise.resolve().then(() => e.call(null, "expire", [key, 5, 16 + 1])), "INVALID_ARGUMENT");
    await rejects(Promise.resolve().then(() => e.call(null, "expire", [key, 5, 1.5])), "INVALID_ARGUMENT");
    assert.equal(await e.call(null, "ttl", [key]), -1, "nothing took effect");
  } finally {
    await e.close();
  }
});

test("a forwarded call's answer without an error, or with a code this version does not know, fails the call STORAGE instead of throwing in the message handler", async () => {
  const tabs = coordinator("odd-replies");
  tabs.follow();
  tabs.post = () => {};
  try {
    const first = tabs.forward({ ns: null, method: "get", args: [] });
    tabs.receive({ t: "reply", id: `${tabs.me}:0`, to: tabs.me, ok: false });
    await rejects(first, "STORAGE");
    const second = tabs.forward({ ns: null, method: "get", args: [] });
    tabs.receive({ t: "reply", id: `${tabs.me}:1`, to: tabs.me, ok: false, error: { code: "A_NEWER_CODE", message: "from a newer writer" } });
    await assert.rejects(second, (e) => e instanceof TtlKvError && e.code === "STORAGE" && /from a newer writer/.test(e.message));
    tabs.receive({ t: "expire", expired: "not a list" });
  } finally {
    await tabs.close();
  }
});

test("a writer tab's close rejects as its engine's close does (pending writes not committed), and the tab is closed after it", async () => {
  // With many tabs the app's close() is the Tabs' close: a writer's failure to commit what it
  // accepted must reach the app, as it does without tabs, not pass as a clean close.
  const failing = { close: () => Promise.reject(new TtlKvError("STORAGE", "the disk went away")) };
  const shared = { useRemote() {}, emit() {}, local: failing };
  const tabs = new Tabs(`leave-${n++}`, shared, async () => failing, 60_000);
  await rejects(tabs.close(), "STORAGE");
  assert.equal(shared.local, undefined, "the engine is let go of");
  await rejects(tabs.forward({ ns: null, method: "get", args: [] }), "CLOSED");
  await tabs.close();
});

// Both engines: the browser's, and the server's, whose get answers a key its row cache holds at
// once (the second read of each key below), decoding the value from the cache.
const serverWasm = await import("../../bindings/js/pkg-server/ttlkv_web.js");
const serverExports = await serverWasm.default({ module_or_path: readFileSync(new URL("../../bindings/js/pkg-server/ttlkv_web_bg.wasm", import.meta.url)) });
const engines = { browser: wasm, server: serverWasm };

test("the server engine answers ASCII text sliced from its memory in Node, and again once its memory has grown", async () => {
  // In Node the server engine hands text that is all ASCII over as a Latin-1 slice of a view of
  // its whole memory (`ascii-answers`); growing the memory detaches that view, and the next
  // read must make it again rather than slice a buffer of length 0.
  const e = new LocalEndpoint(await serverWasm.openDb(`ascii-${n++}`, "memory", { durability: "durable" }), () => {}, () => false, () => {});
  const values = {
    short: "session:0001",
    long: "x".repeat(70_000) + "end",
    json: { user: "u1", roles: ["a", "b"], n: 12.5, nested: { ok: true } },
    notAscii: "caf\u00e9",
    // A byte past 0x7f inside an eight-byte word, and one in the tail after the last word.
    notAsciiInAWord: "abcdefg\u00e9" + "x".repeat(20),
    notAsciiLate: "x".repeat(1000) + "\u20ac" + "x".repeat(7),
    jsonNotAscii: { name: "Zo\u00eb", tags: ["\u2603"] },
  };
  // The scan reads 32 bytes at a time as four words, then the tail byte by byte: a byte past 0x7f
  // at every place in the first three blocks and the tail, and as the last byte of a longer text.
  for (let at = 0; at < 100; at++) values[`notAsciiAt${at}`] = "x".repeat(at) + "\u00e9" + "y".repeat(99 - at);
  values.notAsciiLast = "x".repeat(1023) + "\u00e9";
  for (const [key, value] of Object.entries(values)) await put(e, key, value);
  const readAll = async (when) => {
    for (const [key, value] of Object.entries(values)) {
      assert.deepEqual(await e.get(key), value, `${key}, ${when}`);
      assert.deepEqual(await e.get(encodeKey(key)), value, `${key} as bytes, ${when}`);
    }
  };
  await readAll("first read");
  const before = serverExports.memory.buffer;
  serverExports.memory.grow(1);
  assert.equal(before.byteLength, 0, "growing the memory detached the buffer the view was made of");
  await readAll("after the memory grew");
  await e.close();
});

for (const [engine, glue] of Object.entries(engines)) {
  test(`the ${engine} engine answers stored text as the caller's string or JSON value, and text that does not decode raw, tag byte and all`, async () => {
    // The engine decodes a string or JSON value's UTF-8 once, in its glue's decoder; bytes that
    // are not UTF-8, or JSON text that does not parse, come back as stored for the JS codec.
    const e = new LocalEndpoint(await glue.openDb(`text-${engine}-${n++}`, "memory", { durability: "durable" }), () => {}, () => false, () => {});
    const raw = (...bytes) => new Uint8Array(bytes);
    const utf8 = (text) => new TextEncoder().encode(text);
    const stored = {
      empty: [raw(0x00), ""],
      text: [raw(0x00, 0x68, 0xc3, 0xa9), "hé"],
      // The key-was-string bit beside the tag; a leading BOM is kept as the caller wrote it.
      keyWasString: [raw(0x80, 0x6b), "k"],
      bom: [raw(0x00, 0xef, 0xbb, 0xbf, 0x61), "\uFEFFa"],
      nullJson: [raw(0x02, ...utf8("null")), null],
      falseJson: [raw(0x02, ...utf8("false")), false],
      object: [raw(0x82, ...utf8('{"a":[1,"é"]}')), { a: [1, "é"] }],
      badText: [raw(0x00, 0x61, 0xff, 0xfe), raw(0x00, 0x61, 0xff, 0xfe)],
      truncated: [raw(0x00, 0xc3), raw(0x00, 0xc3)],
      emptyJson: [raw(0x02), raw(0x02)],
      badJson: [raw(0x02, ...utf8("{x")), raw(0x02, ...utf8("{x"))],
      badJsonText: [raw(0x02, 0x22, 0xff, 0x22), raw(0x02, 0x22, 0xff, 0x22)],
      // U+FFFD stored as text is text; bytes a lenient decoder would turn into it are not.
      replacementChar: [raw(0x00, 0x61, 0xef, 0xbf, 0xbd), "a\uFFFD"],
      replacementJson: [raw(0x02, ...utf8('"\uFFFD"')), "\uFFFD"],
      surrogateBytes: [raw(0x00, 0xed, 0xa0, 0x80), raw(0x00, 0xed, 0xa0, 0x80)],
      overlong: [raw(0x00, 0xc0, 0xaf), raw(0x00, 0xc0, 0xaf)],
      badAfterReplacement: [raw(0x00, 0xef, 0xbf, 0xbd, 0xff), raw(0x00, 0xef, 0xbf, 0xbd, 0xff)],
    };
    // One byte that is not UTF-8 (nor ASCII) at each place of a text long enough for the server
    // engine's ASCII scan to read it in words (32 bytes at a time, then the tail): raw, each one.
    for (let at = 0; at < 70; at++) {
      const bytes = raw(0x00, ...utf8("a".repeat(70)));
      bytes[1 + at] = 0xff;
      stored[`badTextAt${at}`] = [bytes, bytes];
    }
    for (const [key, [value]] of Object.entries(stored)) {
      await e.call(null, "put", [encodeKey(key), value, TTL_DEFAULT, 0, PUT_ALWAYS]);
    }
    const snapshot = await e.call(null, "snapshot", []);
    for (const [key, [, want]] of Object.entries(stored)) {
      assert.deepEqual(await e.get(encodeKey(key)), want, key);
      assert.deepEqual(await e.get(key), want, `${key}, its key passed as a string`);
      assert.deepEqual(await e.callSnapshot(snapshot, "get", [encodeKey(key)]), want, `${key} in a snapshot`);
    }
    e.release(snapshot);
    // Keys written as bytes and read with the string handed to the engine as it is (getStr):
    // non-ASCII keys at the longest a get hands over. (A string with a lone surrogate never gets
    // here: the package refuses it, codec.js.)
    const keys = ["€".repeat(1365), "🔑".repeat(682) + "x", "é".repeat(1365)];
    for (const [i, key] of keys.entries()) await put(e, key, `v${i}`);
    for (const [i, key] of keys.entries()) {
      assert.equal(await e.get(key), `v${i}`, `key ${i} passed as a string`);
      assert.equal(await e.get(key), `v${i}`, `key ${i} passed as a string, again`);
    }
    await e.close();
  });
}

test("a batch's packing buffers serve the next batch once released, after a failure too; never two at once; never more ops than begun with", () => {
  const isInvalid = (e) => e instanceof TtlKvError && e.code === "INVALID_ARGUMENT";
  const first = new PackedBatch(4);
  first.key("a");
  first.put("v", TTL_DEFAULT, 0, PUT_ALWAYS);
  const [kept] = first.finish(true);
  // Packed while the first is: buffers of its own.
  const inner = new PackedBatch(4);
  assert.notEqual(inner.finish(true)[0].buffer, kept.buffer);
  inner.release();
  first.release();
  // A batch that fails while packed gives them back all the same (Db.batch releases in `finally`).
  const failed = new PackedBatch(4);
  assert.equal(failed.finish(true)[0].buffer, kept.buffer);
  assert.throws(() => failed.key(5), isInvalid);
  failed.release();
  const next = new PackedBatch(4);
  next.key("b");
  next.put("w", TTL_DEFAULT, 0, PUT_ALWAYS);
  const [inPlace, meta] = next.finish(true);
  assert.equal(inPlace.buffer, kept.buffer);
  // Where the call may read them later: copies of their exact size, nothing of the kept buffers.
  const [bytes, numbers] = next.finish(false);
  assert.notEqual(bytes.buffer, kept.buffer);
  assert.equal(bytes.buffer.byteLength, bytes.length);
  assert.deepEqual([...bytes], [...inPlace]);
  assert.equal(numbers.buffer.byteLength, numbers.length * 8);
  assert.deepEqual([...numbers], [...meta]);
  next.release();
  // The kept buffers have room for more ops than this batch began with: refused all the same.
  const grown = new PackedBatch(1);
  grown.key("c");
  grown.put("x", TTL_DEFAULT, 0, PUT_ALWAYS);
  grown.key("d");
  assert.throws(() => grown.put("y", TTL_DEFAULT, 0, PUT_ALWAYS), isInvalid);
  grown.release();
});
