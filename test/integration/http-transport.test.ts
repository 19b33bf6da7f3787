/**
 * `createHttpTransport` against a real server: the default `runId` reaches preview and execute,
 * `waitForConfirmation` is one `confirmations.wait` round, and failures arrive as ToolpactErrors.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpTransport, isToolpactError, type ToolTransport } from "@toolpact/client";
import { ASSISTANT_ID, PROVIDER_ID } from "./support/plugins.js";
import { configureWorld, makeSecrets, startStack, type Stack, type WorldKeys } from "./support/stack.js";
import { decodeJws, mintActorToken } from "./support/tokens.js";
import { callerHeaders, mutate, ok } from "./support/wire.js";

const PLATFORM_POLICY = {
  rules: [
    { tools: "com.test.*", effects: ["read"], decision: "allow" },
    { tools: "com.test.*", effects: ["write"], decision: "confirm", mode: "platform" },
  ],
} as const;

let dir: string;
let stack: Stack;
let keys: WorldKeys;
const secrets = makeSecrets();

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-transport-"));
  stack = await startStack({ dbFile: path.join(dir, "toolpact.db"), secrets });
  keys = await configureWorld(stack);
  await stack.admin("setPolicy", { tenantId: "t1", policy: PLATFORM_POLICY });
});

afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const ref = (tool: string) => ({ providerId: PROVIDER_ID, tool });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );
}

async function transportFor(user: string, runId?: string): Promise<{ transport: ToolTransport; actorToken: string }> {
  const actorToken = await mintActorToken(secrets.actorSecret, { sub: user, expiresIn: 3600 });
  const transport = createHttpTransport({
    url: stack.url,
    pluginKey: keys.t1[ASSISTANT_ID]!.key,
    actorToken,
    ...(runId === undefined ? {} : { runId }),
  });
  return { transport, actorToken };
}

describe("createHttpTransport", () => {
  it("sends its runId with every preview and execute that names none", async () => {
    const actorToken = await mintActorToken(secrets.actorSecret, { sub: "u-transport-run", expiresIn: 3600 });
    const headers = callerHeaders(keys.t1[ASSISTANT_ID]!.key, actorToken);
    const { runId } = ok<{ runId: string }>(await mutate(stack.url, "runs.open", { allow: [`${PROVIDER_ID}:list-notes`], ttlSeconds: 60 }, headers));
    const transport = createHttpTransport({ url: stack.url, pluginKey: keys.t1[ASSISTANT_ID]!.key, actorToken, runId });
    await transport.execute(ref("list-notes"), {});
    const outside = await rejection(transport.execute(ref("echo"), {}));
    expect(isToolpactError(outside) && outside.code).toBe("RUN_DENIED");
    expect(isToolpactError(await rejection(transport.preview(ref("echo"), {}))) ? "RUN_DENIED" : "no").toBe("RUN_DENIED");
    ok(await mutate(stack.url, "runs.close", { runId }, headers));
    const closed = await rejection(transport.execute(ref("list-notes"), {}));
    expect(isToolpactError(closed) && closed.code).toBe("RUN_DENIED");
  });

  it("a platform preview's token, once approved, is one waitForConfirmation round away and carries the run", async () => {
    const { transport, actorToken } = await transportFor("u-transport-wait");
    const headers = callerHeaders(keys.t1[ASSISTANT_ID]!.key, actorToken);
    const { runId } = ok<{ runId: string }>(await mutate(stack.url, "runs.open", { allow: ["*"], ttlSeconds: 60 }, headers));
    const preview = await transport.preview(ref("create-note"), { title: "wait" }, { runId });
    if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
    const { requestId } = preview.confirmation;
    await stack.runtime.decideConfirmation({ tenantId: "t1", userId: "u-transport-wait" }, requestId, "approve");
    const status = await transport.waitForConfirmation(requestId);
    if (status.status !== "approved") throw new Error(`expected approved, got ${status.status}`);
    expect(decodeJws(status.token).payload).toMatchObject({ run: runId, mod: "platform" });
    const done = await transport.execute(ref("create-note"), { title: "wait" }, { confirmationToken: status.token, runId });
    expect(done.operationId).toBeTypeOf("string");
  });

  it("waitForConfirmation stops at once when its signal aborts", async () => {
    const { transport } = await transportFor("u-transport-abort");
    const preview = await transport.preview(ref("create-note"), { title: "abort" });
    if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
    const controller = new AbortController();
    const started = Date.now();
    const waiting = rejection(transport.waitForConfirmation(preview.confirmation.requestId, { signal: controller.signal }));
    setTimeout(() => controller.abort(), 200);
    await waiting;
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("waiting on someone else's request is refused with a toolpact code", async () => {
    const owner = await transportFor("u-transport-owner");
    const preview = await owner.transport.preview(ref("create-note"), { title: "mine" });
    if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
    const other = await transportFor("u-transport-other");
    const error = await rejection(other.transport.waitForConfirmation(preview.confirmation.requestId));
    expect(isToolpactError(error)).toBe(true);
    expect(isToolpactError(error) && error.code).not.toBe("OUTCOME_UNKNOWN");
  });
});
