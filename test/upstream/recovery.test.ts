/**
 * A call that may have reached the upstream is never re-sent, and one whose answer was lost (server
 * killed mid-call, call timeout) is OUTCOME_UNKNOWN for an effect, never "failed"; recovery afterwards
 * sends nothing again. The upstream's own error text reaches the caller made visible.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { codeOf, declareTools, startUpstreamWorld, UPSTREAM_ID, V2_SERVER, type UpstreamWorld } from "./support/upstream-host.js";

let world: UpstreamWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const FIXTURE_ENV = { CALLS_FILE: "calls.txt", PID_FILE: "pid.txt", DATA_FILE: "data.txt" };

function callsOf(current: UpstreamWorld, tool: string): number {
  return readFileSync(path.join(current.pluginDir, "calls.txt"), "utf8")
    .split("\n")
    .filter((line) => line === tool).length;
}

describe("lost calls", () => {
  it("a write whose server is killed mid-call is OUTCOME_UNKNOWN, stays unknown, and recovery sends nothing again", async () => {
    const tools = await declareTools([V2_SERVER], { hold: { name: "hold", effect: "write", timeoutMs: 15_000 } });
    world = await startUpstreamWorld({ plugin: { upstream: { command: process.execPath, args: [V2_SERVER], env: FIXTURE_ENV }, tools } });
    const current = world;
    await current.logged((entry) => entry.event === "upstream_connected");
    const pending = current.confirmAndExecute("hold", { ms: 10_000 }).catch((error: unknown) => error);
    await current.logged((entry) => entry.event === "upstream_stderr" && entry.line === "call hold");
    process.kill(Number(readFileSync(path.join(current.pluginDir, "pid.txt"), "utf8")), "SIGKILL");
    const error = (await pending) as { code: string; message: string; data: { operationId: string; errorClass: string } };
    expect(error).toMatchObject({ code: "OUTCOME_UNKNOWN", data: { errorClass: "ProviderOutcomeUnknown" } });
    expect(error.message).toMatch(/lost its answer; its effect may or may not have happened/);
    await current.logged((entry) => entry.event === "upstream_connected" && entry.generation === 2);
    await current.runtime.settleExpiredLeases();
    expect(await current.runtime.getOperation(current.principal, error.data.operationId)).toMatchObject({ state: "unknown" });
    expect(callsOf(current, "hold")).toBe(1);
  }, 60_000);

  it("a call past its timeout is cancelled upstream and OUTCOME_UNKNOWN; a read lost the same way simply failed", async () => {
    const tools = await declareTools([V2_SERVER], { hold: { name: "hold", effect: "write", timeoutMs: 300 } });
    const read = { ...tools[0]!, name: "peek", effect: "read" };
    world = await startUpstreamWorld({ plugin: { upstream: { command: process.execPath, args: [V2_SERVER], env: FIXTURE_ENV }, tools: [...tools, read] } });
    await world.logged((entry) => entry.event === "upstream_connected");
    expect(await codeOf(world.confirmAndExecute("hold", { ms: 5_000 }))).toBe("OUTCOME_UNKNOWN");
    await world.logged((entry) => entry.event === "upstream_stderr" && entry.line === "hold cancelled");
    expect(await codeOf(world.execute("peek", { ms: 5_000 }))).toBe("PROVIDER_FAILED");
    expect(callsOf(world, "hold")).toBe(2);
  }, 60_000);

  it("restarts a crashed server with back-off and serves again; a call lost in the crash is OUTCOME_UNKNOWN", async () => {
    const tools = await declareTools([V2_SERVER], { crash: { name: "crash", effect: "write" }, hold: { name: "hold", effect: "read" } });
    world = await startUpstreamWorld({ plugin: { upstream: { command: process.execPath, args: [V2_SERVER], env: FIXTURE_ENV }, tools } });
    await world.logged((entry) => entry.event === "upstream_connected");
    expect(await codeOf(world.confirmAndExecute("crash", {}))).toBe("OUTCOME_UNKNOWN");
    expect(await world.logged((entry) => entry.event === "upstream_restart_scheduled")).toMatchObject({ pluginId: UPSTREAM_ID, delayMs: 100, attempt: 1 });
    expect(await world.logged((entry) => entry.event === "upstream_connected" && entry.generation === 2)).toMatchObject({ pluginId: UPSTREAM_ID });
    expect(await world.execute("hold", { ms: 1 })).toMatchObject({ text: "held 1" });
  }, 60_000);

  it("an isError result fails the operation with the upstream's text, control and bidi characters made visible", async () => {
    const tools = await declareTools([V2_SERVER], { refuse: { name: "refuse", effect: "read" } });
    world = await startUpstreamWorld({ plugin: { upstream: { command: process.execPath, args: [V2_SERVER], env: FIXTURE_ENV }, tools } });
    await world.logged((entry) => entry.event === "upstream_connected");
    const error = (await world.execute("refuse", {}).catch((caught: unknown) => caught)) as { code: string; message: string };
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(error.message).toMatch(
      /^the provider of mcp\.upstream:refuse@1 failed \(operation [0-9a-f-]+\) and says: no such record \\u\{1b\}\[31mred\\u\{202e\}evil$/,
    );
  }, 60_000);
});
