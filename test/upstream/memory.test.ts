/**
 * `@modelcontextprotocol/server-memory` (a registry server, 2025-11-25) as a provider, its store named
 * by `env`: a confirmed write through toolpact lands in that store, and a read sees it.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeOf, declareTools, registryServer, startUpstreamWorld, type UpstreamWorld } from "./support/upstream-host.js";

let world: UpstreamWorld;
let store: string;

beforeAll(async () => {
  const memory = registryServer("server-memory");
  const tools = await declareTools([memory], {
    create_entities: { name: "create-entities", effect: "write" },
    read_graph: { name: "read-graph", effect: "read" },
  });
  world = await startUpstreamWorld({
    plugin: (dir) => {
      store = path.join(dir, "memory.jsonl");
      return { upstream: { command: process.execPath, args: [memory], env: { MEMORY_FILE_PATH: store } }, tools };
    },
  });
}, 60_000);

afterAll(async () => {
  await world?.close();
});

describe("server-memory as a provider", () => {
  it("writes an entity after confirmation, into the store its env names, and reads it back", async () => {
    const input = { entities: [{ name: "toolpact", entityType: "project", observations: ["governs MCP servers"] }] };
    expect(await codeOf(world.execute("create-entities", input))).toBe("CONFIRMATION_REQUIRED");
    expect(await world.confirmAndExecute("create-entities", input)).toMatchObject({ entities: [{ name: "toolpact" }] });
    expect(JSON.parse(readFileSync(store, "utf8").trim())).toMatchObject({ type: "entity", name: "toolpact" });
    expect(await world.execute("read-graph", {})).toMatchObject({
      entities: [{ name: "toolpact", entityType: "project", observations: ["governs MCP servers"] }],
      relations: [],
    });
  });
});
