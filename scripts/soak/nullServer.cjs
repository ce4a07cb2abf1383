// The soak's control: an HTTP server that does nothing (a small JSON answer, no Next.js, no index),
// asked by a few clients alongside the real ones. Its latency is what the machine, the load and the
// clients' own event loop cost by themselves; whatever the dashboard's latency adds is the server's.
// Prints its port.
const http = require("node:http");

const server = http.createServer((request, response) => {
  const body = JSON.stringify({ ok: true, path: request.url });
  response.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  response.end(body);
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`));
