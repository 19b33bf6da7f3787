/**
 * An isolated provider that allocates without bound, spins, or exits is stopped; that call fails (a write
 * whose process died is OUTCOME_UNKNOWN, never "failed"), the host keeps answering other calls meanwhile,
 * and the provider serves again once its supervisor restarted it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IN_PROCESS, ISOLATED, startIsolatedHost, type IsolatedHost } from "./support/isolated-host.js";

let world: IsolatedHost;

beforeAll(async () => {
  world = await startIsolatedHost({ process: { memoryMb: 48, maxInFlight: 2 } });
});

afterAll(async () => {
  await world?.close();
});

const read = (providerId: string, id: string) => async () =>
  (await world.host.runtime.execute(await world.principal(), { providerId, tool: "read-note" }, { id })).result;

/** The code and data a call failed with. */
async function failure(call: Promise<unknown>): Promise<{ code?: string; data?: Record<string, unknown> }> {
  try {
    await call;
  } catch (error) {
    return error as { code?: string; data?: Record<string, unknown> };
  }
  throw new Error("expected the call to fail");
}

/** Reads from the isolated copy until it answers again (its supervisor restarts it after a back-off), for at most 15 s. */
async function servesAgain(): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await read(ISOLATED, "again")();
    } catch (error) {
      if (attempt >= 150) throw error; // 15 s: a loaded machine starts a child slowly
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe("an isolated provider that misbehaves", () => {
  it("allocating without bound: its heap limit stops the child, that call fails, and the provider serves again", async () => {
    const from = world.events.length;
    const alice = await world.principal();
    const hog = world.host.runtime.execute(alice, { providerId: ISOLATED, tool: "hog" }, {});
    expect(await failure(hog)).toMatchObject({ code: "PROVIDER_FAILED", data: { errorClass: "ProviderOutcomeUnknown" } });
    expect(await world.logged("upstream_exited", from)).toMatchObject({ pluginId: ISOLATED });
    expect(world.events.slice(from).some((entry) => entry.event === "upstream_stderr" && /heap/i.test(String(entry.line)))).toBe(true);
    expect(await read(IN_PROCESS, "meanwhile")()).toMatchObject({ id: "meanwhile" });
    expect(await servesAgain()).toMatchObject({ id: "again" });
  });

  it("spinning: the call times out, the host answers another plugin's read meanwhile, and the child is killed and restarted", async () => {
    const from = world.events.length;
    const alice = await world.principal();
    const startedAt = performance.now();
    const spin = failure(world.host.runtime.execute(alice, { providerId: ISOLATED, tool: "spin" }, {}));
    await new Promise((resolve) => setTimeout(resolve, 100)); // the child is spinning by now
    const readStart = performance.now();
    expect(await read(IN_PROCESS, "while-spinning")()).toMatchObject({ id: "while-spinning" });
    const readMs = performance.now() - readStart;
    const failed = await spin;
    const spinMs = performance.now() - startedAt;
    expect(failed).toMatchObject({ code: "PROVIDER_FAILED", data: { errorClass: "TimeoutError" } });
    // The other read finished long before the spinning call's timeout (800 ms) freed anything.
    expect(readMs).toBeLessThan(spinMs / 2);
    expect(await world.logged("isolated_process_unresponsive", from)).toMatchObject({ pluginId: ISOLATED, killed: true });
    expect(await world.logged("upstream_exited", from)).toMatchObject({ pluginId: ISOLATED, signal: "SIGKILL" });
    expect(await servesAgain()).toMatchObject({ id: "again" });
  });

  it("exiting in a write's handler: that call is OUTCOME_UNKNOWN (it may have run), other calls go on, and it serves again", async () => {
    const from = world.events.length;
    const alice = await world.principal();
    const crashed = await failure(world.host.runtime.execute(alice, { providerId: ISOLATED, tool: "crash" }, {}));
    expect(crashed).toMatchObject({ code: "OUTCOME_UNKNOWN", data: { errorClass: "ProviderOutcomeUnknown" } });
    const operationId = crashed.data?.operationId as string;
    expect(typeof operationId).toBe("string");
    const operation = await world.host.runtime.getOperation(alice, operationId);
    expect(operation).toMatchObject({ state: "unknown" });
    expect(await world.logged("upstream_exited", from)).toMatchObject({ pluginId: ISOLATED, exitCode: 3 });
    expect(await read(IN_PROCESS, "after-crash")()).toMatchObject({ id: "after-crash" });
    expect(await servesAgain()).toMatchObject({ id: "again" });
  });

  it("writing to stdout what is not MCP, and answers that are not tool results: that call fails, and the host goes on", async () => {
    const alice = await world.principal();
    const failed = await failure(world.host.runtime.execute(alice, { providerId: ISOLATED, tool: "garbage" }, {}));
    expect(failed).toMatchObject({ code: "PROVIDER_FAILED" });
    expect(await read(IN_PROCESS, "after-garbage")()).toMatchObject({ id: "after-garbage" });
    expect(await servesAgain()).toMatchObject({ id: "again" });
  });

  it("calls beyond process.maxInFlight are refused without reaching the child; the others are answered", async () => {
    const alice = await world.principal();
    const calls = [1, 2, 3].map((n) =>
      world.host.runtime.execute(alice, { providerId: ISOLATED, tool: "slow" }, { n }).then(
        (done) => done.result,
        (error: { code?: string; data?: Record<string, unknown> }) => ({ code: error.code, errorClass: error.data?.errorClass }),
      ),
    );
    const answers = await Promise.all(calls);
    expect(answers.filter((answer) => "slow" in (answer as object))).toHaveLength(2);
    expect(answers.filter((answer) => "code" in (answer as object))).toEqual([{ code: "PROVIDER_FAILED", errorClass: "ProviderBusy" }]);
  });
});
