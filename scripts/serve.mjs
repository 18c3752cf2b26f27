// A static file server (the demo page, the end-to-end tests, the benchmarks): `routes` maps a URL
// prefix to a directory.
// Serves .wasm as application/wasm (streaming compilation needs it) and nothing outside a root.
import http from "node:http";
import { readFile } from "node:fs/promises";
import path from "node:path";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json",
  ".css": "text/css",
  ".png": "image/png",
  ".svg": "image/svg+xml",
};

/**
 * Start serving on `port` (0 = any free one); resolves to `{ origin, close() }`. With
 * `crossOriginIsolated`, every response carries COOP/COEP headers, so pages are cross-origin
 * isolated and `performance.now()` has its fine resolution (5 µs in Chromium, not 100 µs): the
 * benchmarks time single IndexedDB puts of a few hundred µs.
 */
export function serve(routes, port = 0, { crossOriginIsolated = false } = {}) {
  const isolation = crossOriginIsolated
    ? { "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp" }
    : {};
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, "http://localhost");
    const prefix = Object.keys(routes)
      .sort((a, b) => b.length - a.length)
      .find((p) => url.pathname.startsWith(p));
    if (prefix === undefined) return void res.writeHead(404).end();
    const root = path.resolve(routes[prefix]);
    let file = path.resolve(root, "." + decodeURIComponent(url.pathname.slice(prefix.length - 1)));
    if (!file.startsWith(root)) return void res.writeHead(403).end();
    if (url.pathname.endsWith("/")) file = path.join(file, "index.html");
    try {
      const body = await readFile(file);
      res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream", "cache-control": "no-store", ...isolation });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => {
    server.listen(port, "127.0.0.1", () => {
      const { port } = server.address();
      // close() also ends idle keep-alive connections, which would otherwise hold it open.
      const close = () =>
        new Promise((r) => {
          server.close(r);
          server.closeAllConnections();
        });
      resolve({ origin: `http://127.0.0.1:${port}`, close });
    });
  });
}

// `node scripts/serve.mjs [port]`: serve the repository, for the demo page at /www/.
if (import.meta.url === `file://${process.argv[1]}`) {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
  const { origin } = await serve({ "/": root }, Number(process.argv[2] ?? process.env.PORT ?? 8080));
  console.log(`ttlkv demo: open ${origin}/www/ (Ctrl-C stops the server)`);
}
