import { Client } from "@modelcontextprotocol/client";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { ToolpactError } from "@toolpact/contract";
import { afterEach, describe, expect, it } from "vitest";
import { createChildSdk } from "./child-sdk.js";
import { createChildServer } from "./child-server.js";
import { CALL_META_KEY, HANDLER_META_KEY, THROWN_META_KEY, type ToolCallContextOnWire } from "./wire.js";

const PLUGIN = "com.example.isolated";
const about = (run: ToolCallContextOnWire["run"]): ToolCallContextOnWire => ({
  run,
  phase: run === "execute" ? "execute" : "preview",
  tenantId: "acme",
  actor: { userId: "alice", verificationLevel: 1, roles: ["staff"] },
  callerPluginId: "com.example.assistant",
  tool: `${PLUGIN}:note@1`,
  effect: "write",
  ...(run === "execute" ? { operationId: "op-1" } : {}),
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A child SDK after `activate`, its server, and a client connected to it in memory. */
async function childWith(activate: (sdk: ReturnType<typeof createChildSdk>["sdk"]) => void): Promise<Client> {
  const { sdk, provided } = createChildSdk(PLUGIN);
  activate(sdk);
  const server = createChildServer(PLUGIN, provided);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "host", version: "1" });
  await client.connect(clientSide);
  closers.push(() => client.close());
  return client;
}

describe("the child's MCP server", () => {
  it("lists each provided tool with the handler functions it has", async () => {
    const client = await childWith((sdk) => {
      sdk.tools.provide("note", { preview: () => ({ summary: "s" }), execute: () => ({}) });
      sdk.tools.provideAll({ providerId: PLUGIN, tools: [{ name: "other", version: 2, handler: { authorize: () => true, execute: () => 1 } }] });
    });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => [tool.name, tool._meta?.[HANDLER_META_KEY]])).toEqual([
      ["note", { preview: true, authorize: false }],
      ["other@2", { preview: false, authorize: true }],
    ]);
  });

  it("runs the function the phase names with the call's context, frozen, and answers in structuredContent", async () => {
    const client = await childWith((sdk) =>
      sdk.tools.provide("note", {
        authorize: (_input, ctx) => ctx.actor.roles.includes("staff"),
        preview: (input: { id: string }, ctx) => ({ summary: `note ${input.id}`, details: { phase: ctx.phase, frozen: Object.isFrozen(ctx) } }),
        execute: (input: { id: string }, ctx) => ({ id: input.id, operationId: ctx.operationId, tenant: ctx.tenantId, user: ctx.actor.userId }),
      }),
    );
    const call = (run: ToolCallContextOnWire["run"]) =>
      client.callTool({ name: "note", arguments: { input: { id: "n1" } }, _meta: { [CALL_META_KEY]: about(run) } });
    expect((await call("authorize")).structuredContent).toEqual({ answer: true });
    expect((await call("preview")).structuredContent).toEqual({ answer: { summary: "note n1", details: { phase: "preview", frozen: true } } });
    expect((await call("execute")).structuredContent).toEqual({ answer: { id: "n1", operationId: "op-1", tenant: "acme", user: "alice" } });
  });

  it("a thrown ToolpactError keeps its code and message; anything else only its class name", async () => {
    const client = await childWith((sdk) => {
      sdk.tools.provide("note", {
        execute: () => {
          throw new ToolpactError("TOOL_NOT_FOUND", "no note n1");
        },
      });
      sdk.tools.provide("other", {
        execute: () => {
          throw new RangeError("a secret in a message");
        },
      });
    });
    const meta = { [CALL_META_KEY]: about("execute") };
    const toolpact = await client.callTool({ name: "note", arguments: { input: {} }, _meta: meta });
    expect([toolpact.isError, toolpact._meta?.[THROWN_META_KEY]]).toEqual([
      true,
      { errorClass: "ToolpactError", code: "TOOL_NOT_FOUND", message: "no note n1" },
    ]);
    const other = await client.callTool({ name: "other", arguments: { input: {} }, _meta: meta });
    expect(other._meta?.[THROWN_META_KEY]).toEqual({ errorClass: "RangeError" });
    expect(JSON.stringify(other)).not.toContain("secret");
  });

  it("an answer that is not JSON says so instead of failing the connection", async () => {
    const client = await childWith((sdk) => sdk.tools.provide("note", { execute: () => ({ big: 1n }) }));
    const result = await client.callTool({ name: "note", arguments: { input: {} }, _meta: { [CALL_META_KEY]: about("execute") } });
    expect(result.structuredContent).toEqual({ notJson: true });
  });
});

describe("the child's SDK", () => {
  it("refuses gates, hooks, guards and tool calls with what to do, and a handler without execute", async () => {
    const { sdk } = createChildSdk(PLUGIN);
    expect(() => sdk.hooks.provide("h", () => [])).toThrow(
      `plugin "${PLUGIN}" runs with "isolation": "process", which provides tools only: move its hooks to a plugin that runs in the host's process`,
    );
    await expect(sdk.tools.execute({ providerId: "x", tool: "y" }, {})).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    expect(() => sdk.withActor("token")).toThrow(/calling tools is not offered/);
    expect(() => sdk.tools.provide("note", {} as never)).toThrow(`plugin "${PLUGIN}": the handler for "note" has no execute(input, ctx) function`);
    expect(() => sdk.tools.provideAll({ providerId: "com.example.other", tools: [] })).toThrow(/a plugin provides only under its own id/);
  });
});
