// A page-store adapter over files with node:fs: the example of an adapter an app writes for its
// own storage, kept honest by the core's conformance suite (bindings/web/tests/
// adapter_conformance.rs) and used by the package's Node tests (tests/js/).
//
// Layout in `dir`: one file per page (`w_…`, `m_…`, `d_…_…`: the page key with "/" as "_"), the
// manifest in `MANIFEST` as JSON, and `JOURNAL` while a commit is being applied. A commit is
// atomic across a crash: its new pages and manifest are first written to temporary files, then a
// journal naming every step is written and renamed into place (the commit point), then the steps
// run and the journal is removed. Opening (readManifest) finishes any journal left behind, so a
// crash leaves either all of a commit or none of it. The version check runs before the commit
// point, and only one commit of one adapter object runs at a time.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

const MANIFEST = "MANIFEST";
const JOURNAL = "JOURNAL";
const fileOf = (key) => key.replaceAll("/", "_");
const keyOf = (file) => file.replaceAll("_", "/");

export function fsAdapter(dir) {
  mkdirSync(dir, { recursive: true });
  const at = (name) => path.join(dir, name);
  let queue = Promise.resolve();
  let recovered = false;

  function finishJournal() {
    if (!existsSync(at(JOURNAL))) return;
    const { renames, deletes } = JSON.parse(readFileSync(at(JOURNAL), "utf8"));
    for (const name of deletes) rmSync(at(name), { force: true });
    for (const [from, to] of renames) if (existsSync(at(from))) renameSync(at(from), at(to));
    rmSync(at(JOURNAL));
  }
  function recover() {
    if (recovered) return;
    finishJournal();
    // Temporary files of a commit that never reached its commit point.
    for (const name of readdirSync(dir)) if (name.endsWith(".tmp")) rmSync(at(name));
    recovered = true;
  }
  function readManifestNow() {
    recover();
    if (!existsSync(at(MANIFEST))) return null;
    const { version, bytes } = JSON.parse(readFileSync(at(MANIFEST), "utf8"));
    return { version, bytes: new Uint8Array(Buffer.from(bytes, "base64")) };
  }

  return {
    async readManifest() {
      return readManifestNow();
    },
    async getPage(key) {
      recover();
      const file = at(fileOf(key));
      return existsSync(file) ? new Uint8Array(readFileSync(file)) : null;
    },
    async listPages(prefix) {
      recover();
      const filePrefix = fileOf(prefix);
      return readdirSync(dir)
        .filter((name) => name.startsWith(filePrefix) && !name.endsWith(".tmp"))
        .map(keyOf)
        .sort();
    },
    commit({ expectedVersion, manifest, puts, deletes }) {
      const step = queue.then(() => {
        const current = readManifestNow();
        if ((current ? current.version : 0) !== expectedVersion) {
          throw Object.assign(new Error(`stored manifest is version ${current ? current.version : 0}`), { code: "FENCED" });
        }
        const renames = [];
        let n = 0;
        for (const [key, bytes] of puts) {
          const tmp = `${fileOf(key)}.${n++}.tmp`;
          writeFileSync(at(tmp), bytes);
          renames.push([tmp, fileOf(key)]);
        }
        if (manifest) {
          const tmp = `${MANIFEST}.tmp`;
          writeFileSync(at(tmp), JSON.stringify({ version: manifest.version, bytes: Buffer.from(manifest.bytes).toString("base64") }));
          renames.push([tmp, MANIFEST]);
        }
        writeFileSync(at(`${JOURNAL}.tmp`), JSON.stringify({ renames, deletes: deletes.map(fileOf) }));
        renameSync(at(`${JOURNAL}.tmp`), at(JOURNAL)); // the commit point
        finishJournal();
      });
      queue = step.catch(() => {});
      return step;
    },
  };
}
