/**
 * At each connection the server's live tool list is checked against the manifest: a tool whose schema
 * changed (or that the server no longer lists) is refused, fail closed, with the JSON Pointers that
 * changed in the log and in the refusal; the other tools keep serving.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { declareTools, startUpstreamWorld, UPSTREAM_ID, V2_SERVER, type UpstreamWorld } from "./support/upstream-host.js";

let world: UpstreamWorld;

beforeAll(async () => {
  const [append, hold] = await declareTools([V2_SERVER], {
    append_line: { name: "append-line", effect: "write" },
    hold: { name: "hold", effect: "read" },
  });
  // The manifest as it was reviewed: "line" was a number then, "mode" existed, and "hold" had an outputSchema.
  const stale = {
    ...append,
    inputSchema: { type: "object", properties: { line: { type: "number" }, mode: { type: "string" } }, required: ["line"] },
  };
  const gone = { name: "vanish", upstreamName: "vanished_tool", effect: "read", inputSchema: { type: "object" } };
  world = await startUpstreamWorld({
    plugin: {
      upstream: { command: process.execPath, args: [V2_SERVER], env: { CALLS_FILE: "calls.txt", DATA_FILE: "data.txt" } },
      tools: [stale, hold!, gone],
    },
  });
  await world.logged((entry) => entry.event === "upstream_connected");
}, 60_000);

afterAll(async () => {
  await world?.close();
});

describe("drift check", () => {
  it("logs what changed, by JSON Pointer, for each drifted tool", () => {
    const drift = world.logs.filter((entry) => entry.event === "upstream_tool_drift");
    expect(drift.map((entry) => [entry.level, entry.pluginId, entry.tool, entry.drift])).toEqual([
      ["error", UPSTREAM_ID, "append-line@1", 'append-line@1 (upstream "append_line"): inputSchema removed /properties/mode; changed at /properties/line/type'],
      ["error", UPSTREAM_ID, "vanish@1", 'vanish@1 (upstream "vanished_tool"): the server lists no such tool'],
    ]);
  });

  it("refuses a drifted tool at preview and execute, before any operation and with nothing sent, naming the change", async () => {
    const execute = (await world.execute("append-line", { line: 7 }).catch((error: unknown) => error)) as { code: string; message: string };
    expect(execute.code).toBe("PROVIDER_FAILED");
    expect(execute.message).toBe(
      "the provider's authorize of mcp.upstream:append-line@1 refused: the MCP server no longer matches plugin.json, so this tool is refused: " +
        'append-line@1 (upstream "append_line"): inputSchema removed /properties/mode; changed at /properties/line/type; update plugin.json and restart',
    );
    const preview = await world.runtime.preview(world.principal, { providerId: UPSTREAM_ID, tool: "vanish" }, {}).catch((error: unknown) => error);
    expect(preview).toMatchObject({ code: "PROVIDER_FAILED", message: expect.stringContaining("the server lists no such tool") });
    const events = (await world.runtime.admin.listActivity("t1", { limit: 10 })).events.filter((event) => event.kind === "call");
    expect(events.filter((event) => event.errorCode === "PROVIDER_FAILED")).toHaveLength(2);
    expect(events.every((event) => event.operationId === undefined)).toBe(true);
  });

  it("keeps serving the tools that match", async () => {
    expect(await world.execute("hold", { ms: 1 })).toMatchObject({ text: "held 1" });
  });
});
