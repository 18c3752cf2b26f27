// The package as a user installs it: `npm pack` of the repository (bindings/js/dist must be
// built: scripts/build-package.sh), unpacked into a scratch project's node_modules/ttlkv, so
// that runtimes resolve `import "ttlkv"` through package.json's export conditions.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../../../", import.meta.url));

/**
 * A new scratch project with the packed package installed; returns its directory. `files` maps
 * relative paths to contents written into it (e.g. the script a runtime runs).
 */
export function scratchProject(files = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), "ttlkv-runtime-"));
  const tarball = execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: root, encoding: "utf8" }).trim().split("\n").pop();
  const installed = path.join(dir, "node_modules", "ttlkv");
  mkdirSync(installed, { recursive: true });
  execFileSync("tar", ["-xzf", path.join(dir, tarball), "-C", installed, "--strip-components=1"]);
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "scratch", private: true, type: "module" }));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

/**
 * Every file under `dir` (recursively), as `files` for scratchProject: `under/relative path` →
 * contents. The conformance build has JS snippets in a subdirectory beside its glue.
 */
export function filesOf(dir, under) {
  return Object.fromEntries(
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => {
        const file = path.join(entry.parentPath ?? entry.path, entry.name);
        return [path.join(under, path.relative(dir, file)), readFileSync(file)];
      }),
  );
}

/** The binaries of the runtimes, installed from npm as the root devDependencies. */
export const binaries = {
  deno: path.join(root, "node_modules/@deno/linux-x64-glibc/deno"),
  workerd: path.join(root, "node_modules/@cloudflare/workerd-linux-64/bin/workerd"),
};
