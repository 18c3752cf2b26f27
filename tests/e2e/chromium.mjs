// Headless Chromium for the end-to-end tests: Debian's /usr/bin/chromium driven by playwright-core
// (no browser is ever downloaded). CHROMIUM overrides the path.
import { chromium } from "playwright-core";

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A browser; `extraArgs` go after CHROMIUM_ARGS (e.g. `--js-flags=--expose-gc` for `window.gc()`). */
export function launch(extraArgs = []) {
  return chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: [...CHROMIUM_ARGS, ...extraArgs] });
}

/** A browser with a profile on disk (`dir`), which survives the browser being killed. */
export function launchPersistent(dir) {
  return chromium.launchPersistentContext(dir, { executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: CHROMIUM_ARGS });
}
