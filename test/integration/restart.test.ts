/**
 * Guarantees that must hold across a server restart: a new runtime and server on the same SQLite file
 * and secrets. Single-use and idempotency live in the store, not in a process's memory.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ASSISTANT_ID, PROVIDER_ID } from "./support/plugins.js";
import { configureWorld, makeSecrets, startStack, type Stack, type WorldKeys } from "./support/stack.js";
import { mintActorToken } from "./support/tokens.js";
import { callerHeaders, mutate, ok } from "./support/wire.js";

let dir: string;
let dbFile: string;
const running: Stack[] = [];
const secrets = makeSecrets();

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-restart-"));
  dbFile = path.join(dir, "toolpact.db");
});

afterEach(async () => {
  for (const stack of running.splice(0)) await stack.close();
  rmSync(dir, { recursive: true, force: true });
});

async function start(variant: "base" | "changed-schema" = "base"): Promise<Stack> {
  const stack = await startStack({ dbFile, secrets, variant });
  running.push(stack);
  return stack;
}

async function stop(stack: Stack): Promise<void> {
  running.splice(running.indexOf(stack), 1);
  await stack.close();
}

async function headersOf(keys: WorldKeys): Promise<Record<string, string>> {
  return callerHeaders(keys.t1[ASSISTANT_ID]!.key, await mintActorToken(secrets.actorSecret, { sub: "u-restart", expiresIn: 3600 }));
}

const ref = { providerId: PROVIDER_ID, tool: "create-note" };

async function previewToken(stack: Stack, headers: Record<string, string>, input: unknown): Promise<string> {
  const answer = ok<{ confirmation: { token: string } }>(await mutate(stack.url, "tools.preview", { ref, input }, headers));
  return answer.confirmation.token;
}

describe("after a restart on the same database", () => {
  it("a used token stays used: the replay is CONFIRMATION_USED and the provider does not run", async () => {
    const first = await start();
    const keys = await configureWorld(first);
    const headers = await headersOf(keys);
    const input = { title: "once" };
    const token = await previewToken(first, headers, input);
    const done = ok<{ operationId: string }>(await mutate(first.url, "tools.execute", { ref, input, confirmationToken: token }, headers));
    await stop(first);

    const second = await start();
    const replay = await mutate(second.url, "tools.execute", { ref, input, confirmationToken: token }, headers);
    expect(replay.body.error?.data.toolpactCode).toBe("CONFIRMATION_USED");
    expect(replay.body.error?.data.toolpactData).toMatchObject({ operationId: done.operationId });
    expect(second.probe.invocations.get("create-note") ?? 0).toBe(0);
  });

  it("an unused token still works once, and an idempotency key still returns the recorded result", async () => {
    const first = await start();
    const keys = await configureWorld(first);
    const headers = await headersOf(keys);
    const input = { title: "later" };
    const token = await previewToken(first, headers, input);
    const recorded = ok(
      await mutate(first.url, "tools.execute", { ref: { providerId: PROVIDER_ID, tool: "echo" }, input: { n: 1 }, idempotencyKey: "k" }, headers),
    );
    await stop(first);

    const second = await start();
    ok(await mutate(second.url, "tools.execute", { ref, input, confirmationToken: token }, headers));
    expect(second.probe.invocations.get("create-note")).toBe(1);
    const again = ok(
      await mutate(second.url, "tools.execute", { ref: { providerId: PROVIDER_ID, tool: "echo" }, input: { n: 1 }, idempotencyKey: "k" }, headers),
    );
    expect(again).toEqual(recorded);
    expect(second.probe.invocations.get("echo") ?? 0).toBe(0);
  });

  it("a token minted before the tool's input schema changed is CONFIRMATION_MISMATCH", async () => {
    const first = await start();
    const keys = await configureWorld(first);
    const headers = await headersOf(keys);
    const input = { title: "schema" };
    const token = await previewToken(first, headers, input);
    await stop(first);

    const second = await start("changed-schema");
    const answer = await mutate(second.url, "tools.execute", { ref, input, confirmationToken: token }, headers);
    expect(answer.body.error?.data.toolpactCode).toBe("CONFIRMATION_MISMATCH");
    expect(second.probe.invocations.get("create-note") ?? 0).toBe(0);
    // A fresh preview against the new schema works.
    ok(await mutate(second.url, "tools.execute", { ref, input, confirmationToken: await previewToken(second, headers, input) }, headers));
  });
});
