/**
 * `toolpact mcp` (the built binary, stdio) with the v2 SDK `Client`: pinned to 2026-07-28 it lists, calls and
 * gets a confirmed write approved through `input_required`; at its default (2025-11-25) the same binary
 * serves it with initialize and pushed URL elicitation.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/client";
import { ASSISTANT_ID } from "../integration/support/plugins.js";
import { mintActorToken } from "../integration/support/tokens.js";
import { startMcpWorld, textOf, type McpWorld } from "../mcp/support/mcp-world.js";
import { connectStdio, requestIdOf, type ModernClientOptions, type UrlInput } from "./support/modern-clients.js";

const BIN = fileURLToPath(new URL("../../packages/cli/dist/bin.js", import.meta.url));
if (!existsSync(BIN)) throw new Error("packages/cli/dist is not built: run `pnpm build` before these tests");
const CREATE = "com-test-notes_create_note";

describe("toolpact mcp (stdio) with the v2 Client", () => {
  let world: McpWorld;
  const clients: Client[] = [];

  beforeAll(async () => {
    world = await startMcpWorld();
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await world?.close();
  });

  const created = () => world.stack.probe.invocations.get("create-note") ?? 0;
  async function spawn(options: ModernClientOptions = {}): Promise<Client> {
    const env = {
      TOOLPACT_PLUGIN_KEY: world.keys.t1[ASSISTANT_ID]!.key,
      TOOLPACT_ACTOR_TOKEN: await mintActorToken(world.secrets.actorSecret, { sub: "user-1", expiresIn: 3600 }),
    };
    const client = await connectStdio(BIN, world.stack.url, env, options);
    clients.push(client);
    return client;
  }
  const approving = (seen: UrlInput[]) => async (input: UrlInput) => {
    seen.push(input);
    await world.decide(requestIdOf(input.url), "approve");
    return { action: "accept" as const };
  };

  it("pinned to 2026-07-28: lists and calls a read tool", async () => {
    const client = await spawn();
    expect(client.getProtocolEra()).toBe("modern");
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain(CREATE);
    const result = await client.callTool({ name: "com-test-notes_list_notes", arguments: {} });
    expect(result.isError).toBeFalsy();
  });

  it("pinned to 2026-07-28: a confirmed write is approved through input_required and runs once", async () => {
    const seen: UrlInput[] = [];
    const client = await spawn({ onUrl: approving(seen) });
    const before = created();
    const result = await client.callTool({ name: CREATE, arguments: { title: "Approved over stdio at 2026-07-28" } });
    expect(result.structuredContent).toMatchObject({ title: "Approved over stdio at 2026-07-28" });
    expect(seen).toHaveLength(1);
    expect(created()).toBe(before + 1);
  });

  it("pinned to 2026-07-28 without URL input: a tool error with the page's URL and the retry rule, and nothing ran", async () => {
    const client = await spawn();
    const before = created();
    const result = await client.callTool({ name: CREATE, arguments: { title: "No URL input over stdio" } });
    expect(result).toMatchObject({ isError: true, _meta: { "toolpact/code": "CONFIRMATION_REQUIRED" } });
    expect(textOf(result)).toMatch(/open http:\/\/\S+\/confirm\/[0-9a-f-]{36} and approve, then make the same call again/);
    expect(created()).toBe(before);
  });

  it("at its default (2025-11-25): initialize, and the approval by pushed URL elicitation", async () => {
    const seen: UrlInput[] = [];
    const client = await spawn({ pin: false, onUrl: approving(seen) });
    expect(client.getProtocolEra()).toBe("legacy");
    const before = created();
    const result = await client.callTool({ name: CREATE, arguments: { title: "Approved over stdio at 2025-11-25" } });
    expect(result.structuredContent).toMatchObject({ title: "Approved over stdio at 2025-11-25" });
    expect(seen).toHaveLength(1);
    expect(created()).toBe(before + 1);
  });
});
