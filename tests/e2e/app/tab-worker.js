// A module worker that takes part in the many-tabs protocol like a tab: the end-to-end tests use
// it as a writer whose thread they can stall (a frozen or hung writer).
import { open } from "ttlkv";

let db;
self.onmessage = async ({ data }) => {
  const reply = (out) => self.postMessage({ id: data.id, ...out });
  try {
    if (data.cmd === "open") {
      db = await open(data.name, { maintenance: "manual", writerTimeoutMs: data.writerTimeoutMs });
      reply({ value: true });
    } else if (data.cmd === "hang-then-put") {
      // Stall this thread (nothing of it runs, as in a frozen tab), then write at once on waking,
      // before any message or lock news that arrived meanwhile is handled.
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
