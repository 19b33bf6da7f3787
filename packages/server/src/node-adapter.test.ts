import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { serveNodeRequest } from "./node-adapter.js";

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

/** A node:http server on loopback whose every request goes to `handle` through the adapter. */
async function serve(handle: (request: Request) => Promise<Response> | Response): Promise<string> {
  server = createServer((req, res) => serveNodeRequest(req, res, handle));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("the Node adapter around a Fetch handler", () => {
  it("streams the request body in and an event stream out, chunk by chunk", async () => {
    let release!: () => void;
    const second = new Promise<void>((resolve) => {
      release = resolve;
    });
    const url = await serve(async (request) => {
      const text = await request.text();
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode(`data: got ${text.length} bytes\n\n`));
          await second;
          controller.enqueue(new TextEncoder().encode("data: second\n\n"));
          controller.close();
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    const sent = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(1000).fill(0x61));
        controller.enqueue(new Uint8Array(500).fill(0x62));
        controller.close();
      },
    });
    const response = await fetch(`${url}/stream`, { method: "POST", body: sent, duplex: "half" } as RequestInit);
    const reader = response.body!.getReader();
    // The first event arrives while the handler still holds the second back.
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: got 1500 bytes\n\n");
    release();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: second\n\n");
    expect((await reader.read()).done).toBe(true);
  });

  it("sends a whole body with its length, and HEAD and 204 without one; Set-Cookie values stay apart", async () => {
    const url = await serve((request) => {
      if (request.method === "HEAD") return new Response("ignored", { status: 200 });
      if (new URL(request.url).pathname === "/empty") return new Response(null, { status: 204 });
      const headers = new Headers({ "content-type": "text/plain" });
      headers.append("set-cookie", "a=1; Path=/");
      headers.append("set-cookie", "b=2; Path=/");
      return new Response("hello", { headers });
    });
    const whole = await fetch(`${url}/whole`);
    expect(whole.headers.get("content-length")).toBe("5");
    expect(whole.headers.getSetCookie()).toEqual(["a=1; Path=/", "b=2; Path=/"]);
    expect(await whole.text()).toBe("hello");
    const head = await fetch(`${url}/whole`, { method: "HEAD" });
    expect(await head.text()).toBe("");
    expect((await fetch(`${url}/empty`)).status).toBe(204);
  });

  it("aborts the request's signal and cancels the answer's body when the client goes away", async () => {
    let aborted!: () => void;
    const signalled = new Promise<void>((resolve) => {
      aborted = resolve;
    });
    let cancelled!: () => void;
    const bodyCancelled = new Promise<void>((resolve) => {
      cancelled = resolve;
    });
    const url = await serve((request) => {
      request.signal.addEventListener("abort", () => aborted());
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(": open\n\n"));
        },
        cancel: () => cancelled(),
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${url}/hold`, (res) => {
        res.once("data", () => {
          req.destroy();
          resolve();
        });
      });
      req.once("error", reject);
      req.end();
    });
    await Promise.all([signalled, bodyCancelled]);
  });

  it("answers 400 to a Host that makes no URL, without calling the handler", async () => {
    let called = false;
    const url = await serve(() => {
      called = true;
      return new Response("no");
    });
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(`${url}/x`, { headers: { host: "bad host:x" } }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.once("end", () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.once("error", reject);
      req.end();
    });
    expect(answer.status).toBe(400);
    expect(answer.text).toContain("Host header");
    expect(called).toBe(false);
  });
});
