/**
 * `/mcp` at 2026-07-28 with real clients: the v2 SDK `Client` pinned to the revision lists and calls with no
 * initialize and no session, and gets a confirmed call approved through `input_required` (one URL input
 * request to toolpact's page, retried with the `requestState`); the same `Client` at its default
 * (2025-11-25) still goes the session way; raw requests show what no client would send.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/client";
import { listAll, startMcpWorld, textOf, type McpWorld } from "../mcp/support/mcp-world.js";
import { connectHttp, rawModern, requestIdOf, type UrlInput } from "./support/modern-clients.js";

const CREATE = "com-test-notes_create_note";

describe("/mcp at 2026-07-28", () => {
  let world: McpWorld;
  const clients: Client[] = [];

  beforeAll(async () => {
    world = await startMcpWorld({ mcp: { waitRoundMs: 2_000 } });
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await world?.close();
  });

  const created = () => world.stack.probe.invocations.get("create-note") ?? 0;
  const connect = async (options: Parameters<typeof connectHttp>[1] = {}) => {
    const client = await connectHttp(world, options);
    clients.push(client);
    return client;
  };
  /** Plays the user: opens the page (here: decides through it), then tells the client it is done. */
  const userWho =
    (decision: "approve" | "deny", seen: UrlInput[] = []) =>
    async (input: UrlInput) => {
      seen.push(input);
      await world.decide(requestIdOf(input.url), decision);
      return { action: "accept" as const };
    };

  describe("the protocol", () => {
    it("a pinned v2 Client lists and calls without initialize or a session", async () => {
      const client = await connect();
      expect(client.getProtocolEra()).toBe("modern");
      const tools = await listAll(client as never);
      expect(tools.map((tool) => tool.name)).toContain("com-test-notes_list_notes");
      const result = await client.callTool({ name: "com-test-notes_list_notes", arguments: {} });
      expect(result.isError).toBeFalsy();
    });

    it("the v2 Client at its default negotiates 2025-11-25 on the same endpoint", async () => {
      const client = await connect({ pin: false });
      expect(client.getProtocolEra()).toBe("legacy");
      const result = await client.callTool({ name: "com-test-notes_list_notes", arguments: {} });
      expect(result.isError).toBeFalsy();
    });

    it("server/discover names the revision and the tools capability; tools/list is never cached", async () => {
      const discover = await rawModern(world, "server/discover", {});
      expect(discover.result).toMatchObject({ supportedVersions: ["2026-07-28"], capabilities: { tools: { listChanged: true } } });
      const list = await rawModern(world, "tools/list", {});
      expect(list.result).toMatchObject({ ttlMs: 0, cacheScope: "private" });
    });

    it("a tool list that changes is served changed on the next request (a plugin disabled)", async () => {
      const names = async () => (((await rawModern(world, "tools/list", {})).result?.tools ?? []) as { name: string }[]).map((tool) => tool.name);
      expect(await names()).toContain(CREATE);
      await world.stack.admin("setPolicy", { tenantId: "t1", policy: { rules: [{ tools: "com.test.*", effects: ["read"], decision: "allow" }] } });
      try {
        expect(await names()).not.toContain(CREATE);
      } finally {
        await world.stack.admin("setPolicy", {
          tenantId: "t1",
          policy: {
            rules: [
              { tools: "com.test.*", effects: ["read"], decision: "allow" },
              { tools: "com.test.*", effects: ["write", "external"], decision: "confirm", mode: "platform" },
            ],
          },
        });
      }
      expect(await names()).toContain(CREATE);
    });

    it("errors keep the request's id: an unknown or removed method is -32601, an unsupported version names the supported ones, bad params -32602", async () => {
      const unknown = await rawModern(world, "tools/nonexistent", {}, { id: 41 });
      expect(unknown).toMatchObject({ id: 41, error: { code: -32601 } });
      const removed = await rawModern(world, "initialize", {}, { id: 42 });
      expect(removed).toMatchObject({ id: 42, error: { code: -32601 } });
      const future = await rawModern(world, "tools/list", {}, { id: 43, version: "2099-01-01" });
      expect(future).toMatchObject({ id: 43, error: { data: { supported: ["2026-07-28"], requested: "2099-01-01" } } });
      for (const cursor of ["bm90LWEtY3Vyc29y", 5]) {
        expect(await rawModern(world, "tools/list", { cursor }, { id: 44 }), String(cursor)).toMatchObject({ id: 44, error: { code: -32602 } });
      }
      const unknownTool = await rawModern(world, "tools/call", { name: "no_such_tool", arguments: {} }, { id: 45 });
      expect(unknownTool).toMatchObject({ id: 45, error: { code: -32602 } });
    });
  });

  describe("approval by input_required", () => {
    it("approve: one URL input request to the request's page, then the retry runs the call once", async () => {
      const seen: UrlInput[] = [];
      const client = await connect({ onUrl: userWho("approve", seen) });
      const before = created();
      const result = await client.callTool({ name: CREATE, arguments: { title: "Approved at 2026-07-28" } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ title: "Approved at 2026-07-28" });
      expect(seen).toHaveLength(1);
      expect(seen[0]!.url).toMatch(new RegExp(`^${world.stack.url}/confirm/[0-9a-f-]{36}$`));
      expect(created()).toBe(before + 1);
    });

    it("deny on the page: a tool error that says nothing ran, and nothing ran", async () => {
      const client = await connect({ onUrl: userWho("deny") });
      const before = created();
      const result = await client.callTool({ name: CREATE, arguments: { title: "Denied at 2026-07-28" } });
      expect(result).toMatchObject({ isError: true, _meta: { "toolpact/code": "CONFIRMATION_DENIED" } });
      expect(textOf(result)).toContain("nothing ran");
      expect(created()).toBe(before);
    });

    it("the client declines to open the page: the request is withdrawn and nothing runs", async () => {
      let asked = "";
      const client = await connect({ onUrl: (input) => ((asked = requestIdOf(input.url)), { action: "decline" }) });
      const result = await client.callTool({ name: CREATE, arguments: { title: "Declined at 2026-07-28" } });
      expect(result).toMatchObject({ isError: true, _meta: { "toolpact/code": "CONFIRMATION_DENIED" } });
      expect(textOf(result)).toContain("declined");
      await expect(world.decide(asked, "approve")).rejects.toThrow();
    });

    it("a client that declared no URL input gets a tool error with the page's URL and the retry rule; the same call after approval runs once", async () => {
      const client = await connect();
      const before = created();
      const first = await client.callTool({ name: CREATE, arguments: { title: "No URL input" } });
      expect(first).toMatchObject({ isError: true, _meta: { "toolpact/code": "CONFIRMATION_REQUIRED" } });
      const url = /(http:\/\/\S+\/confirm\/[0-9a-f-]{36})/.exec(textOf(first))?.[1];
      expect(url).toBeDefined();
      expect(textOf(first)).toContain("make the same call again with the same arguments");
      await world.decide(requestIdOf(url!), "approve");
      const retried = await client.callTool({ name: CREATE, arguments: { title: "No URL input" } });
      expect(retried.structuredContent).toMatchObject({ title: "No URL input" });
      expect(created()).toBe(before + 1);
    });
  });
});
