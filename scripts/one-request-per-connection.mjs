// An HTTP proxy for Chromium's wasm-bindgen-test runs (`scripts/test.sh`): every request it is
// sent for a loopback address goes on to that address over a connection of its own, closed after
// the answer.
//
// Why: wasm-bindgen-test-runner serves the test page with tiny_http, which gives each connection
// a thread of its pool for as long as the connection stays open. Its pool counts idle threads
// only once a woken thread has run again, so when a browser opens five or more connections at
// once (the test page imports six snippet modules in parallel) a connection can be queued with no
// thread ever woken for it. Its request then sits unread (seen with `ss`: the server's socket
// holding 583 bytes) while the other threads wait on idle kept-alive connections, and the page
// stays at "Loading scripts..." until ChromeDriver gives up after 300 s. Any new connection frees
// it. Through this proxy no connection to the runner outlives its one request, so every thread
// is soon free again and nothing queued waits for long.
//
// Prints the port it listens on (on 127.0.0.1) as its first line; runs until killed.

import http from "node:http";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

const server = http.createServer((request, response) => {
  let target;
  try {
    target = new URL(request.url);
  } catch {
    response.writeHead(400).end("a proxy request names an absolute URL");
    return;
  }
  if (target.protocol !== "http:" || !LOOPBACK.has(target.hostname)) {
    response.writeHead(502).end("this proxy forwards only to loopback addresses");
    return;
  }
  const headers = { ...request.headers, connection: "close" };
  delete headers["proxy-connection"];
  const upstream = http.request(
    {
      host: target.hostname.replace(/^\[|\]$/g, ""),
      port: target.port || 80,
      method: request.method,
      path: target.pathname + target.search,
      headers,
      agent: false,
    },
    (answer) => {
      response.writeHead(answer.statusCode, answer.rawHeaders);
      answer.pipe(response);
    },
  );
  upstream.on("error", (error) => {
    if (!response.headersSent) response.writeHead(502);
    response.end(String(error));
  });
  request.pipe(upstream);
});

server.listen(0, "127.0.0.1", () => {
  console.log(server.address().port);
});
