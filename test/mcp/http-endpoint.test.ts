/**
 * `/mcp` at the HTTP level: credentials (401 with WWW-Authenticate), DNS rebinding, malformed requests,
 * sessions that belong to one caller and user, and the stateless mode the SDK client uses without sessions.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UrlElicitationRequiredError } from "@modelcontextprotocol/sdk/types.js";
import { OTHER_CALLER_ID } from "../integration/support/plugins.js";
import { listAll, startMcpWorld, textOf, type McpWorld } from "./support/mcp-world.js";

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
const LIST = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };

interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/** One HTTP request with full control of the headers (fetch would not let us set Host). */
function raw(url: URL, options: { method?: string; headers?: Record<string, string>; body?: string }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? "POST", headers: options.headers ?? {} }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };

/** The JSON-RPC message of a response, whether sent as JSON or as one SSE event. */
function messageOf(response: RawResponse): { result?: unknown; error?: { code: number; message: string } } {
  const data = response.text.startsWith("{") ? response.text : /^data: (.*)$/m.exec(response.text)?.[1];
  return JSON.parse(data ?? "null") as { result?: unknown; error?: { code: number; message: string } };
}

describe("/mcp over HTTP", () => {
  let world: McpWorld;

  beforeAll(async () => {
    world = await startMcpWorld();
  });
  afterAll(async () => {
    await world?.close();
  });

  describe("authentication, as for the HTTP API", () => {
    it("answers a request without credentials 401 with a WWW-Authenticate challenge", async () => {
      const response = await raw(world.mcpUrl, { headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
      expect(response.status).toBe(401);
      expect(response.headers["www-authenticate"]).toBe('Bearer realm="toolpact"');
      expect(messageOf(response).error?.message).toContain("Authorization: Bearer <plugin key> and X-Toolpact-Actor: <actor token>");
    });

    it("answers a wrong plugin key or a forged actor token 401 with invalid_token", async () => {
      const good = await world.headers();
      for (const headers of [
        { ...good, authorization: "Bearer not-a-key" },
        { ...good, "x-toolpact-actor": `${good["x-toolpact-actor"]!.slice(0, -4)}AAAA` },
      ]) {
        const response = await raw(world.mcpUrl, { headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(INITIALIZE) });
        expect(response.status).toBe(401);
        expect(response.headers["www-authenticate"]).toMatch(/^Bearer realm="toolpact", error="invalid_token", error_description="[^"]+"$/);
      }
    });

    it("refuses an actor token of another tenant than the plugin key's", async () => {
      const headers = await world.headers(undefined, { tid: "t2" });
      const response = await raw(world.mcpUrl, { headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(INITIALIZE) });
      expect(response.status).toBe(401);
    });
  });

  describe("DNS rebinding protection", () => {
    it("refuses a Host or an Origin that is not this server (403) and accepts loopback names", async () => {
      const headers = { ...MCP_HEADERS, ...(await world.headers()) };
      const body = JSON.stringify(INITIALIZE);
      const evilHost = await raw(world.mcpUrl, { headers: { ...headers, host: "evil.example.com" }, body });
      expect(evilHost.status).toBe(403);
      expect(messageOf(evilHost).error?.message).toContain('Host "evil.example.com" is not this server');
      const evilOrigin = await raw(world.mcpUrl, { headers: { ...headers, origin: "http://evil.example.com" }, body });
      expect(evilOrigin.status).toBe(403);
      for (const host of [`localhost:${world.mcpUrl.port}`, `127.0.0.1:${world.mcpUrl.port}`]) {
        const accepted = await raw(world.mcpUrl, { headers: { ...headers, host, origin: `http://${host}` }, body });
        expect(accepted.status).toBe(200);
      }
    });
  });

  describe("malformed requests are protocol errors", () => {
    it("answers a body that is not JSON with a parse error (400, -32700)", async () => {
      const response = await raw(world.mcpUrl, { headers: { ...MCP_HEADERS, ...(await world.headers()) }, body: "{not json" });
      expect(response.status).toBe(400);
      expect(messageOf(response).error?.code).toBe(-32700);
    });

    it("answers a body over the size limit 413 without reading it", async () => {
      const big = JSON.stringify({ ...LIST, params: { pad: "x".repeat(1024 * 1024 + 10) } });
      const response = await raw(world.mcpUrl, { headers: { ...MCP_HEADERS, ...(await world.headers()) }, body: big });
      expect(response.status).toBe(413);
    });

    it("answers a tools/call without a name with Invalid params (-32602)", async () => {
      const headers = { ...MCP_HEADERS, ...(await world.headers()) };
      const response = await raw(world.mcpUrl, { headers, body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: {} }) });
      expect(messageOf(response).error?.code).toBe(-32602);
    });

    it("answers a tools/list cursor it did not make with Invalid params (-32602)", async () => {
      const headers = { ...MCP_HEADERS, ...(await world.headers()) };
      for (const cursor of ["bm90LWEtY3Vyc29y", 5]) {
        const body = JSON.stringify({ ...LIST, params: { cursor } });
        expect(messageOf(await raw(world.mcpUrl, { headers, body })).error?.code).toBe(-32602);
      }
    });

    it("refuses GET and DELETE without a session (405) and other methods", async () => {
      const headers = await world.headers();
      expect((await raw(world.mcpUrl, { method: "GET", headers: { ...headers, accept: "text/event-stream" } })).status).toBe(405);
      expect((await raw(world.mcpUrl, { method: "DELETE", headers })).status).toBe(405);
      expect((await raw(world.mcpUrl, { method: "PUT", headers, body: "{}" })).status).toBe(405);
    });
  });

  describe("sessions belong to the caller and user that opened them", () => {
    it("answers another user's or another caller's use of a session id 404, as if it did not exist", async () => {
      const client = await world.connect();
      const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
      expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
      const asSession = (headers: Record<string, string>) =>
        raw(world.mcpUrl, { headers: { ...MCP_HEADERS, ...headers, "mcp-session-id": sessionId }, body: JSON.stringify(LIST) });

      expect((await asSession(await world.headers(undefined, { sub: "user-2" }))).status).toBe(404);
      expect((await asSession(await world.headers(OTHER_CALLER_ID))).status).toBe(404);
      // The owner with a freshly issued actor token keeps using it.
      const own = await asSession(await world.headers());
      expect(own.status).toBe(200);
      expect(messageOf(own).result).toMatchObject({ tools: expect.any(Array) });
    });

    it("ends a session on DELETE", async () => {
      const client = await world.connect();
      const transport = client.transport as StreamableHTTPClientTransport;
      const sessionId = transport.sessionId!;
      await transport.terminateSession();
      const after = await raw(world.mcpUrl, {
        headers: { ...MCP_HEADERS, ...(await world.headers()), "mcp-session-id": sessionId },
        body: JSON.stringify(LIST),
      });
      expect(after.status).toBe(404);
    });
  });
});

describe("/mcp without sessions", () => {
  let world: McpWorld;

  beforeAll(async () => {
    world = await startMcpWorld({ mcp: { sessions: false } });
  });
  afterAll(async () => {
    await world?.close();
  });

  it("answers every request on its own: no session id, and the SDK client lists and calls", async () => {
    const client = await world.connect();
    expect((client.transport as StreamableHTTPClientTransport).sessionId).toBeUndefined();
    expect((await listAll(client)).length).toBe(10);
    const result = await client.callTool({ name: "com-test-notes_list_notes", arguments: {} });
    expect(result.structuredContent).toMatchObject({ notes: [{ id: "note-1" }] });
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  });

  it("sends a confirmed call's client to the page with the URL-elicitation-required error, even one that declares URL elicitation", async () => {
    // Without a session nothing can reach the client during the call: it cannot be asked, only told.
    const client = await world.connect({ onUrlElicitation: () => ({ action: "accept" }) });
    const before = world.stack.probe.invocations.get("create-note") ?? 0;
    const error = await client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Stateless" } }).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(UrlElicitationRequiredError);
    const [elicitation] = (error as UrlElicitationRequiredError).elicitations;
    expect(elicitation?.url).toBe(`${world.stack.url}/confirm/${elicitation?.elicitationId}`);
    expect(world.stack.probe.invocations.get("create-note") ?? 0).toBe(before);
  });
});

describe("/mcp when the server shuts down", () => {
  it("answers a call waiting for the user that nothing ran, then ends the sessions, so the drain does not wait", async () => {
    const world = await startMcpWorld({ drainTimeoutMs: 10_000 });
    try {
      const waiting: string[] = [];
      const client = await world.connect({ onUrlElicitation: (params) => (waiting.push(params.elicitationId), { action: "accept" }) });
      const calling = client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Interrupted" } });
      await expect.poll(() => waiting.length).toBe(1);
      const started = performance.now();
      await world.stack.close();
      expect(performance.now() - started).toBeLessThan(5_000);
      const result = await calling;
      expect(result).toMatchObject({ isError: true, _meta: { "toolpact/code": "CONFIRMATION_DENIED" } });
      expect(textOf(result)).toContain("the server is shutting down: the confirmation request for com.test.notes:create-note@1 was withdrawn; nothing ran");
      expect(world.stack.probe.invocations.get("create-note") ?? 0).toBe(0);
    } finally {
      await world.close().catch(() => {});
    }
  });
});
