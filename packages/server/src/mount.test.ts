/**
 * The handlers an app mounts, in the real frameworks (Hono on @hono/node-server, Express 5, Fastify 5),
 * over real HTTP: a confirmed write and a read through @toolpact/client, an MCP client at /mcp, and the
 * standalone server's refusals (body size, content types, cross-site), compared request by request.
 */
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { confirmPreview, createHttpTransport } from "@toolpact/client";
import { createTestHost, type TestHost } from "@toolpact/runtime/testing";
import { createToolpactServer, type ToolpactServer } from "./http-server.js";
import { createFetchHandler, createNodeHandler, type ToolpactFetchHandler, type ToolpactNodeHandler } from "./mount.js";

const NOTES = "com.example.notes";
const MAX_BODY_BYTES = 4096;

const manifest = {
  id: NOTES,
  version: "1.0.0",
  permissions: ["tools:provide"],
  tools: [
    {
      name: "create-record",
      effect: "write",
      inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"], additionalProperties: false },
    },
    { name: "count-records", effect: "read", inputSchema: { type: "object", additionalProperties: false } },
  ],
};

const records: string[] = [];
const plugins = [
  {
    manifest,
    activate: (sdk: import("@toolpact/runtime").PluginSdk) => {
      sdk.tools.provide<{ title: string }, { id: string }>("create-record", {
        execute: (input) => ({ id: `rec-${records.push(input.title)}` }),
      });
      sdk.tools.provide("count-records", { execute: () => ({ count: records.length }) });
    },
  },
];

interface Mounted {
  /** Where toolpact's routes are, e.g. `http://127.0.0.1:1234/toolpact`. */
  readonly base: string;
  readonly host: TestHost;
  close(): Promise<void>;
}

/** A mount at `${origin}/toolpact`; closing stops the handler, then the app's server, then the test host. */
function mounted(origin: string, host: TestHost, handler: { close(): Promise<void> }, closeApp: () => Promise<void>): Mounted {
  return {
    base: `${origin}/toolpact`,
    host,
    close: async () => {
      await handler.close();
      await closeApp();
      await host.close();
    },
  };
}

function listening(server: Server): Promise<string> {
  return new Promise((resolve) => {
    const address = (): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (server.listening) resolve(address());
    else server.once("listening", () => resolve(address()));
  });
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

async function mountHono(): Promise<Mounted> {
  const host = await createTestHost({ plugins, confirmation: "platform" });
  const toolpact: ToolpactFetchHandler = createFetchHandler({
    runtime: host.runtime,
    adminKey: undefined,
    basePath: "/toolpact",
    maxBodyBytes: MAX_BODY_BYTES,
  });
  const app = new Hono();
  app.get("/", (c) => c.text("the app's own page"));
  app.all("/toolpact/*", (c) => toolpact(c.req.raw));
  // By default @hono/node-server replaces the global Response for the whole process; keep this file's
  // other frameworks on Node's own.
  const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0, overrideGlobalObjects: false }) as Server;
  const origin = await listening(server);
  return mounted(origin, host, toolpact, () => closeServer(server));
}

async function mountExpress(): Promise<Mounted> {
  const host = await createTestHost({ plugins, confirmation: "platform" });
  const toolpact: ToolpactNodeHandler = createNodeHandler({ runtime: host.runtime, adminKey: undefined, basePath: "/toolpact", maxBodyBytes: MAX_BODY_BYTES });
  const app = express();
  app.use(toolpact);
  app.get("/", (_req, res) => {
    res.send("the app's own page");
  });
  const server = app.listen(0, "127.0.0.1");
  const origin = await listening(server);
  return mounted(origin, host, toolpact, () => closeServer(server));
}

/** Express's own mount path (`app.use("/toolpact", ...)`): Express removes the prefix, `publicUrl` names it. */
async function mountExpressAtPath(): Promise<Mounted> {
  const host = await createTestHost({ plugins, confirmation: "platform" });
  const app = express();
  app.get("/", (_req, res) => {
    res.send("the app's own page");
  });
  const server = app.listen(0, "127.0.0.1");
  const origin = await listening(server);
  const toolpact = createNodeHandler({ runtime: host.runtime, adminKey: undefined, maxBodyBytes: MAX_BODY_BYTES, publicUrl: `${origin}/toolpact` });
  app.use("/toolpact", toolpact);
  return mounted(origin, host, toolpact, () => closeServer(server));
}

async function mountFastify(): Promise<Mounted> {
  const host = await createTestHost({ plugins, confirmation: "platform" });
  const toolpact: ToolpactNodeHandler = createNodeHandler({ runtime: host.runtime, adminKey: undefined, basePath: "/toolpact", maxBodyBytes: MAX_BODY_BYTES });
  const app = Fastify();
  app.get("/", async () => "the app's own page");
  await app.register(async (scope) => {
    // toolpact reads its request bodies itself: leave them unread in this scope.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_request, _payload, done) => done(null));
    scope.all("/toolpact/*", (request, reply) => {
      reply.hijack();
      toolpact(request.raw, reply.raw);
    });
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const origin = await listening(app.server);
  return mounted(origin, host, toolpact, async () => {
    app.server.closeAllConnections();
    await app.close();
  });
}

/** One request of the comparison, and what it shows. */
interface Probe {
  readonly name: string;
  readonly path: string;
  readonly init?: RequestInit;
  /** Sent with a plugin key and an actor token of the server's test host. */
  readonly authenticated?: boolean;
}

const CONFIRMATION_ID = "019b0000-0000-7000-8000-000000000000";
const json = { "content-type": "application/json" };
const mcpJson = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const PROBES: readonly Probe[] = [
  { name: "health", path: "/healthz" },
  { name: "health by HEAD", path: "/healthz", init: { method: "HEAD" } },
  { name: "health by POST", path: "/healthz", init: { method: "POST" } },
  { name: "readiness", path: "/readyz" },
  {
    name: "a body over the limit",
    path: "/trpc/tools.preview",
    init: { method: "POST", headers: json, body: JSON.stringify({ input: "x".repeat(MAX_BODY_BYTES) }) },
  },
  {
    name: "a streamed body over the limit",
    path: "/trpc/tools.preview",
    authenticated: true,
    init: {
      method: "POST",
      headers: json,
      body: new Blob([JSON.stringify({ input: "x".repeat(MAX_BODY_BYTES * 4) })]).stream(),
      duplex: "half",
    } as RequestInit,
  },
  { name: "a mutation sent as text", path: "/trpc/tools.preview", init: { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" } },
  { name: "a batch", path: "/trpc/tools.execute,tools.execute?batch=1", init: { method: "POST", headers: json, body: "{}" } },
  { name: "no credentials", path: "/trpc/tools.list" },
  { name: "an unknown procedure", path: "/trpc/tools.previw", init: { method: "POST", headers: json, body: "{}" } },
  {
    name: "MCP as text",
    path: "/mcp",
    authenticated: true,
    init: { method: "POST", headers: { "content-type": "text/plain", accept: "application/json, text/event-stream" }, body: "{}" },
  },
  { name: "MCP from another site", path: "/mcp", init: { method: "POST", headers: { ...mcpJson, origin: "https://evil.example" }, body: "{}" } },
  {
    name: "sign-in posted by another site",
    path: "/confirm/session",
    init: { method: "POST", headers: { "sec-fetch-site": "cross-site", "content-type": "application/x-www-form-urlencoded" }, body: "token=x" },
  },
  { name: "the page without a session", path: `/confirm/${CONFIRMATION_ID}` },
  { name: "a decision as JSON", path: `/confirm/${CONFIRMATION_ID}/approve`, init: { method: "POST", headers: json, body: "{}" } },
  { name: "outside the routes", path: "/nothing-here" },
];

interface Answer {
  readonly status: number;
  readonly contentType: string | null;
  readonly toolpactCode: unknown;
}

async function probe(base: string, host: TestHost, { path, init, authenticated }: Probe): Promise<Answer> {
  // A streamed body can be sent once: make it anew for each server.
  const body = init?.body instanceof ReadableStream ? new Blob([JSON.stringify({ input: "x".repeat(MAX_BODY_BYTES * 4) })]).stream() : init?.body;
  const headers = new Headers(init?.headers);
  if (authenticated) {
    headers.set("authorization", `Bearer ${await host.pluginKey()}`);
    headers.set("x-toolpact-actor", await host.actorToken());
  }
  const response = await fetch(`${base}${path}`, { ...init, headers, body } as RequestInit);
  const text = init?.method === "HEAD" ? "" : await response.text();
  let toolpactCode: unknown;
  try {
    toolpactCode = (JSON.parse(text) as { error?: { data?: { toolpactCode?: unknown } } }).error?.data?.toolpactCode;
  } catch {
    toolpactCode = undefined;
  }
  // Only the media type: frameworks may respell the parameters (`;charset=UTF-8`, `; charset=UTF-8`).
  const contentType = response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase() ?? null;
  return { status: response.status, contentType, toolpactCode };
}

let standalone: { server: ToolpactServer; host: TestHost; url: string };
const expected = new Map<string, Answer>();

beforeAll(async () => {
  const host = await createTestHost({ plugins, confirmation: "platform" });
  const server = createToolpactServer({ runtime: host.runtime, adminKey: undefined, port: 0, maxBodyBytes: MAX_BODY_BYTES });
  standalone = { server, host, url: await server.listen() };
  for (const each of PROBES) expected.set(each.name, await probe(standalone.url, host, each));
});

afterAll(async () => {
  await standalone.server.close();
  await standalone.host.close();
});

describe("the standalone server's answers the mounts are compared with", () => {
  it("refuse what they should: 413, 415, cross-site 403, 405, 401", () => {
    const status = (name: string) => expected.get(name)?.status;
    expect(status("health")).toBe(200);
    expect(status("health by POST")).toBe(405);
    expect(status("a body over the limit")).toBe(413);
    expect(status("a streamed body over the limit")).toBe(413);
    expect(status("a mutation sent as text")).toBe(415);
    expect(status("a batch")).toBe(400);
    expect(status("no credentials")).toBe(401);
    expect(status("MCP as text")).toBe(415);
    expect(status("MCP from another site")).toBe(403);
    expect(status("sign-in posted by another site")).toBe(403);
    expect(status("the page without a session")).toBe(401);
    expect(status("outside the routes")).toBe(404);
  });
});

describe.each([
  ["Hono (Fetch API handler on @hono/node-server)", mountHono],
  ["Express 5 (Node handler)", mountExpress],
  ["Express 5 at a mount path (Node handler)", mountExpressAtPath],
  ["Fastify 5 (Node handler)", mountFastify],
])("mounted in %s", (_name, mount) => {
  let mounted: Mounted;
  beforeAll(async () => {
    mounted = await mount();
  });
  afterAll(async () => {
    await mounted.close();
  });

  it("runs a confirmed write and a read through @toolpact/client, the user approving in platform mode", async () => {
    const { base, host } = mounted;
    const transport = createHttpTransport({ url: base, pluginKey: await host.pluginKey(), actorToken: await host.actorToken() });
    const before = records.length;
    const preview = await transport.preview({ providerId: NOTES, tool: "create-record" }, { title: "mounted" });
    expect(preview.confirmation).toMatchObject({ required: true, mode: "platform" });
    // The long poll waits over HTTP while the user decides.
    const waiting = confirmPreview(transport, preview);
    await host.approve(preview);
    const token = await waiting;
    const created = await transport.execute({ providerId: NOTES, tool: "create-record" }, { title: "mounted" }, { confirmationToken: token! });
    expect(created.result).toEqual({ id: `rec-${before + 1}` });
    const counted = await transport.execute({ providerId: NOTES, tool: "count-records" }, {});
    expect(counted.result).toEqual({ count: before + 1 });
  });

  it("serves the confirmation page under the mount, but on the app's own origin refuses approvals (no confirmationOrigin)", async () => {
    const { base, host } = mounted;
    const transport = createHttpTransport({ url: base, pluginKey: await host.pluginKey(), actorToken: await host.actorToken() });
    const preview = await transport.preview({ providerId: NOTES, tool: "create-record" }, { title: "on the page" });
    if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected a platform-mode preview");
    const { requestId } = preview.confirmation;

    const signIn = await fetch(`${base}/confirm/session?token=${encodeURIComponent(await host.presenceToken())}&next=${requestId}`);
    expect(signIn.status).toBe(200);
    const setCookie = signIn.headers.get("set-cookie") ?? "";
    // The browser sends the session back only below the mount's confirmation page.
    expect(setCookie).toMatch(/; Path=\/toolpact\/confirm(;|$)/i);
    const cookie = setCookie.split(";")[0]!;
    const page = await fetch(`${base}/confirm/${requestId}`, { headers: { cookie } });
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain("on the page");
    // No buttons, no CSRF token for the app's scripts to read: the page says why instead.
    expect(html).not.toContain('name="csrf"');
    expect(html).toContain('id="decide-elsewhere"');
    const decided = await fetch(`${base}/confirm/${requestId}/approve`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin: new URL(base).origin, "sec-fetch-site": "same-origin" },
      body: new URLSearchParams({ csrf: "anything" }).toString(),
      redirect: "manual",
    });
    expect(decided.status).toBe(403);
    expect(await decided.text()).toContain("confirmationOrigin");
    expect(await (await fetch(`${base}/confirm/${requestId}`, { headers: { cookie } })).text()).toContain('id="decide-elsewhere"'); // still pending
  });

  it("serves MCP at /mcp: an MCP client lists and calls tools with a plugin key and actor token", async () => {
    const { base, host } = mounted;
    const client = new Client({ name: "mount-test", version: "1.0.0" });
    const headers = { authorization: `Bearer ${await host.pluginKey()}`, "x-toolpact-actor": await host.actorToken() };
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }));
    try {
      const listed = await client.listTools();
      const count = listed.tools.find((tool) => tool.annotations?.readOnlyHint === true);
      expect(count).toBeDefined();
      const called = await client.callTool({ name: count!.name, arguments: {} });
      expect(called.isError).not.toBe(true);
      expect(called.structuredContent).toEqual({ count: records.length });
    } finally {
      await client.close();
    }
  });

  it("answers every probe as the standalone server does", async () => {
    for (const each of PROBES) {
      const answer = await probe(mounted.base, mounted.host, each);
      // Outside its routes a Node handler hands the request back to the app (Express answers its own 404).
      if (each.name === "outside the routes") expect(answer.status).toBe(404);
      else expect(answer, each.name).toEqual(expected.get(each.name));
    }
  });

  it("leaves the app's own routes to the app", async () => {
    const response = await fetch(new URL("/", mounted.base));
    expect(await response.text()).toBe("the app's own page");
  });
});
