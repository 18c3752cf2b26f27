// A module worker that takes part in the many-tabs protocol like a tab: the end-to-end tests use
// it as a writer whose thread they can stall (a frozen or hung writer).
import { open } from "ttlkv";

let db;
self.onmessage = async ({ data }) => {
  const reply = (out) => self.postMessage({ id: data.id, ...out });
  try {
    if (data.cmd === "open") {
      // The same fake time as the pages' (checks.js `openShared`): every context of an app reads
      // one clock, and a database refuses a clock a day or more behind the time it handed out.
      db = await open(data.name, { maintenance: "manual", writerTimeoutMs: data.writerTimeoutMs, clock: () => 1_767_225_600_000 });
      reply({ value: true });
    } else if (data.cmd === "answer-nothing") {
      // From now on this writer applies the calls other tabs forward but its answers never leave
      // (as if it were killed right after each commit): the test then terminates it.
      const post = BroadcastChannel.prototype.postMessage;
      BroadcastChannel.prototype.postMessage = function (message) {
        if (message?.t !== "reply") post.call(this, message);
      };
      reply({ value: true });
    } else if (data.cmd === "hang-then-put") {
      // Stall this thread (nothing of it runs, as in a frozen tab), then write at once on waking,
      // before any message or lock news that arrived meanwhile is handled.
      // The page hears that the stall began (the test waits for that, not for a guessed delay).
      self.postMessage({ hanging: true });
      const end = Date.now() + data.ms;
      while (Date.now() < end);
      db.put(data.key, data.value).then(
        (value) => reply({ value }),
        (e) => reply({ code: e.code, message: e.message }),
      );
    } else {
      reply({ value: await db[data.cmd](...data.args) });
    }
  } catch (e) {
    reply({ code: e.code, message: e.message });
  }
};
