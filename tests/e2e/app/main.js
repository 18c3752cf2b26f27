// The Vite app: exposes the checks to the test, and runs them in a module worker too.
import * as checks from "./checks.js";

window.ttlkvChecks = {
  ...checks,
  inWorker(name) {
    const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
    return new Promise((resolve, reject) => {
      worker.onmessage = (e) => {
        worker.terminate();
        resolve(e.data);
      };
      worker.onerror = (e) => reject(new Error(e.message));
      worker.postMessage(name);
    });
  },
};
/** A worker that joins the many-tabs protocol (tab-worker.js), driven by messages. */
window.tabWorker = {
  worker: undefined,
  next: 0,
  waiting: new Map(),
  /** How many stalls (`hang-then-put`) the worker has begun. */
  stalls: 0,
  send(message) {
    if (!this.worker) {
      this.worker = new Worker(new URL("./tab-worker.js", import.meta.url), { type: "module" });
      this.worker.onmessage = ({ data }) => {
        if (data.hanging) return void this.stalls++;
        this.waiting.get(data.id)?.(data);
        this.waiting.delete(data.id);
      };
    }
    const id = this.next++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.worker.postMessage({ id, ...message });
    });
  },
  /** Kill the worker (its Web Lock is released, as when a tab is closed or crashes). */
  kill() {
    this.worker?.terminate();
    this.worker = undefined;
  },
};
document.getElementById("status").textContent = "ready";
