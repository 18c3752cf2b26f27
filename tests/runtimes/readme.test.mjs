// Every quick start in the docs is code a test runs: each code block that README.md or a
// docs/*.md page marks with `<!-- runs: <file> -->` is that file, as written (less the file's
// leading comment lines, which say which test runs it). The tests named in the files' comments
// run them. And every relative link in those pages leads to a file, or a heading, that exists.
// Only reads files: `node --test tests/runtimes/readme.test.mjs` needs no build.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { root } from "./support/packed.mjs";

/** The pages checked: the README and every page in docs/, as paths from the repository root. */
const pages = [
  "README.md",
  ...readdirSync(path.join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`),
];
const text = new Map(pages.map((page) => [page, readFileSync(path.join(root, page), "utf8")]));

const marked = pages.flatMap((page) =>
  [...text.get(page).matchAll(/<!-- runs: (\S+) -->\s*```\w*\n([\s\S]*?)```/g)].map(([, file, code]) => ({ page, file, code })),
);

/** `text` without its leading `//` comment lines (and the blank line after them). */
function withoutHeader(text) {
  const lines = text.split("\n");
  let i = 0;
  while (i < lines.length && lines[i].startsWith("//")) i++;
  if (i > 0 && lines[i] === "") i++;
  return lines.slice(i).join("\n");
}

test("the docs mark their quick starts (Worker, Durable Object, Deno, Vercel Edge, Node files, Keyv, cache-manager)", () => {
  const where = [...new Set(marked.map((m) => m.page))].join(", ") || "no page";
  assert.ok(marked.length >= 7, `${marked.length} marked code blocks (in ${where})`);
});

for (const { page, file, code } of marked) {
  test(`${page}: the code for ${file} is the file a test runs`, () => {
    const at = path.join(root, file);
    assert.ok(existsSync(at), `${page} marks ${file}, which does not exist`);
    const text = readFileSync(at, "utf8");
    assert.ok(code === text || code === withoutHeader(text), `${page}: the block marked ${file} differs from that file`);
  });
}

// ---------------------------------------------------------------------------------------------
// Links
// ---------------------------------------------------------------------------------------------

/** `markdown` with fenced code blocks and inline code spans blanked out (links there are code). */
function prose(markdown) {
  return markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "")
    .replace(/`[^`\n]*`/g, "``");
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading) {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1") // a link: its text
    .replace(/\\(.)/g, "$1") // an escaped character: the character
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of the headings of a markdown text (a repeated heading gets `-1`, `-2`, …). */
function anchors(markdown) {
  const seen = new Map();
  const out = new Set();
  const withoutCode = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const [, heading] of withoutCode.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every relative link of `page`: `[text](target)` and `![alt](target)`, outside code. */
function relativeLinks(page) {
  const links = [];
  for (const [, target] of prose(text.get(page)).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto: …
    links.push(target);
  }
  return links;
}

test("the docs have relative links to check", () => {
  assert.ok(pages.reduce((n, page) => n + relativeLinks(page).length, 0) > 20);
});

for (const page of pages) {
  test(`${page}: every relative link leads to a file or heading that exists`, () => {
    const broken = [];
    for (const target of relativeLinks(page)) {
      const [file, anchor] = target.split("#", 2);
      const to = file === "" ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), decodeURI(file)));
      if (to.startsWith("..") || path.posix.isAbsolute(to)) {
        broken.push(`${target} (outside the repository)`);
        continue;
      }
      if (!existsSync(path.join(root, to))) {
        broken.push(`${target} (no file ${to})`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!to.endsWith(".md")) {
        broken.push(`${target} (an anchor into a file that is not markdown)`);
        continue;
      }
      const headings = anchors(text.get(to) ?? readFileSync(path.join(root, to), "utf8"));
      if (!headings.has(decodeURIComponent(anchor))) broken.push(`${target} (no heading #${anchor} in ${to})`);
    }
    assert.deepEqual(broken, [], `${page} has broken links:\n  ${broken.join("\n  ")}`);
  });
}
