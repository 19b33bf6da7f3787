// The floor: a bare node:http server that reads a JSON body, does the same lookup and answers JSON.
import { createServer } from "node:http";
import { lookupItem } from "../../lib/work.mjs";

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    let input;
    try {
      input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      res.writeHead(400).end();
      return;
    }
    const body = JSON.stringify(lookupItem(String(input?.id)));
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (server.address()).port}` })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)).closeAllConnections());
