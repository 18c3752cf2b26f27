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
document.getElementById("status").textContent = "ready";
