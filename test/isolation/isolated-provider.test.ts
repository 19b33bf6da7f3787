/**
 * `"isolation": "process"`: the same provider module, run in the host's process and in a child of its own,
 * answers the same through the whole pipeline; the child sees only the environment its manifest declares.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALLER, IN_PROCESS, ISOLATED, startIsolatedHost, TENANT, type IsolatedHost } from "./support/isolated-host.js";

let world: IsolatedHost;
const HOST_ONLY = "ISOLATION_TEST_HOST_ONLY";
const PASSED = "ISOLATION_TEST_PASSED";

beforeAll(async () => {
  world = await startIsolatedHost({
    hostEnv: { [HOST_ONLY]: "host-secret", [PASSED]: "passed-value" },
    process: { env: { API_BASE: "https://api.example" }, passEnv: [PASSED, "ISOLATION_TEST_UNSET"] },
  });
});

afterAll(async () => {
  await world?.close();
});

/** Runs one call on both copies: what each gives, or the code and data of what each threw. */
async function both(run: (providerId: string) => Promise<unknown>): Promise<{ inProcess: unknown; isolated: unknown }> {
  const settle = (providerId: string) =>
    run(providerId).then(
      (value) => ({ value }),
      (error: { code?: string; data?: Record<string, unknown> }) => ({ code: error.code, errorClass: error.data?.errorClass }),
    );
  return { inProcess: await settle(IN_PROCESS), isolated: await settle(ISOLATED) };
}

/** A result with the provider's id in the tool's name replaced, and the operation's id dropped, so both copies compare. */
function neutral(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value).replaceAll(IN_PROCESS, "<provider>").replaceAll(ISOLATED, "<provider>"), (key, field) =>
    key === "operationId" ? "<operation>" : field,
  );
}

describe("an isolated provider answers as the same provider in process", () => {
  it("execute of a read: the context the child saw is the call's (tenant, user, caller, tool, phase)", async () => {
    const alice = await world.principal("alice");
    const { inProcess, isolated } = await both((providerId) => world.host.runtime.execute(alice, { providerId, tool: "read-note" }, { id: "n-7" }));
    expect(neutral(isolated)).toEqual(neutral(inProcess));
    expect(isolated).toMatchObject({
      value: { result: { id: "n-7", text: "note n-7", tenant: TENANT, user: "alice", caller: CALLER, tool: `${ISOLATED}:read-note@1`, phase: "execute" } },
    });
  });

  it("preview and execute of a write: the provider's summary, then the effect with its operation", async () => {
    const bob = await world.principal("bob");
    const previews = await both((providerId) => world.host.runtime.preview(bob, { providerId, tool: "write-note" }, { id: "w-1" }));
    expect(neutral(previews.isolated)).toEqual(neutral(previews.inProcess));
    expect(previews.isolated).toMatchObject({ value: { summary: "Write note w-1", details: { phase: "preview", effect: "write" } } });
    const runs = await both((providerId) => world.host.runtime.execute(bob, { providerId, tool: "write-note" }, { id: "w-1" }));
    expect(neutral(runs.isolated)).toEqual(neutral(runs.inProcess));
    expect(runs.isolated).toMatchObject({ value: { result: { written: "w-1", sameOperation: true } } });
  });

  it("the host still checks what the child answers: an output against the outputSchema is OUTPUT_INVALID", async () => {
    const alice = await world.principal();
    const { inProcess, isolated } = await both((providerId) => world.host.runtime.execute(alice, { providerId, tool: "strict-output" }, {}));
    expect(isolated).toEqual(inProcess);
    expect(isolated).toMatchObject({ code: "OUTPUT_INVALID" });
  });

  it("a handler that throws fails the call as PROVIDER_FAILED with its class name, never its message", async () => {
    const alice = await world.principal();
    const { inProcess, isolated } = await both((providerId) => world.host.runtime.execute(alice, { providerId, tool: "throws" }, {}));
    expect(isolated).toEqual(inProcess);
    expect(isolated).toEqual({ code: "PROVIDER_FAILED", errorClass: "RangeError" });
  });

  it("the provider's own authorize runs in the child, in the call's phase, and can refuse a user", async () => {
    for (const [userId, want] of [
      ["alice", { value: { result: { allowed: true } } }],
      ["mallory", { code: "PERMISSION_DENIED" }],
    ] as const) {
      const user = await world.principal(userId);
      const { inProcess, isolated } = await both((providerId) => world.host.runtime.execute(user, { providerId, tool: "guarded" }, {}));
      expect(neutral(isolated), userId).toEqual(neutral(inProcess));
      expect(isolated, userId).toMatchObject(want);
    }
  });

  it("the host validates input before the child sees it", async () => {
    const alice = await world.principal();
    const { inProcess, isolated } = await both((providerId) => world.host.runtime.execute(alice, { providerId, tool: "read-note" }, { id: 7 }));
    expect(isolated).toEqual(inProcess);
    expect(isolated).toMatchObject({ code: "INPUT_INVALID" });
  });
});

describe("an isolated provider's child", () => {
  it("is told when a call is cancelled (its timeout): ctx.signal aborts in the child, which answers pings and is kept", async () => {
    const from = world.events.length;
    const alice = await world.principal();
    const failed = await world.host.runtime.execute(alice, { providerId: ISOLATED, tool: "waits" }, { mark: "m1" }).catch((error: unknown) => error);
    expect(failed).toMatchObject({ code: "PROVIDER_FAILED", data: { errorClass: "TimeoutError" } });
    const abortedFile = path.join(world.isolatedDir, "aborted-m1");
    for (let attempt = 0; attempt < 50 && !existsSync(abortedFile); attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readFileSync(abortedFile, "utf8")).toBe("aborted");
    await new Promise((resolve) => setTimeout(resolve, 1200)); // longer than the ping the host sends after a cancel may take
    expect(world.events.slice(from).filter((entry) => ["upstream_exited", "isolated_process_unresponsive"].includes(String(entry.event)))).toEqual([]);
    expect((await world.host.runtime.execute(alice, { providerId: ISOLATED, tool: "read-note" }, { id: "kept" })).result).toMatchObject({ id: "kept" });
  });

  it("writes its console to stderr, which the host logs with the plugin named (stdout carries MCP)", async () => {
    const from = world.events.length;
    const alice = await world.principal();
    expect((await world.host.runtime.execute(alice, { providerId: ISOLATED, tool: "chatty" }, {})).result).toEqual({ said: true });
    expect(await world.logged("upstream_stderr", from)).toEqual({ event: "upstream_stderr", pluginId: ISOLATED, line: "hello from the provider" });
  });
});

describe("an isolated provider's lifetime", () => {
  it("a module whose activate throws stops the host's start, naming the plugin; the child's reason is in the log", async () => {
    const logged: Readonly<Record<string, unknown>>[] = [];
    const failing = "export function activate() { throw new Error('no database configured'); }\n";
    await expect(startIsolatedHost({ isolatedModule: failing, onLog: (entry) => logged.push(entry) })).rejects.toMatchObject({
      message: expect.stringMatching(new RegExp(`^plugin "${ISOLATED}": its isolated process did not start: `)),
    });
    expect(logged.filter((entry) => entry.event === "upstream_stderr").map((entry) => entry.line)).toContainEqual(
      expect.stringMatching(new RegExp(`^plugin "${ISOLATED}": loading \\S+ in its isolated process failed: no database configured$`)),
    );
  });

  it("runs in a process of its own, which stops when the host closes", async () => {
    const other = await startIsolatedHost();
    const pid = Number(readFileSync(path.join(other.isolatedDir, "activated-pid"), "utf8"));
    expect(pid).not.toBe(process.pid);
    expect(alive(pid)).toBe(true);
    await other.close();
    for (let attempt = 0; attempt < 50 && alive(pid); attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(pid)).toBe(false);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("an isolated provider's environment", () => {
  it("holds only what its manifest declares: no host secret, no host variable it did not pass", async () => {
    const alice = await world.principal();
    const seen = (await world.host.runtime.execute(alice, { providerId: ISOLATED, tool: "env" }, {})).result as { names: string[] };
    expect(seen.names.filter((name) => !IMPLICIT.has(name))).toEqual(["API_BASE", PASSED]);
    // The same code in the host's process sees the host's variables: that is the difference isolation makes.
    const inHost = (await world.host.runtime.execute(alice, { providerId: IN_PROCESS, tool: "env" }, {})).result as { names: string[] };
    expect(inHost.names).toContain(HOST_ONLY);
  });

  it("a manifest that passes one of the host's own secrets is refused at start, naming it", async () => {
    await expect(startIsolatedHost({ process: { passEnv: ["TOOLPACT_ADMIN_KEY"] }, hostEnv: { TOOLPACT_ADMIN_KEY: "x".repeat(43) } })).rejects.toMatchObject({
      message: `plugin "${ISOLATED}": process "passEnv" names TOOLPACT_ADMIN_KEY, one of toolpact's own secrets: no plugin may see it; remove it`,
    });
  });

  it("a manifest with hooks or tools:call is refused: an isolated plugin provides tools only", async () => {
    const { isolationProblems } = await import("../../packages/server/src/isolation/isolated-provider.js");
    const manifest = { id: ISOLATED, permissions: ["tools:provide", "tools:call"], gates: [], guards: [], tools: [], hooks: [{ name: "h" }] };
    expect(isolationProblems(manifest as never)).toEqual([
      `plugin "${ISOLATED}" runs with "isolation": "process", which provides tools only, and declares hooks: move its hooks to a plugin that runs in the host's process`,
      `plugin "${ISOLATED}" runs with "isolation": "process", where calling tools is not offered, and holds "tools:call": remove the permission, or run the plugin in the host's process`,
    ]);
  });
});

/** Variables Node or the platform may add to any process it starts. */
const IMPLICIT = new Set(["__CF_USER_TEXT_ENCODING"]);
