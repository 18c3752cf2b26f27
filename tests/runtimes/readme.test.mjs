// Every quick start in the README is code a test runs: each code block the README marks with
// `<!-- runs: <file> -->` is that file, as written (less the file's leading comment lines, which
// say which test runs it). The tests named in the files' comments run them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { root } from "./support/packed.mjs";

const readme = readFileSync(path.join(root, "README.md"), "utf8");
const marked = [...readme.matchAll(/<!-- runs: (\S+) -->\s*```\w*\n([\s\S]*?)```/g)].map(([, file, code]) => ({ file, code }));

/** `text` without its leading `//` comment lines (and the blank line after them). */
function withoutHeader(text) {
  const lines = text.split("\n");
  let i = 0;
  while (i < lines.length && lines[i].startsWith("//")) i++;
  if (i > 0 && lines[i] === "") i++;
  return lines.slice(i).join("\n");
}

test("the README marks its quick starts (Worker, Durable Object, Deno, Vercel Edge, Node files, Keyv, cache-manager)", () => {
  assert.ok(marked.length >= 7, `${marked.length} marked code blocks`);
});

for (const { file, code } of marked) {
  test(`the README's code for ${file} is the file a test runs`, () => {
    const at = path.join(root, file);
    assert.ok(existsSync(at), `${file} does not exist`);
    const text = readFileSync(at, "utf8");
    assert.ok(code === text || code === withoutHeader(text), `the README's block differs from ${file}`);
  });
}
