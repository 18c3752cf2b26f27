// The package's JavaScript keeps the layout rules of the Rust sources (tests/source_layout.rs):
// no circle of imports among its files, and no file over 450 lines unless its top comment says
// why in a line starting `Size:`. What is checked: every .js file of bindings/js and its
// subfolders, except the build's output (dist/) and the generated wasm-bindgen glue (pkg/, pkg-server/).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bindings/js");
const MAX_LINES = 450;

function sources(dir = root) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const at = path.join(dir, name);
    if (statSync(at).isDirectory()) {
      if (dir === root && (name === "dist" || name === "pkg" || name === "pkg-server")) continue;
      out.push(...sources(at));
    } else if (name.endsWith(".js")) out.push(at);
  }
  return out;
}

/** The package's own files each file imports (relative imports only). */
function graph(files) {
  const edges = new Map();
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const targets = [...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+)"/gm)]
      .map(([, spec]) => path.resolve(path.dirname(file), spec))
      .filter((target) => files.includes(target));
    edges.set(file, targets);
  }
  return edges;
}

/** One circle of `edges` as file names, or undefined. */
function circle(edges) {
  const state = new Map();
  const stack = [];
  const visit = (file) => {
    state.set(file, "open");
    stack.push(file);
    for (const next of edges.get(file) ?? []) {
      if (state.get(next) === "open") return [...stack.slice(stack.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(file, "done");
    return undefined;
  };
  for (const file of edges.keys()) {
    if (!state.has(file)) {
      const found = visit(file);
      if (found) return found.map((f) => path.relative(root, f));
    }
  }
  return undefined;
}

test("the checker finds a circle and sees real imports", () => {
  const [a, b, c] = ["a.js", "b.js", "c.js"].map((f) => path.join(root, f));
  assert.deepEqual(circle(new Map([[a, [b]], [b, [c]], [c, [a]]])), ["a.js", "b.js", "c.js", "a.js"]);
  assert.equal(circle(new Map([[a, [b]], [b, [c]], [c, []]])), undefined);
  const edges = graph(sources());
  assert.ok(edges.get(path.join(root, "core.js")).includes(path.join(root, "open.js")), "core.js imports open.js");
});

test("the package's files import each other in no circle", () => {
  const found = circle(graph(sources()));
  assert.equal(found, undefined, `a circle of imports: ${found?.join(" -> ")}`);
});

test("no file of the package is over 450 lines without a Size: reason at its top", () => {
  const long = sources()
    .map((file) => ({ file, text: readFileSync(file, "utf8") }))
    .filter(({ text }) => text.split("\n").length > MAX_LINES)
    .filter(({ text }) => !/^\/\/ Size:/m.test(text.slice(0, text.search(/^(import|export|const|function|class)\b/m))))
    .map(({ file, text }) => `${path.relative(root, file)}: ${text.split("\n").length} lines`);
  assert.deepEqual(long, []);
});
