/**
 * tools/list and tools/call through the official SDK client over Streamable HTTP (a session), against a
 * real runtime on SQLite: names, schemas, annotations, paging, results, refusals, list changes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema, McpError, ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { ASSISTANT_ID, NARROW_CALLER_ID } from "../integration/support/plugins.js";
import { mutate, ok, query } from "../integration/support/wire.js";
import { ACTOR_ISSUER } from "../integration/support/tokens.js";
import { createRuntime, createSqliteStore } from "../../packages/runtime/src/index.js";
import { PLATFORM_POLICY, listAll, startMcpWorld, textOf, userWho, type McpWorld } from "./support/mcp-world.js";

describe("MCP tools over Streamable HTTP with a session", () => {
  let world: McpWorld;

  beforeAll(async () => {
    // No polling to speak of: list changes must come from the runtime's signal.
    world = await startMcpWorld({ mcp: { pageSize: 4, toolsPollMs: 3_600_000 } });
  });
  afterAll(async () => {
    await world?.close();
  });

  /** The activity event of an operation, as the tenant's admin lists it. */
  async function eventOf(operationId: string | undefined): Promise<Record<string, unknown> | undefined> {
    const page = await world.stack.adminQuery<{ events: { operationId?: string }[] }>("listActivity", { tenantId: "t1" });
    return page.events.find((candidate) => candidate.operationId === operationId);
  }

  it("lists exactly the tools this caller may call, named within MCP's rules, page by page", async () => {
    const client = await world.connect();
    const first = await client.listTools();
    expect(first.tools).toHaveLength(4);
    expect(first.nextCursor).toBeDefined();
    const tools = await listAll(client);
    expect(tools.map((tool) => tool.name)).toEqual([
      "com-test-notes_broken",
      "com-test-notes_create_note",
      "com-test-notes_deep",
      "com-test-notes_echo",
      "com-test-notes_list_notes",
      "com-test-notes_slow_note",
      "com-test-notes_slow_read",
      "com-test-notes_verified_read",
      "com-test-notes_versioned",
      "com-test-notes_versioned-v1",
    ]);
    for (const tool of tools) expect(tool.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    // The unhandled tool, the disabled provider's and the uninstalled provider's are not offered.
    expect(tools.some((tool) => tool.name.includes("unhandled") || tool.name.includes("ping"))).toBe(false);
  });

  it("describes each tool: title, description, schemas as declared, annotations from the effect", async () => {
    const client = await world.connect();
    const tools = new Map((await listAll(client)).map((tool) => [tool.name, tool]));
    const create = tools.get("com-test-notes_create_note")!;
    expect(create.title).toBe("Create note");
    expect(create.description).toContain("com.test.notes:create-note@1: changes data; each call waits for the user to approve it");
    expect(create.inputSchema).toMatchObject({ type: "object", required: ["title"], additionalProperties: false });
    expect(create.outputSchema).toEqual({ type: "object" });
    expect(create.annotations).toEqual({ title: "Create note", readOnlyHint: false, destructiveHint: true, openWorldHint: false });
    expect(create._meta).toEqual({ "toolpact/tool": "com.test.notes:create-note@1" });
    const list = tools.get("com-test-notes_list_notes")!;
    expect(list.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
    expect(list.description).toBe("com.test.notes:list-notes@1: reads data");
    expect(list.outputSchema).toBeUndefined();
  });

  it("offers a caller only what its `uses` allows", async () => {
    const client = await world.connect({ caller: NARROW_CALLER_ID });
    expect((await listAll(client)).map((tool) => tool.name)).toEqual(["com-test-notes_list_notes"]);
  });

  it("calls a read tool: structuredContent, its JSON as text, the operation id in _meta", async () => {
    const client = await world.connect();
    await listAll(client); // so the SDK client validates structuredContent against the listed schemas
    const result = await client.callTool({ name: "com-test-notes_list_notes", arguments: { query: "first" } });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ notes: [{ id: "note-1", title: "first" }], query: "first" });
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
    expect((result._meta as Record<string, string>)["toolpact/operationId"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("records MCP calls in the activity log like any other, marked by an mcp: correlation id and via mcp", async () => {
    const client = await world.connect();
    const result = await client.callTool({ name: "com-test-notes_echo", arguments: { marker: "activity" } });
    const operationId = (result._meta as Record<string, string>)["toolpact/operationId"];
    const event = await eventOf(operationId);
    expect(event).toMatchObject({ callerPluginId: ASSISTANT_ID, tool: "com.test.notes:echo@1", via: "mcp" });
    expect(event?.correlationId).toMatch(/^mcp:[0-9a-f-]{36}$/);
  });

  it("records how a call came: http for /trpc, mcp when /trpc is told so (what toolpact mcp does) or for /mcp whatever it says", async () => {
    const execute = async (headers: Record<string, string>) =>
      ok<{ operationId: string }>(await mutate(world.stack.url, "tools.execute", { ref: { providerId: "com.test.notes", tool: "echo" }, input: {} }, headers))
        .operationId;
    const headers = await world.headers();
    expect((await eventOf(await execute(headers)))?.via).toBe("http");
    expect((await eventOf(await execute({ ...headers, "x-toolpact-via": "mcp" })))?.via).toBe("mcp");
    // the caller's own list shows it too
    const own = ok<{ events: { via?: string }[] }>(await query(world.stack.url, "activity.list", { limit: 2 }, headers));
    expect(own.events.map((event) => event.via)).toEqual(["mcp", "http"]);
    const mislabelled = new Client({ name: "test-agent", version: "1.0.0" });
    await mislabelled.connect(new StreamableHTTPClientTransport(world.mcpUrl, { requestInit: { headers: { ...headers, "x-toolpact-via": "http" } } }));
    const result = await mislabelled.callTool({ name: "com-test-notes_echo", arguments: {} });
    await mislabelled.close();
    expect((await eventOf((result._meta as Record<string, string>)["toolpact/operationId"]))?.via).toBe("mcp");
  });

  it("answers a refusal as a tool error with the code in text and _meta, never structuredContent", async () => {
    const client = await world.connect();
    await listAll(client);
    const invalid = await client.callTool({ name: "com-test-notes_list_notes", arguments: { query: 5 } });
    expect(invalid.isError).toBe(true);
    expect(invalid.structuredContent).toBeUndefined();
    expect(textOf(invalid)).toMatch(/^INPUT_INVALID: .*\n- \/query: /s);
    expect(invalid._meta).toEqual({ "toolpact/code": "INPUT_INVALID" });

    const unverified = await client.callTool({ name: "com-test-notes_verified_read", arguments: {} });
    expect(unverified).toMatchObject({ isError: true, _meta: { "toolpact/code": "VERIFICATION_REQUIRED" } });
  });

  it("keeps structuredContent off refusals of tools with an outputSchema, so the stock SDK client shows them", async () => {
    const client = await world.connect();
    await listAll(client); // create-note declares an outputSchema: the client validates against it
    const refused = await client.callTool({ name: "com-test-notes_create_note", arguments: { body: "no title" } });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toBeUndefined();
    expect(textOf(refused)).toContain("INPUT_INVALID");
  });

  it("answers an unknown tool name with a protocol error and the closest names, prefixed once by the SDK", async () => {
    const client = await world.connect();
    const unknown = (name: string) =>
      client.callTool({ name, arguments: {} }).then(
        () => undefined,
        (failure: unknown) => failure as McpError,
      );
    const typo = await unknown("com-test-notes_list_note");
    expect(typo).toBeInstanceOf(McpError);
    expect(typo?.code).toBe(ErrorCode.InvalidParams);
    expect(typo?.message).toBe(
      'MCP error -32602: unknown tool "com-test-notes_list_note": no tool by that name is offered to this caller and user; did you mean "com-test-notes_list_notes"?',
    );
    // Without the provider part, and by the full toolpact name, the tool is found too.
    expect((await unknown("notes_create_note"))?.message).toMatch(/; did you mean "com-test-notes_create_note"\?$/);
    expect((await unknown("com.test.notes:versioned@1"))?.message).toMatch(/; did you mean "com-test-notes_versioned-v1", "com-test-notes_versioned"\?$/);
    expect((await unknown("zzz"))?.message).toBe(
      'MCP error -32602: unknown tool "zzz": no tool by that name is offered to this caller and user: list them with tools/list',
    );
  });

  it("calls the version a name stands for: plain for the highest, -v<n> for any", async () => {
    const decided: string[] = [];
    const client = await world.connect({ onUrlElicitation: userWho(world, "approve", decided) });
    const called = async (name: string) => (await client.callTool({ name, arguments: { title: name } })).structuredContent;
    expect(await called("com-test-notes_versioned")).toEqual({ version: 2 });
    expect(await called("com-test-notes_versioned-v1")).toEqual({ version: 1 });
    expect(await called("com-test-notes_versioned-v2")).toEqual({ version: 2 });
    expect(decided).toHaveLength(3);
  });

  it("refuses token mode: a caller the tenant trusts to confirm gets no token through MCP, and nothing runs", async () => {
    // Tenant t2 keeps the test world's policy: writes confirmed in token mode by trusted UIs (the assistant).
    const client = await world.connect({ tenant: "t2" });
    const before = world.stack.probe.invocations.get("create-note") ?? 0;
    const refused = await client.callTool({ name: "com-test-notes_create_note", arguments: { title: "self-confirmed" } });
    expect(refused).toMatchObject({ isError: true, _meta: { "toolpact/code": "PERMISSION_DENIED" } });
    expect(textOf(refused)).toContain("MCP clients are never trusted to confirm; nothing ran");
    expect(world.stack.probe.invocations.get("create-note") ?? 0).toBe(before);
  });

  it("tells session clients when the tenant's tools change (notifications/tools/list_changed), as soon as the runtime signals it", async () => {
    const client = await world.connect();
    await listAll(client);
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      changed += 1;
    });
    await new Promise((resolve) => setTimeout(resolve, 400)); // the client's GET stream is open and watched
    await world.stack.admin("setPolicy", {
      tenantId: "t1",
      policy: { rules: [{ tools: "com.test.notes:list-notes", decision: "deny" }, ...PLATFORM_POLICY.rules] },
    });
    try {
      await expect.poll(() => changed, { timeout: 3_000 }).toBeGreaterThan(0);
      expect((await listAll(client)).map((tool) => tool.name)).not.toContain("com-test-notes_list_notes");
    } finally {
      await world.stack.admin("setPolicy", { tenantId: "t1", policy: PLATFORM_POLICY });
    }
  });
});

describe("MCP list changes nobody signals", () => {
  let world: McpWorld;
  beforeAll(async () => {
    world = await startMcpWorld({ mcp: { toolsPollMs: 200 } });
  });
  afterAll(async () => {
    await world?.close();
  });

  it("are found by the slow poll: another process changed the SQLite file", async () => {
    const client = await world.connect();
    await listAll(client);
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      changed += 1;
    });
    await new Promise((resolve) => setTimeout(resolve, 400));
    // another runtime on the same file: its change reaches this instance only by reading the store
    const other = await createRuntime({
      store: await createSqliteStore({ path: world.stack.dbFile }),
      signingKeys: world.secrets.signingKeys,
      storageKey: world.secrets.storageKey,
      actorTokens: { issuer: ACTOR_ISSUER, secret: world.secrets.actorSecret },
      recoveryIntervalMs: 0,
    });
    try {
      await other.admin.setPolicy("t1", { rules: [{ tools: "com.test.notes:list-notes", decision: "deny" }, ...PLATFORM_POLICY.rules] });
      await expect.poll(() => changed, { timeout: 5_000 }).toBeGreaterThan(0);
    } finally {
      await other.close();
    }
  });
});
