/**
 * The supervisor on its own, as an isolated provider's host uses it: ping, kill (SIGKILL, then a restart
 * with back-off), how a child ended in `upstream_exited`, the bound on calls in flight, and what a call
 * gets when nothing could be sent or its answer was lost.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ProviderBusy, ProviderOutcomeUnknown } from "@toolpact/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UpstreamSupervisor, UpstreamUnavailable, type UpstreamConnection } from "./upstream-supervisor.js";

const SERVER = fileURLToPath(new URL("../../../../test/upstream/fixtures/v2-server.mjs", import.meta.url));

let dir: string;
let supervisor: UpstreamSupervisor | undefined;
let logs: Record<string, unknown>[];
let connections: UpstreamConnection[];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-supervisor-"));
  logs = [];
  connections = [];
});

afterEach(async () => {
  await supervisor?.close();
  supervisor = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function supervise(maxInFlight = 4): UpstreamSupervisor {
  const log = (entry: Readonly<Record<string, unknown>>) => void logs.push({ ...entry });
  supervisor = new UpstreamSupervisor({
    pluginId: "com.example.child",
    endpoint: { kind: "stdio", command: process.execPath, args: [SERVER], cwd: dir, env: { DATA_FILE: "data.txt" } },
    logger: { info: log, warn: log, error: log },
    maxInFlight,
    restartDelayMs: { initial: 50, max: 400 },
    connectTimeoutMs: 30_000,
    revision: "2025-11-25",
    onConnected: (connection) => void connections.push(connection),
  });
  return supervisor;
}

async function until<T>(find: () => T | undefined, ms = 30_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() - started > ms) throw new Error(`not seen within ${ms} ms; logged ${JSON.stringify(logs.map((entry) => entry.event))}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("UpstreamSupervisor", () => {
  it("answers a ping, kills a child that hangs (its call is unknown), logs the signal, and restarts it", async () => {
    const upstream = supervise();
    await upstream.start();
    expect(connections.map((connection) => [connection.generation, connection.protocolVersion])).toEqual([[1, "2025-11-25"]]);
    expect(await upstream.ping(5_000)).toBe(true);
    const held = upstream.call("hold", { ms: 30_000 }, { timeoutMs: 60_000 }).catch((error: unknown) => error);
    await until(() => (upstream.inFlight === 1 ? true : undefined));
    expect(upstream.kill("spins")).toBe(true);
    expect(await held).toBeInstanceOf(ProviderOutcomeUnknown);
    expect(await until(() => logs.find((entry) => entry.event === "upstream_exited"))).toMatchObject({ signal: "SIGKILL", exitCode: null });
    expect(logs.find((entry) => entry.event === "upstream_killed")).toMatchObject({ pluginId: "com.example.child", reason: "spins" });
    await until(() => (upstream.connected ? true : undefined));
    expect(connections.map((connection) => connection.generation)).toEqual([1, 2]);
    expect(await upstream.call("hold", { ms: 1 }, { timeoutMs: 10_000 })).toMatchObject({ content: [{ type: "text", text: "held 1" }] });
  }, 60_000);

  it("logs a child's own exit code, refuses a call beyond maxInFlight and one while not connected, and stops for good on close", async () => {
    const upstream = supervise(1);
    await upstream.start();
    const held = upstream.call("hold", { ms: 2_000 }, { timeoutMs: 60_000 });
    await expect(upstream.call("hold", { ms: 1 }, { timeoutMs: 10_000 })).rejects.toBeInstanceOf(ProviderBusy);
    await held;
    await expect(upstream.call("crash", {}, { timeoutMs: 10_000 })).rejects.toBeInstanceOf(ProviderOutcomeUnknown);
    expect(await until(() => logs.find((entry) => entry.event === "upstream_exited"))).toMatchObject({ exitCode: 3, signal: null });
    await expect(upstream.call("hold", { ms: 1 }, { timeoutMs: 10_000 })).rejects.toBeInstanceOf(UpstreamUnavailable);
    await until(() => (upstream.connected ? true : undefined));
    await upstream.close();
    expect(await upstream.ping(1_000)).toBe(false);
    expect(upstream.kill("late")).toBe(false);
    await expect(upstream.call("hold", { ms: 1 }, { timeoutMs: 10_000 })).rejects.toBeInstanceOf(UpstreamUnavailable);
  }, 60_000);
});
