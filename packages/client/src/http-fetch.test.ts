import { createServer, type IncomingHttpHeaders } from "node:http";
import { isToolpactError } from "@toolpact/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpFetch as nodeFetch } from "./http-fetch-node.js";
import { httpFetch as webFetch } from "./http-fetch-web.js";

/** What a request looked like on arrival. */
interface Seen {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

const seen: Seen[] = [];
const server = createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
  req.on("end", () => {
    seen.push({ method: req.method, url: req.url, headers: req.headers, body });
    const status = req.url?.includes("fail") ? 500 : 200;
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ result: { data: { echoed: body } } }));
  });
});
let base = "";
let closedPort = 0;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  closedPort = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe.each([
  ["undici pool (Node)", nodeFetch],
  ["global fetch (browsers)", webFetch],
])("the transport's HTTP client: %s", (_name, fetch) => {
  it("sends what tRPC's httpLink gives it and answers status and JSON", async () => {
    seen.length = 0;
    const headers = { "content-type": "application/json", authorization: "Bearer k", "x-toolpact-actor": "a" };
    const response = await fetch(`${base}/trpc/tools.execute`, { method: "POST", headers, body: '{"input":1}', signal: new AbortController().signal });
    expect(response.ok).toBe(true);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ result: { data: { echoed: '{"input":1}' } } });
    const failed = await fetch(`${base}/trpc/fail?input=%7B%7D`, { method: "GET", headers: { authorization: "Bearer k" } });
    expect([failed.ok, failed.status]).toEqual([false, 500]);
    expect(seen.map(({ method, url, body }) => ({ method, url, body }))).toEqual([
      { method: "POST", url: "/trpc/tools.execute", body: '{"input":1}' },
      { method: "GET", url: "/trpc/fail?input=%7B%7D", body: "" },
    ]);
    expect(seen[0]!.headers).toMatchObject(headers);
  });

  it("rejects with REQUEST_NOT_SENT when nothing listens", async () => {
    const error = await fetch(`http://127.0.0.1:${closedPort}/trpc/tools.preview`, { method: "POST", body: "{}" }).catch((e: unknown) => e);
    expect(isToolpactError(error) && error.code).toBe("REQUEST_NOT_SENT");
    expect((error as Error).message).toContain(`could not reach the toolpact server at http://127.0.0.1:${closedPort} (connect ECONNREFUSED`);
  });

  it("an aborted request rejects as an abort, never as REQUEST_NOT_SENT", async () => {
    const controller = new AbortController();
    controller.abort(new Error("caller left"));
    const error = await fetch(`${base}/trpc/tools.preview`, { method: "POST", body: "{}", signal: controller.signal }).catch((e: unknown) => e);
    expect(isToolpactError(error)).toBe(false);
  });
});
