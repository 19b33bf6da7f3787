/** Graceful shutdown: stop accepting, drain in-flight calls (bounded), then close the runtime. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { ASSISTANT_ID, PROVIDER_ID } from "./support/plugins.js";
import { configureWorld, makeSecrets, startStack, type Stack } from "./support/stack.js";
import { mintActorToken } from "./support/tokens.js";
import { callerHeaders, mutate } from "./support/wire.js";

const secrets = makeSecrets();
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function world(drainTimeoutMs?: number): Promise<{ stack: Stack; headers: Record<string, string> }> {
  const dir = mkdtempSync(path.join(tmpdir(), "toolpact-shutdown-"));
  const stack = await startStack({ dbFile: path.join(dir, "toolpact.db"), secrets, ...(drainTimeoutMs ? { drainTimeoutMs } : {}) });
  cleanups.push(async () => {
    await stack.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const keys = await configureWorld(stack);
  const headers = callerHeaders(keys.t1[ASSISTANT_ID]!.key, await mintActorToken(secrets.actorSecret, { sub: "u-shutdown" }));
  return { stack, headers };
}

async function untilInvoked(stack: Stack, tool: string): Promise<void> {
  while ((stack.probe.invocations.get(tool) ?? 0) === 0) await sleep(5);
}

const slowRead = { ref: { providerId: PROVIDER_ID, tool: "slow-read" }, input: {} };

describe("graceful shutdown", () => {
  it("drains an in-flight call, refuses new connections, then closes the runtime", async () => {
    const { stack, headers } = await world();
    stack.probe.slowReadMs = 400;
    const inFlight = mutate(stack.url, "tools.execute", slowRead, headers);
    await untilInvoked(stack, "slow-read");
    const invokedAt = performance.now();

    const closing = stack.close().then(() => performance.now());
    await sleep(20);
    await expect(fetch(`${stack.url}/healthz`)).rejects.toThrow();

    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(answer.body.result?.data).toMatchObject({ result: { done: true } });
    // close() waited for the provider (400 ms from its invocation) before it resolved.
    expect((await closing) - invokedAt).toBeGreaterThanOrEqual(380);
    expect(await stack.runtime.ready()).toBe(false);
  });

  it("bounds the wait: after drainTimeoutMs the connections are cut", async () => {
    const { stack, headers } = await world(100);
    stack.probe.slowReadMs = 1_500;
    const started = performance.now();
    const inFlight = mutate(stack.url, "tools.execute", slowRead, headers).then(
      () => "answered",
      () => "cut",
    );
    await untilInvoked(stack, "slow-read");
    const closing = stack.close();
    expect(await inFlight).toBe("cut");
    expect(performance.now() - started).toBeLessThan(1_200);
    await closing;
  });
});
