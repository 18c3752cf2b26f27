// Test support: a fake clock, and a page-store adapter over a Map that keeps the contract
// (atomic commit, manifest-version precondition, deletes before puts).

export const T0 = 1_767_225_600_000;

export function fakeClock(start = T0) {
  let now = start;
  const clock = () => now;
  clock.advance = (ms) => {
    now += ms;
  };
  clock.set = (ms) => {
    now = ms;
  };
  return clock;
}

export function mapAdapter() {
  const pages = new Map();
  let manifest = null;
  let commits = 0;
  let failed = 0;
  const size = () => [...pages.values()].reduce((n, p) => n + p.length, 0) + (manifest ? manifest.bytes.length : 0);
  return {
    pages,
    /** Bytes the adapter may hold; a commit that would exceed it fails with QUOTA_EXCEEDED. */
    quota: Infinity,
    /** While set, every commit first waits for this Promise (a commit held back). */
    hold: null,
    /** While set, every commit fails with this error, writing nothing (storage failing). */
    failure: null,
    get commits() {
      return commits;
    },
    /** Commits failed with `failure`. */
    get failed() {
      return failed;
    },
    get bytes() {
      return size();
    },
    async readManifest() {
      return manifest && { version: manifest.version, bytes: manifest.bytes.slice() };
    },
    async getPage(key) {
      const p = pages.get(key);
      return p && p.slice();
    },
    async listPages(prefix) {
      return [...pages.keys()].filter((k) => k.startsWith(prefix)).sort();
    },
    async commit({ expectedVersion, manifest: next, puts, deletes }) {
      if (this.hold) await this.hold;
      if (this.failure) {
        failed++;
        throw this.failure;
      }
      const current = manifest ? manifest.version : 0;
      if (current !== expectedVersion) {
        throw Object.assign(new Error(`expected manifest ${expectedVersion}, found ${current}`), { code: "FENCED" });
      }
      const after = new Map(pages);
      for (const k of deletes) after.delete(k);
      for (const [k, bytes] of puts) after.set(k, bytes);
      const grown = [...after.values()].reduce((n, p) => n + p.length, 0) + (next ? next.bytes.length : manifest ? manifest.bytes.length : 0);
      if (grown > this.quota && grown > size()) {
        throw Object.assign(new Error("quota exceeded"), { code: "QUOTA_EXCEEDED" });
      }
      for (const k of deletes) pages.delete(k);
      for (const [k, bytes] of puts) pages.set(k, bytes.slice());
      if (next) manifest = { version: next.version, bytes: next.bytes.slice() };
      commits++;
    },
  };
}
