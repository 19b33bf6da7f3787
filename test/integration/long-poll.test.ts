/**
 * `confirmations.wait` over HTTP for a whole round: the server holds a round for its limit (shortened here
 * through `maxConfirmationWaitMs`, so the test takes seconds, not 25) and the HTTP transport waits for it;
 * a server shutting down answers open rounds at once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpTransport } from "@toolpact/client";
import { ASSISTANT_ID, PROVIDER_ID } from "./support/plugins.js";
import { configureWorld, makeSecrets, startStack, type Stack, type WorldKeys } from "./support/stack.js";
import { mintActorToken } from "./support/tokens.js";

/** The round's limit in these tests, ms (the default is MAX_CONFIRMATION_WAIT_MS, 25 s). */
const ROUND_MS = 2_000;

const PLATFORM_POLICY = {
  rules: [{ tools: "com.test.*", effects: ["write"], decision: "confirm", mode: "platform" }],
} as const;

let dir: string;
const secrets = makeSecrets();
const stacks: Stack[] = [];

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-long-poll-"));
});

afterAll(async () => {
  for (const stack of stacks) await stack.close();
  rmSync(dir, { recursive: true, force: true });
});

async function world(name: string): Promise<{ stack: Stack; keys: WorldKeys }> {
  const stack = await startStack({ dbFile: path.join(dir, `${name}.db`), secrets, runtimeOptions: { maxConfirmationWaitMs: ROUND_MS } });
  stacks.push(stack);
  const keys = await configureWorld(stack);
  await stack.admin("setPolicy", { tenantId: "t1", policy: PLATFORM_POLICY });
  return { stack, keys };
}

async function pendingRequest(stack: Stack, keys: WorldKeys) {
  const transport = createHttpTransport({
    url: stack.url,
    pluginKey: keys.t1[ASSISTANT_ID]!.key,
    actorToken: await mintActorToken(secrets.actorSecret, { expiresIn: 3600 }),
  });
  const preview = await transport.preview({ providerId: PROVIDER_ID, tool: "create-note" }, { title: "waiting" });
  if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
  return { transport, requestId: preview.confirmation.requestId };
}

describe("confirmations.wait over HTTP", () => {
  it("holds an undecided round for the runtime's limit and answers pending; the HTTP transport does not time out first", { timeout: 20_000 }, async () => {
    const { stack, keys } = await world("full-round");
    const { transport, requestId } = await pendingRequest(stack, keys);
    const started = Date.now();
    const status = await transport.waitForConfirmation(requestId);
    const took = Date.now() - started;
    expect(status.status).toBe("pending");
    expect(took).toBeGreaterThan(ROUND_MS - 100);
    expect(took).toBeLessThan(ROUND_MS + 3_000);
  });

  it("a server shutting down answers open rounds at once instead of holding its drain", { timeout: 20_000 }, async () => {
    const { stack, keys } = await world("shutdown");
    const { transport, requestId } = await pendingRequest(stack, keys);
    const waiting = transport.waitForConfirmation(requestId).then(
      (status) => status.status,
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    await stack.close();
    expect(await waiting).toBe("pending");
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
