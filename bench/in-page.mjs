// The one way the bench's probes run code in a browser page: `inBenchPage(engine, probe)` serves
// the repository (cross-origin isolated, as `npm run bench` does), opens the bench page
// (bench/browser/) in `engine` (tests/e2e/browsers.mjs: no browser is downloaded), evaluates
// `probe` there and gives back its result, closing the browser and the server whatever happens.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "../scripts/serve.mjs";
import { launch } from "../tests/e2e/browsers.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export async function inBenchPage(engine, probe) {
  const server = await serve({ "/bench/": path.join(root, "bench"), "/ttlkv/": root, "/node_modules/": path.join(root, "node_modules") }, 0, { crossOriginIsolated: true });
  try {
    const browser = await launch(engine);
    try {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${server.origin}/bench/browser/`);
      await page.waitFor(() => window.bench);
      return await page.evaluate(probe);
    } finally {
      await browser.close();
    }
  } finally {
    await server.close();
  }
}
