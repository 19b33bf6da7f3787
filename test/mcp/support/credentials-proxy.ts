/**
 * A local HTTP proxy that adds a caller's credentials to every request and streams the answer back: for MCP
 * clients that send none (the conformance runner). `Host` and `Origin` pass through unchanged, so the
 * server still sees where a request claims to come from. `path` may rewrite (or record) each request's path.
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A running proxy. */
export interface CredentialsProxy {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  close(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1 that forwards to `target` with `headers` added, each path through `path`. */
export async function startCredentialsProxy(
  target: string,
  headers: () => Promise<Record<string, string>>,
  path: (requested: string) => string = (requested) => requested,
): Promise<CredentialsProxy> {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    void headers().then((added) => {
      const forwarded = request(
        { host: upstream.hostname, port: upstream.port, path: path(req.url ?? "/"), method: req.method, headers: { ...req.headers, ...added } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forwarded.on("error", () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      res.on("close", () => forwarded.destroy());
      req.pipe(forwarded);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
