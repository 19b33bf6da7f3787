/**
 * A registry MCP server that no one here wrote (`@modelcontextprotocol/server-filesystem`, 2025-11-25)
 * as a toolpact provider: a read returns the file's content; a write needs confirmation and runs only
 * after it, with toolpact's own preview showing the exact arguments.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeOf, declareTools, registryServer, startUpstreamWorld, UPSTREAM_ID, type UpstreamWorld } from "./support/upstream-host.js";

let world: UpstreamWorld;
let files: string;

beforeAll(async () => {
  const server = registryServer("server-filesystem");
  const tools = await declareTools([server, "."], {
    read_text_file: { name: "read-text-file", effect: "read" },
    write_file: { name: "write-file", effect: "write" },
  });
  world = await startUpstreamWorld({
    plugin: { upstream: { command: process.execPath, args: [server, "files"] }, tools },
    files: { "files/hello.txt": "hello from upstream\n" },
  });
  files = path.join(world.pluginDir, "files");
}, 60_000);

afterAll(async () => {
  await world?.close();
});

describe("server-filesystem as a provider", () => {
  it("reads a file through the whole pipeline: the result is the server's structured content", async () => {
    expect(await world.execute("read-text-file", { path: path.join(files, "hello.txt") })).toEqual({ content: "hello from upstream\n" });
    const events = (await world.runtime.admin.listActivity("t1", { limit: 10 })).events.filter((event) => event.kind === "call");
    expect(events[0]).toMatchObject({ providerPluginId: UPSTREAM_ID, tool: "mcp.upstream:read-text-file@1", outcome: "succeeded" });
  });

  it("refuses a write without confirmation, previews it in plain words with the exact arguments, and writes after confirmation", async () => {
    const target = path.join(files, "new.txt");
    const input = { path: target, content: "written\u202Eby toolpact" };
    expect(await codeOf(world.execute("write-file", input))).toBe("CONFIRMATION_REQUIRED");
    expect(existsSync(target)).toBe(false);
    const preview = await world.runtime.preview(world.principal, { providerId: UPSTREAM_ID, tool: "write-file" }, input);
    expect(preview.summary).toBe(
      'Run the tool "write_file" of the MCP server "secure-filesystem-server" (plugin mcp.upstream) with exactly the arguments shown.',
    );
    expect(preview.details).toEqual({ upstreamTool: "write_file", arguments: input });
    expect(preview.confirmation).toMatchObject({ required: true, mode: "token" });
    expect(await world.confirmAndExecute("write-file", input)).toMatchObject({ content: expect.stringContaining("Successfully wrote") });
    expect(readFileSync(target, "utf8")).toBe("written\u202Eby toolpact");
  });

  it("validates input against the manifest's schema before anything reaches the server", async () => {
    const error = await world.execute("read-text-file", { path: 42 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "INPUT_INVALID" });
  });
});
