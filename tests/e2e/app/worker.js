// A module worker of the Vite app: the same package, on IndexedDB, inside a worker.
import { write, read, remove } from "./checks.js";

self.onmessage = async (e) => {
  try {
    await remove(e.data);
    await write(e.data);
    self.postMessage({ ok: true, read: await read(e.data) });
  } catch (error) {
    self.postMessage({ ok: false, error: String(error), code: error?.code });
  }
};
