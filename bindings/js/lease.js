// One context at a time where the many-tabs protocol cannot run (no Web Locks or no
// BroadcastChannel in this browser): the context that opens an IndexedDB database holds a lease,
// a record in the small IndexedDB database `ttlkv-lease:<name>` that it renews every second. A
// second context that finds a live lease held by another is refused with a clear error instead of
// opening the engine (which would fence the first). A lease not renewed for LEASE_MS (the holder
// was closed without cleaning up, crashed or is frozen) is free again; a frozen holder that wakes
// after someone else took over leaves the lease to it and finds its own commits FENCED.
import { TtlKvError } from "./errors.js";

const LEASE_MS = 3_000;
const RENEW_MS = 1_000;

function request(r) {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

async function leaseDb(name) {
  const open = indexedDB.open(`ttlkv-lease:${name}`, 1);
  open.onupgradeneeded = () => open.result.createObjectStore("lease");
  return request(open);
}

/** Run `fn(store)` in one readwrite transaction on the lease record; resolves with its result. */
async function inLease(db, fn) {
  const tx = db.transaction("lease", "readwrite");
  const done = new Promise((resolve, reject) => {
    tx.oncomplete = resolve;
    tx.onabort = () => reject(tx.error);
  });
  // Where `fn` fails, its error is the one to report: the abort that follows is handled here.
  done.catch(() => {});
  const out = await fn(tx.objectStore("lease"));
  await done;
  return out;
}

/** IndexedDB's failure `e` to take the lease as the error it means, its cause kept. */
function leaseError(e) {
  const code = e?.name === "QuotaExceededError" ? "QUOTA_EXCEEDED" : "STORAGE";
  return new TtlKvError(code, `the lease of the database could not be taken: ${e?.message ?? String(e)}`, { cause: e });
}

/** Take the lease of `name` for this context, or throw UNSUPPORTED if another holds it. */
export async function takeLease(name) {
  let db;
  let taken;
  const me = Math.random().toString(36).slice(2) + Date.now().toString(36);
  try {
    db = await leaseDb(name);
    taken = await inLease(db, async (store) => {
      const current = await request(store.get("holder"));
      if (current && current.owner !== me && Date.now() - current.renewedAt < LEASE_MS) return false;
      store.put({ owner: me, renewedAt: Date.now() }, "holder");
      return true;
    });
  } catch (e) {
    db?.close();
    throw leaseError(e);
  }
  if (!taken) {
    db.close();
    throw new TtlKvError(
      "UNSUPPORTED",
      `database "${name}" is open in another tab or worker, and this browser lacks Web Locks or ` +
        "BroadcastChannel, which sharing it needs: only one context can use it at a time",
    );
  }
  // Renew only a lease that is still ours. A tab that wakes from a freeze may find that another
  // took the lease over meanwhile: writing its own record then would hand the lease back to a tab
  // whose commits are fenced, and (deleted on its close) let a third tab fence the one in use.
  // This context has lost the lease: it stops renewing, and its commits fail with FENCED.
  const timer = setInterval(() => {
    inLease(db, async (store) => {
      const mine = (await request(store.get("holder")))?.owner === me;
      if (mine) store.put({ owner: me, renewedAt: Date.now() }, "holder");
      else clearInterval(timer);
    }).catch(() => {});
  }, RENEW_MS);
  return {
    async release() {
      clearInterval(timer);
      await inLease(db, async (store) => {
        const current = await request(store.get("holder"));
        if (current && current.owner === me) store.delete("holder");
      }).catch(() => {});
      db.close();
    },
  };
}
