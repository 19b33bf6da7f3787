// A stand-in OpenTelemetry collector for the telemetry group: accepts every OTLP/HTTP export (any encoding)
// with 200 and counts exports and bytes per path; GET /stats answers the counts. Its own process, as a
// collector would be.
import { createServer } from "node:http";

/** @type {Record<string, { exports: number, bytes: number }>} */
const stats = {};
const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/stats") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(stats));
    return;
  }
  let bytes = 0;
  req.on("data", (chunk) => (bytes += chunk.length));
  req.on("end", () => {
    const entry = (stats[req.url ?? ""] ??= { exports: 0, bytes: 0 });
    entry.exports += 1;
    entry.bytes += bytes;
    res.writeHead(200, { "content-type": req.headers["content-type"] ?? "application/x-protobuf" }).end();
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (server.address()).port}` })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)).closeAllConnections());
