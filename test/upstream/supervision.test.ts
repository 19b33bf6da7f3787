/**
 * Supervision of an upstream MCP server: it sees only its declared environment, its stderr reaches the
 * log with the plugin named, calls in flight are bounded, and a crash restarts it with back-off.
 */
import { afterEach, describe, expect, it } from "vitest";
import { declareTools, startUpstreamWorld, UPSTREAM_ID, V2_SERVER, type UpstreamWorld } from "./support/upstream-host.js";

let world: UpstreamWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const FIXTURE_ENV = { CALLS_FILE: "calls.txt", PID_FILE: "pid.txt", DATA_FILE: "data.txt" };

describe("supervision", () => {
  it("forwards the child's stderr line by line with the plugin named, and speaks 2026-07-28 to a v2 server", async () => {
    const tools = await declareTools([V2_SERVER], { hold: { name: "hold", effect: "read" } });
    world = await startUpstreamWorld({ plugin: { upstream: { command: process.execPath, args: [V2_SERVER], env: FIXTURE_ENV }, tools } });
    expect(await world.logged((entry) => entry.event === "upstream_connected")).toMatchObject({
      pluginId: UPSTREAM_ID,
      protocolVersion: "2026-07-28",
      server: "toolpact-fixture",
      generation: 1,
    });
    expect(await world.logged((entry) => entry.event === "upstream_stderr" && /^fixture server \d+ started$/.test(String(entry.line)))).toMatchObject({
      pluginId: UPSTREAM_ID,
      level: "info",
    });
    expect(await world.logged((entry) => entry.event === "upstream_tools_ignored")).toMatchObject({
      tools: ["append_line", "get_env", "crash", "refuse", "trace"],
    });
  }, 60_000);

  it("refuses calls beyond maxInFlight as RATE_LIMITED before any operation, and serves again once one ends", async () => {
    const tools = await declareTools([V2_SERVER], { hold: { name: "hold", effect: "read" } });
    world = await startUpstreamWorld({ plugin: { upstream: { command: process.execPath, args: [V2_SERVER], env: FIXTURE_ENV, maxInFlight: 1 }, tools } });
    const first = world.execute("hold", { ms: 4000 });
    await world.logged((entry) => entry.event === "upstream_stderr" && entry.line === "call hold");
    const refused = await world.execute("hold", { ms: 1 }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "RATE_LIMITED", data: { retryAfterMs: 1000 } });
    expect((refused as Error).message).toMatch(/mcp\.upstream:hold@1 is at capacity and ran nothing/);
    expect(await first).toEqual({ text: "held 4000", content: [{ type: "text", text: "held 4000" }] });
    expect(await world.execute("hold", { ms: 1 })).toMatchObject({ text: "held 1" });
  }, 60_000);

  it("doubles the delay while the server keeps failing to start, and the host still starts", async () => {
    world = await startUpstreamWorld({
      plugin: {
        upstream: { command: process.execPath, args: ["no-such-server.mjs"] },
        tools: [{ name: "hold", effect: "read", inputSchema: { type: "object" } }],
      },
    });
    await world.logged((entry) => entry.event === "upstream_restart_scheduled" && entry.attempt === 4);
    const delays = world.logs.filter((entry) => entry.event === "upstream_restart_scheduled").map((entry) => entry.delayMs);
    expect(delays.slice(0, 4)).toEqual([100, 200, 400, 800]);
    expect(world.logs.find((entry) => entry.event === "upstream_start_failed")).toMatchObject({ pluginId: UPSTREAM_ID, level: "error" });
    expect(world.logs.some((entry) => entry.event === "upstream_stderr" && String(entry.line).includes("no-such-server.mjs"))).toBe(true);
    const refused = await world.execute("hold", {}).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "PROVIDER_FAILED", data: { errorClass: "UpstreamUnavailable" } });
  }, 60_000);
});
