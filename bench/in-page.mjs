// The one way the bench opens its browser pages (`npm run bench` and the probes): `serveBench()`
// serves the repository cross-origin isolated (for performance.now() at 5 µs instead of 100 µs),
// and `benchPageOpener(context, origin)` gives `page()`, which opens a new bench page
// (bench/browser/) in that browser context (one origin's storage) once its module has loaded.
// For the probes, `withBenchPages(engine, use)` does both around `launch(engine)`
// (tests/e2e/browsers.mjs: no browser is downloaded) and calls `use(page)`, closing the browser
// and the server whatever happens; `inBenchPage(engine, probe)` evaluates `probe` in one such page
// (called with `args`) and gives back its result.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "../scripts/serve.mjs";
import { launch } from "../tests/e2e/browsers.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");

export function serveBench() {
  return serve({ "/bench/": here, "/ttlkv/": root, "/node_modules/": path.join(root, "node_modules") }, 0, { crossOriginIsolated: true });
}

export function benchPageOpener(context, origin) {
  return async () => {
    const page = await context.newPage();
    await page.goto(`${origin}/bench/browser/`);
    await page.waitFor(() => window.bench);
    return page;
  };
}

export async function withBenchPages(engine, use) {
  const server = await serveBench();
  try {
    const browser = await launch(engine);
    try {
      return await use(benchPageOpener(await browser.newContext(), server.origin));
    } finally {
      await browser.close();
    }
  } finally {
    await server.close();
  }
}

export function inBenchPage(engine, probe, ...args) {
  return withBenchPages(engine, async (page) => (await page()).evaluate(probe, ...args));
}
