// Runs a worker in workerd the way `wrangler deploy` would ship it, without wrangler: the worker
// source is bundled with esbuild under the export conditions wrangler uses (workerd, worker,
// browser), every `.wasm` import is left out of the bundle as a module of its own (wrangler's
// default CompiledWasm rule: the runtime hands the importer a compiled WebAssembly.Module), and a
// capnp config names the modules, the Durable Object classes and their storage. workerd then
// serves it on a free local port until `stop()`.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import * as esbuild from "esbuild";
import { binaries } from "./packed.mjs";

/**
 * The options of `startWorkerd` that a wrangler config file (wrangler.jsonc) gives: its
 * compatibility date and flags, and its Durable Object bindings, SQLite-backed when a migration
 * lists the class in `new_sqlite_classes`. Comments must be whole lines starting with `//`.
 */
export function wranglerOptions(file) {
  const text = readFileSync(file, "utf8");
  const json = text
    .split("\n")
    .filter((line) => !line.trim().startsWith("//"))
    .join("\n");
  let config;
  try {
    config = JSON.parse(json);
  } catch (e) {
    throw new Error(`${file} is not JSON with whole-line comments`, { cause: e });
  }
  const sqlite = new Set((config.migrations ?? []).flatMap((m) => m.new_sqlite_classes ?? []));
  return {
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags ?? [],
    durableObjects: (config.durable_objects?.bindings ?? []).map((b) => ({ className: b.class_name, binding: b.name, sqlite: sqlite.has(b.class_name) })),
  };
}

/**
 * Bundle `entry` into `outDir`: `worker.js` plus each imported `.wasm`, copied under a flat name
 * (content hash + file name, as wrangler names them). Returns the module list for the config.
 */
export async function bundleWorker(entry, outDir) {
  const wasm = new Map();
  const wasmModules = {
    name: "wasm-modules",
    setup(build) {
      // `?module` is how some entries ask for a compiled module; workerd gives one for any .wasm.
      build.onResolve({ filter: /\.wasm(\?module)?$/ }, (args) => {
        const file = path.resolve(args.resolveDir, args.path.replace(/\?module$/, ""));
        const hash = createHash("sha1").update(readFileSync(file)).digest("hex").slice(0, 16);
        const name = `${hash}-${path.basename(file)}`;
        wasm.set(name, file);
        return { path: `./${name}`, external: true };
      });
    },
  };
  mkdirSync(outDir, { recursive: true });
  await esbuild.build({
    entryPoints: [entry],
    outfile: path.join(outDir, "worker.js"),
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["browser", "module", "main"],
    plugins: [wasmModules],
    logLevel: "warning",
    external: ["cloudflare:*", "node:*"],
  });
  const modules = [{ name: "worker.js", kind: "esModule", file: "worker.js" }];
  for (const [name, file] of wasm) {
    copyFileSync(file, path.join(outDir, name));
    modules.push({ name, kind: "wasm", file: name });
  }
  return modules;
}

const quote = (s) => JSON.stringify(s);

/**
 * The capnp config of one worker service ("main") on `port`. `durableObjects` lists
 * `{ className, binding, sqlite }`; their storage is the directory `storageDir` (workerd keeps one
 * SQLite file per object there), so a restart finds the same objects.
 */
export function capnpConfig({ modules, port, durableObjects = [], storageDir, compatibilityDate, compatibilityFlags = [] }) {
  if (!compatibilityDate) throw new Error("a worker needs a compatibility date");
  const services = ['(name = "main", worker = .worker)'];
  if (durableObjects.length > 0) services.push(`(name = "do-storage", disk = (path = ${quote(storageDir)}, writable = true))`);
  const moduleLines = modules.map((m) => `(name = ${quote(m.name)}, ${m.kind} = embed ${quote(m.file)})`);
  const worker = [
    `compatibilityDate = ${quote(compatibilityDate)}`,
    `compatibilityFlags = [${compatibilityFlags.map(quote).join(", ")}]`,
    `modules = [\n    ${moduleLines.join(",\n    ")}\n  ]`,
  ];
  if (durableObjects.length > 0) {
    // enableSql: a SQLite-backed class, what wrangler's `new_sqlite_classes` migration makes.
    const namespaces = durableObjects.map(
      (d) => `(className = ${quote(d.className)}, uniqueKey = ${quote(`ttlkv-test-${d.className}`)}, enableSql = ${Boolean(d.sqlite)})`,
    );
    const bindings = durableObjects.map((d) => `(name = ${quote(d.binding)}, durableObjectNamespace = ${quote(d.className)})`);
    worker.push(`durableObjectNamespaces = [${namespaces.join(", ")}]`);
    worker.push('durableObjectStorage = (localDisk = "do-storage")');
    worker.push(`bindings = [${bindings.join(", ")}]`);
  }
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [${services.join(", ")}],
  sockets = [(name = "http", address = ${quote(`127.0.0.1:${port}`)}, http = (), service = "main")],
);

const worker :Workerd.Worker = (
  ${worker.join(",\n  ")},
);
`;
}

/** A TCP port nobody listens on right now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on `port`. */
function connects(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Bundle `entry` and serve it with workerd. Options (see `wranglerOptions`): `compatibilityDate`,
 * `compatibilityFlags`, `durableObjects` (`[{ className, binding, sqlite }]`), `experimental` (workerd
 * serves with `--experimental`, which the `experimental` compatibility flag needs: workerd's test
 * hooks, such as capping an object's SQLite storage). Returns `{ url, fetch, json, output, stop, restart,
 * close }`:
 * `fetch(path, init)` asks the worker, `json(path, init)` also checks the status and parses the
 * body, `output()` is everything workerd printed so far (stdout and stderr, all runs), `restart()`
 * stops workerd and serves the same config with the same storage again.
 */
export async function startWorkerd(entry, options = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), "ttlkv-workerd-"));
  const storageDir = path.join(dir, "do-storage");
  mkdirSync(storageDir);
  const modules = await bundleWorker(entry, dir);
  const port = await freePort();
  writeFileSync(path.join(dir, "config.capnp"), capnpConfig({ ...options, modules, port, storageDir }));
  const url = `http://127.0.0.1:${port}`;

  let printed = "";
  let child;
  let exited;

  async function start() {
    // PWD matches cwd, else workerd notes the mismatch in its output.
    const env = { ...process.env, PWD: dir };
    const args = ["serve", "config.capnp", "--verbose", ...(options.experimental ? ["--experimental"] : [])];
    child = spawn(binaries.workerd, args, { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (d) => (printed += d));
    child.stderr.on("data", (d) => (printed += d));
    exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    let gone;
    exited.then((how) => (gone = how));
    const deadline = Date.now() + 20_000;
    while (!(await connects(port))) {
      if (gone) throw new Error(`workerd exited (${JSON.stringify(gone)}) before serving:\n${printed}`);
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(`workerd did not listen on ${port} within 20 s:\n${printed}`);
      }
      await sleep(25);
    }
  }

  async function stop() {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    // workerd exits at once on SIGTERM; SIGKILL only if it does not within 5 s.
    const kill = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(kill);
  }

  async function request(p, init) {
    try {
      return await fetch(url + p, init);
    } catch (e) {
      throw new Error(`fetching ${p} from workerd failed; workerd printed:\n${printed}`, { cause: e });
    }
  }

  await start();
  return {
    url,
    dir,
    fetch: request,
    async json(p, init) {
      const response = await request(p, init);
      const text = await response.text();
      if (!response.ok) throw new Error(`${p} answered ${response.status}: ${text}\nworkerd printed:\n${printed}`);
      return JSON.parse(text);
    },
    output: () => printed,
    stop,
    async restart() {
      await stop();
      await start();
    },
    /** Stop for good and remove the bundle, the config and the objects' storage. */
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
