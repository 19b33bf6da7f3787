/**
 * The Fetch handler's bridge to the Node routes, without a framework: bodies stream in whole, answers
 * stream out, and a client that goes away mid long poll releases it (the handler's close then drains).
 */
import { describe, expect, it } from "vitest";
import { createTestHost } from "@toolpact/runtime/testing";
import { serveFetchRequest } from "./fetch-bridge.js";
import { createFetchHandler } from "./mount.js";

describe("serveFetchRequest", () => {
  it("streams a request body in and the answer out, chunk by chunk", async () => {
    const chunks = ["a".repeat(40_000), "b".repeat(40_000), "c"];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
        controller.close();
      },
    });
    const response = await serveFetchRequest(new Request("http://localhost/echo", { method: "POST", body, duplex: "half" } as RequestInit), (req, res) => {
      let length = 0;
      req.on("data", (chunk: Buffer) => {
        length += chunk.byteLength;
      });
      req.on("end", () => {
        res.setHeader("set-cookie", ["a=1", "b=2"]);
        res.writeHead(201, { "content-type": "text/plain" });
        res.write(`read ${length}`);
        res.end(" bytes");
      });
    });
    expect(response.status).toBe(201);
    expect(response.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(await response.text()).toBe(`read ${chunks.join("").length} bytes`);
  });

  it("answers HEAD and 204 without a body", async () => {
    for (const [method, status] of [["HEAD", 200], ["GET", 204]] as const) {
      const response = await serveFetchRequest(new Request("http://localhost/", { method }), (_req, res) => {
        res.writeHead(status);
        res.end(method === "HEAD" ? "ignored" : undefined);
      });
      expect(response.status).toBe(status);
      expect(response.body).toBeNull();
    }
  });

  it("tells the listener when the client stops reading", async () => {
    let closed!: () => void;
    const sawClose = new Promise<void>((resolve) => {
      closed = resolve;
    });
    const response = await serveFetchRequest(new Request("http://localhost/stream"), (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
      res.once("close", closed);
    });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: first\n\n");
    await reader.cancel();
    await sawClose;
  });
});

describe("createFetchHandler", () => {
  it("ends a long poll whose client aborted", async () => {
    const host = await createTestHost({
      plugins: [
        {
          manifest: { id: "com.example.w", version: "1.0.0", permissions: ["tools:provide"], tools: [{ name: "w", effect: "write", inputSchema: { type: "object" } }] },
          activate: (sdk) => sdk.tools.provide("w", { execute: () => ({}) }),
        },
      ],
      confirmation: "platform",
    });
    const toolpact = createFetchHandler({ runtime: host.runtime, adminKey: undefined });
    try {
      const preview = await host.transport().preview({ providerId: "com.example.w", tool: "w" }, {});
      if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected a platform-mode preview");
      const headers = { authorization: `Bearer ${await host.pluginKey()}`, "x-toolpact-actor": await host.actorToken() };
      const input = encodeURIComponent(JSON.stringify({ requestId: preview.confirmation.requestId }));
      const client = new AbortController();
      const polling = toolpact(new Request(`http://localhost/trpc/confirmations.wait?input=${input}`, { headers, signal: client.signal }));
      await inFlight(host.runtime, 1);
      client.abort();
      // Without the abort reaching the runtime the wait would hold its slot for its whole round (~25 s).
      await inFlight(host.runtime, 0);
      await (await polling).body?.cancel().catch(() => {});
    } finally {
      await toolpact.close();
      await host.close();
    }
  });
});

/** Resolves once the runtime has `count` calls in flight; fails after 5 s (a long poll round is 25 s). */
async function inFlight(runtime: { readonly metrics: { readonly inFlight: number } }, count: number): Promise<void> {
  for (let waited = 0; runtime.metrics.inFlight !== count; waited += 10) {
    if (waited > 5000) throw new Error(`the runtime still has ${runtime.metrics.inFlight} calls in flight, expected ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
