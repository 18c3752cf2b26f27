// The browsers of the end-to-end tests behind one small interface, so each scenario is written
// once and runs in every engine:
// - chromium: Debian's /usr/bin/chromium through playwright-core (CHROMIUM overrides the path);
// - firefox: Firefox ESR through puppeteer-core over WebDriver BiDi (FIREFOX overrides the path);
// - webkit: WebKitGTK's MiniBrowser through WebKitWebDriver (classic WebDriver, selenium-webdriver),
//   which has no headless mode: it runs under `xvfb-run -a`.
// No browser is ever downloaded. TTLKV_BROWSERS="chromium,webkit" runs only the engines named.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { chromium } from "playwright-core";
import puppeteer from "puppeteer-core";
import { Builder } from "selenium-webdriver";

export const ENGINES = (process.env.TTLKV_BROWSERS ?? "chromium,firefox,webkit")
  .split(",")
  .map((e) => e.trim())
  .filter(Boolean);

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const MINIBROWSER = process.env.MINIBROWSER ?? "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";

// ---- In the page: every evaluation runs the same wrapper, so results and errors look alike in
// every engine. `undefined` survives the trip (JSON alone would drop it or turn it into null).

const UNDEFINED = "\u0000undefined";
const wrap = (source) => `(async () => {
  try {
    const value = await (${source});
    return JSON.stringify({ value }, (k, v) => (v === undefined ? ${JSON.stringify(UNDEFINED)} : v));
  } catch (e) {
    return JSON.stringify({ error: String(e && e.stack ? e.message + "\\n" + e.stack : e) });
  }
})()`;

function decode(engine, text) {
  const restore = (v) => {
    if (v === UNDEFINED) return undefined;
    if (Array.isArray(v)) return v.map(restore);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, restore(x)]));
    return v;
  };
  const out = JSON.parse(text);
  if ("error" in out) throw new Error(`${engine} page: ${out.error}`);
  return restore(out).value;
}

const call = (fn, args) => `(${fn})(...${JSON.stringify(args)})`;

// Errors the page did not catch: collected by the page itself where the driver has no events for
// them (WebKit), from the first evaluation on (the app page collects them from its first script).
const COLLECT_ERRORS = `if (!window.e2eErrors) {
  window.e2eErrors = [];
  addEventListener("error", (e) => window.e2eErrors.push(String(e.error ?? e.message)));
  addEventListener("unhandledrejection", (e) => window.e2eErrors.push(String(e.reason)));
}`;

/**
 * A page's URL with the context's init scripts in its fragment: the app page (app/index.html)
 * runs them before any of its modules, on every load of the page. (WebDriver classic has no init
 * scripts, so every engine takes this one path.)
 */
function withInits(url, inits) {
  if (inits.length === 0) return url;
  return `${url}#e2e-init=${encodeURIComponent(JSON.stringify(inits))}`;
}

/** What every engine's page shares: evaluate, waitFor and init scripts over `raw(source)`. */
class Page {
  constructor(engine, context) {
    this.engine = engine;
    this.context = context;
  }
  /** `fn(...args)` in the page (a function or its source), awaited; its result must be JSON-able. */
  evaluate(fn, ...args) {
    return this.raw(wrap(call(fn, args)));
  }
  /** Resolves once `fn(arg)` is truthy in the page (polled every 20 ms there), or throws after `timeout` ms. */
  waitFor(fn, arg, { timeout = 15_000 } = {}) {
    return this.evaluate(
      async (source, a, ms) => {
        const f = (0, eval)(`(${source})`);
        const end = performance.now() + ms;
        while (!(await f(a))) {
          if (performance.now() > end) throw new Error(`waited ${ms} ms in vain for ${source}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return true;
      },
      String(fn),
      arg,
      timeout,
    ).catch((e) => {
      // The page went away while it was waited on: say which condition was waited for.
      throw new Error(`waitFor(${String(fn)}): ${e.message}`);
    });
  }
  goto(url) {
    return this.navigate(withInits(url, this.context.inits));
  }
}

// ---- Chromium and Firefox: playwright-core's and puppeteer-core's pages share this much ----

class ScriptedPage extends Page {
  constructor(engine, context, page) {
    super(engine, context);
    this.page = page;
    this.pageErrors = [];
    page.on("pageerror", (e) => this.pageErrors.push(String(e)));
  }
  async raw(source) {
    return decode(this.engine, await this.page.evaluate(source));
  }
  navigate(url) {
    return this.page.goto(url);
  }
  reload() {
    return this.page.reload();
  }
  async errors() {
    return this.pageErrors;
  }
  screenshot(path) {
    return this.page.screenshot({ path });
  }
  close() {
    return this.page.close();
  }
}

// ---- Chromium (playwright-core) ----

class ChromiumPage extends ScriptedPage {
  constructor(context, page) {
    super("chromium", context, page);
  }
  /** A DevTools Protocol command for this page (Chromium only). */
  async cdp(method, params) {
    this.session ??= await this.page.context().newCDPSession(this.page);
    return this.session.send(method, params);
  }
}

async function launchChromium({ profile, gc }) {
  const options = {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: [...CHROMIUM_ARGS, ...(gc ? ["--js-flags=--expose-gc"] : [])],
  };
  if (profile) {
    const persistent = await chromium.launchPersistentContext(profile, options);
    return {
      newContext: async () => persistent,
      close: () => persistent.close(),
      pageOf: newChromiumPage,
    };
  }
  const browser = await chromium.launch(options);
  return {
    newContext: () => browser.newContext(),
    close: () => browser.close(),
    pageOf: newChromiumPage,
  };
}

/** A page of `context`: the blank one a persistent context starts with, else a new one. */
async function newChromiumPage(context, { viewport } = {}) {
  const raw = context.raw;
  const initial = raw.pages().find((p) => p.url() === "about:blank" && !context.pages.some((q) => q.page === p));
  const page = initial ?? (await raw.newPage());
  if (viewport) await page.setViewportSize(viewport);
  return new ChromiumPage(context, page);
}

// ---- Firefox (puppeteer-core, WebDriver BiDi) ----


async function launchFirefox({ profile, prefs }) {
  const browser = await puppeteer.launch({
    browser: "firefox",
    executablePath: process.env.FIREFOX ?? "/usr/bin/firefox-esr",
    headless: true,
    userDataDir: profile,
    extraPrefsFirefox: {
      // A background tab's timers fire at most once a second by default: the many-tabs tests'
      // takeover timeouts (300-500 ms) and condition polling need them on time, as Chromium's
      // and WebKit's headless tabs have them.
      "dom.min_background_timeout_value": 4,
      "dom.min_background_timeout_value_without_budget_throttling": 4,
      "dom.timeout.enable_budget_timer_throttling": false,
      ...prefs,
    },
  });
  return {
    pid: browser.process()?.pid,
    // A persistent profile's storage is its default context's; other contexts start empty.
    newContext: async () => (profile ? browser.defaultBrowserContext() : browser.createBrowserContext()),
    close: () => browser.close(),
    async pageOf(context, { viewport } = {}) {
      const page = await context.raw.newPage();
      if (viewport) await page.setViewport(viewport);
      return new ScriptedPage("firefox", context, page);
    },
  };
}

// ---- WebKit (WebKitWebDriver under Xvfb, selenium-webdriver) ----

/**
 * Classic WebDriver runs one command at a time on one current window. So an evaluation only starts
 * the function in its page (deferred to a task of the page's own, so a page that then stalls its
 * thread holds nothing up) and the page posts the outcome to a small HTTP sink of this process:
 * tabs run concurrently, as they do under the other engines' drivers.
 */
class WebKitPage extends Page {
  constructor(context, webkit, handle) {
    super("webkit", context);
    this.webkit = webkit;
    this.handle = handle;
  }
  async raw(source) {
    const { id, outcome } = this.webkit.sink.expect(this);
    await this.webkit.inWindow(this.handle, (driver) =>
      driver.executeScript(
        `${COLLECT_ERRORS}
        const [source, sink] = arguments;
        setTimeout(async () => {
          const body = await (0, eval)(source);
          fetch(sink, { method: "POST", body, mode: "no-cors" });
        });`,
        source,
        `${this.webkit.sink.origin}/${id}`,
      ),
    );
    return decode(this.engine, await outcome);
  }
  navigate(url) {
    return this.webkit.inWindow(this.handle, (driver) => driver.get(url));
  }
  reload() {
    return this.webkit.inWindow(this.handle, (driver) => driver.navigate().refresh());
  }
  async errors() {
    return this.evaluate(() => window.e2eErrors ?? []);
  }
  async screenshot(path) {
    const png = await this.webkit.inWindow(this.handle, (driver) => driver.takeScreenshot());
    writeFileSync(path, Buffer.from(png, "base64"));
  }
  async close() {
    this.webkit.sink.abandon(this, "the page was closed");
    await this.webkit.inWindow(this.handle, (driver) => driver.close());
  }
}

/** Where WebKit pages post their results: `expect(page)` gives an id and the outcome's promise. */
async function resultSink() {
  const waiting = new Map();
  let next = 0;
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const id = Number(req.url.slice(1));
      waiting.get(id)?.resolve(body);
      waiting.delete(id);
      res.writeHead(204, { "access-control-allow-origin": "*" }).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    expect(page) {
      const id = next++;
      const outcome = new Promise((resolve, reject) => waiting.set(id, { page, resolve, reject }));
      return { id, outcome };
    },
    /** Fail what `page` (every page when none is given) still owes: it will never answer. */
    abandon(page, why) {
      for (const [id, w] of waiting) {
        if (page && w.page !== page) continue;
        waiting.delete(id);
        w.reject(new Error(`webkit page: ${why}`));
      }
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** `promise`, or an error after `ms`: a WebDriver without a display hangs instead of failing. */
function within(ms, what, promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function launchWebKit({ gc }) {
  const port = await freePort();
  // $vm.gc() in pages when asked for (JSC reads its options from JSC_* variables).
  const env = { ...process.env, ...(gc ? { JSC_useDollarVM: "1" } : {}) };
  const xvfb = spawn("xvfb-run", ["-a", process.env.WEBKIT_WEBDRIVER ?? "/usr/bin/WebKitWebDriver", `--port=${port}`], {
    env,
    detached: true, // its own process group: close() ends Xvfb, the driver and the browser together
    stdio: "ignore",
  });
  const stop = () => {
    try {
      process.kill(-xvfb.pid, "SIGKILL");
    } catch {
      // gone already
    }
  };
  try {
    const server = `http://127.0.0.1:${port}`;
    await within(20_000, "WebKitWebDriver start", untilListening(server));
    const capabilities = {
      browserName: "MiniBrowser",
      "webkitgtk:browserOptions": { binary: MINIBROWSER, args: ["--automation"] },
    };
    const driver = await within(30_000, "WebKitWebDriver session", new Builder().usingServer(server).withCapabilities(capabilities).build());
    const sink = await resultSink();
    const home = await driver.getWindowHandle(); // never closed: the session ends with its last window
    let queue = Promise.resolve();
    const webkit = {
      sink,
      /** Run `fn(driver)` with `handle` the current window, one command sequence at a time. */
      inWindow(handle, fn) {
        const run = queue.then(async () => {
          await driver.switchTo().window(handle);
          return fn(driver);
        });
        queue = run.catch(() => {});
        return run;
      },
    };
    return {
      pid: xvfb.pid,
      newContext: async () => ({}),
      async close() {
        sink.abandon(undefined, "the browser was closed");
        await within(10_000, "WebKitWebDriver quit", driver.quit()).catch(() => {});
        await sink.close();
        stop();
      },
      async pageOf(context, { viewport } = {}) {
        const handle = await webkit.inWindow(home, async (d) => {
          await d.switchTo().newWindow(viewport ? "window" : "tab");
          if (viewport) await d.manage().window().setRect(viewport);
          return d.getWindowHandle();
        });
        return new WebKitPage(context, webkit, handle);
      },
      async closeContext(context) {
        for (const page of context.pages) await page.close().catch(() => {});
      },
      abandonAll: (why) => sink.abandon(undefined, why),
    };
  } catch (e) {
    stop();
    throw e;
  }
}

async function untilListening(origin) {
  for (;;) {
    const up = await fetch(`${origin}/status`).then((r) => r.ok, () => false);
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// ---- Processes (crash scenarios) ----

function processTable() {
  const table = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (state === "Z") continue; // dead already, only not yet reaped by its parent
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
      table.push({ pid: Number(pid), ppid: Number(ppid), cmdline });
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

/** Pids of the processes whose command line mentions `text`, or whose pid is `root`, and all their descendants. */
export function processTree({ mentioning, root }) {
  const table = processTable().filter((p) => p.pid !== process.pid);
  const found = new Set(table.filter((p) => p.pid === root || (mentioning && p.cmdline.includes(mentioning))).map((p) => p.pid));
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of table) {
      if (!found.has(p.pid) && found.has(p.ppid)) {
        found.add(p.pid);
        grew = true;
      }
    }
  }
  return table.filter((p) => found.has(p.pid));
}

function sigkill(pids) {
  let killed = 0;
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
      killed++;
    } catch {
      // exited meanwhile
    }
  }
  return killed;
}

// ---- The interface the tests use ----

/**
 * A browser of `engine`. Options: `profile` (a directory: its storage survives the browser being
 * killed; Chromium and Firefox), `gc` (pages can collect garbage on demand, see `collectGarbage`
 * in the tests), `prefs` (Firefox preferences).
 */
export async function launch(engine, options = {}) {
  const start = { chromium: launchChromium, firefox: launchFirefox, webkit: launchWebKit }[engine];
  if (!start) throw new Error(`unknown engine ${engine} (TTLKV_BROWSERS takes chromium, firefox, webkit)`);
  const impl = await start(options);
  const contexts = [];
  const browser = {
    engine,
    /**
     * A browser context: its pages share one origin's IndexedDB, Web Locks and BroadcastChannel.
     * (WebKit's automation session has one data store: its contexts share it, and tests keep to
     * database names of their own.)
     */
    async newContext() {
      const context = {
        raw: await impl.newContext(),
        pages: [],
        inits: [],
        /** `fn(arg)` runs in every app page loaded from now on, before the app's own modules. */
        addInitScript(fn, arg) {
          context.inits.push(`(${fn})(${JSON.stringify(arg)})`);
        },
        async newPage(pageOptions) {
          const page = await impl.pageOf(context, pageOptions);
          context.pages.push(page);
          const close = page.close.bind(page);
          page.close = () => {
            context.pages = context.pages.filter((p) => p !== page);
            return close();
          };
          return page;
        },
        async close() {
          if (impl.closeContext) return impl.closeContext(context);
          if (options.profile) return; // the persistent context is the browser's: close() ends it
          await context.raw.close();
        },
      };
      contexts.push(context);
      return context;
    },
    /** A page in a context of its own. */
    async newPage(pageOptions) {
      return (await browser.newContext()).newPage(pageOptions);
    },
    close: () => impl.close(),
    /**
     * SIGKILL every process of the browser at once (no chance to clean up); resolves once they
     * are all gone, so the profile is free for the next launch.
     */
    async kill() {
      const tree = () => processTree({ root: impl.pid, mentioning: options.profile });
      const killed = sigkill(tree().map((p) => p.pid));
      if (killed === 0) throw new Error("no process of the browser was found to kill");
      impl.abandonAll?.("the browser was killed");
      await untilGone(tree);
      await impl.close().catch(() => {});
    },
  };
  return browser;
}

async function untilGone(tree) {
  for (let waited = 0; tree().length > 0; waited += 50) {
    if (waited > 15_000) throw new Error("the browser's processes still run 15 s after SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
