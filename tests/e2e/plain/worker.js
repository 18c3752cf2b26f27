// A module worker with no bundler: imports the package's files directly.
import { open } from "/ttlkv/bindings/js/dist/index.js";

self.onmessage = async (e) => {
  try {
    const db = await open(e.data);
    await db.put("from-worker", { n: 1 }, { ttlMs: 60_000 });
    const value = await db.get("from-worker");
    const storage = typeof indexedDB !== "undefined" ? "indexeddb" : "memory";
    await db.close();
    self.postMessage({ ok: true, value, storage });
  } catch (error) {
    self.postMessage({ ok: false, error: String(error), code: error?.code });
  }
};
