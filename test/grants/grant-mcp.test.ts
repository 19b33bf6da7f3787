/**
 * Everywhere alike: an MCP call (official SDK client over Streamable HTTP) under a live grant runs
 * without a URL approval, because the runtime decides; past the grant's calls or outside its limits the
 * call asks again, and a client that cannot show the page gets nothing run.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schemaHash } from "@toolpact/contract";
import { createSqliteStore } from "../../packages/runtime/src/index.js";
import { ASSISTANT_ID, PROVIDER_ID, providerManifestJson } from "../integration/support/plugins.js";
import { startMcpWorld, type McpWorld } from "../mcp/support/mcp-world.js";

const GRANTING = {
  rules: [
    { tools: "com.test.*", effects: ["read"], decision: "allow" },
    { tools: `${PROVIDER_ID}:create-note`, decision: "confirm", mode: "platform", grants: { maxCalls: 2 } },
  ],
};

describe("an MCP call under a live grant", () => {
  let world: McpWorld;

  beforeAll(async () => {
    world = await startMcpWorld();
    await world.stack.admin("setPolicy", { tenantId: "t1", policy: GRANTING });
    const principal = await world.stack.runtime.authenticate({
      pluginKey: world.keys.t1[ASSISTANT_ID]!.key,
      actorToken: (await world.headers())["x-toolpact-actor"]!,
    });
    const tools = providerManifestJson().tools as { name: string; inputSchema: unknown }[];
    // The grant as the confirmation page would record it, written to the stack's own database.
    const store = await createSqliteStore({ path: world.stack.dbFile });
    await store.insertGrant({
      tenantId: "t1",
      grantId: "grant-mcp",
      actorUserId: principal.actor.userId,
      callerPluginId: ASSISTANT_ID,
      tool: `${PROVIDER_ID}:create-note`,
      version: 1,
      schemaHash: schemaHash(tools.find((tool) => tool.name === "create-note")!.inputSchema),
      constraintsJson: JSON.stringify({ properties: { title: { const: "ops" } } }),
      maxCalls: 2,
      uses: 0,
      expiresAt: Date.now() + 3_600_000,
      createdBy: principal.actor.userId,
      createdAt: Date.now(),
    });
    await store.close();
  });
  afterAll(async () => {
    await world?.close();
  });

  const created = () => world.stack.probe.invocations.get("create-note") ?? 0;

  it("runs the covered calls without asking, then asks again; a call outside the limits asks", async () => {
    const asked: string[] = [];
    const client = await world.connect({
      onUrlElicitation: (params) => {
        asked.push(params.elicitationId);
        throw new Error("the user is away");
      },
    });
    const before = created();
    for (let i = 0; i < 2; i++) {
      const result = await client.callTool({ name: "com-test-notes_create_note", arguments: { title: "ops" } });
      expect(result).toMatchObject({ structuredContent: { title: "ops" } });
    }
    expect(asked).toEqual([]);
    expect(created()).toBe(before + 2);
    const third = await client.callTool({ name: "com-test-notes_create_note", arguments: { title: "ops" } });
    const other = await client.callTool({ name: "com-test-notes_create_note", arguments: { title: "dev" } });
    expect(third).toMatchObject({ isError: true, _meta: { "toolpact/code": "CONFIRMATION_DENIED" } });
    expect(other).toMatchObject({ isError: true, _meta: { "toolpact/code": "CONFIRMATION_DENIED" } });
    expect(asked).toHaveLength(2);
    expect(created()).toBe(before + 2);
    // Past the grant, the bridge does not try the call first: no refused CONFIRMATION_REQUIRED event is left.
    const page = await world.stack.runtime.admin.listActivity("t1", { limit: 200 });
    expect(page.events.filter((event) => event.errorCode === "CONFIRMATION_REQUIRED")).toEqual([]);
    expect(page.events.filter((event) => event.grantId === "grant-mcp" && event.outcome === "succeeded")).toHaveLength(2);
  });
});
