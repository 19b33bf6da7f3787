/**
 * The two transports a generated client can use, side by side against one runtime: the HTTP transport
 * (`@toolpact/client`) and the in-process transport (`@toolpact/server`, tRPC createCaller). Both must
 * reject with a ToolpactError carrying the same code, message and data, and answer the same results.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpTransport } from "../../packages/client/src/index.js";
import type { ToolTransport } from "../../packages/client/src/index.js";
import { isToolpactError, type ToolRef } from "../../packages/contract/src/index.js";
import { createInProcessTransport } from "../../packages/server/src/index.js";
import { ASSISTANT_ID, NARROW_CALLER_ID, PROVIDER_ID } from "./support/plugins.js";
import { configureWorld, makeSecrets, startStack, TEST_POLICY, type Stack, type WorldKeys } from "./support/stack.js";
import { mintActorToken } from "./support/tokens.js";

const secrets = makeSecrets();
let dir: string;
let stack: Stack;
let keys: WorldKeys;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-transports-"));
  stack = await startStack({ dbFile: path.join(dir, "toolpact.db"), secrets });
  keys = await configureWorld(stack);
});

afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Pair {
  readonly http: ToolTransport;
  readonly inProcess: ToolTransport;
}

async function transports(caller: string, options: { pluginKey?: string; sub?: string } = {}): Promise<Pair> {
  const pluginKey = options.pluginKey ?? keys.t1[caller]!.key;
  const actorToken = await mintActorToken(secrets.actorSecret, { sub: options.sub ?? "u-transport" });
  return {
    http: createHttpTransport({ url: stack.url, pluginKey, actorToken }),
    inProcess: createInProcessTransport({ runtime: stack.runtime, pluginKey, actorToken }),
  };
}

async function failure(call: Promise<unknown>) {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(isToolpactError(error), `expected a ToolpactError, got ${String(error)}`).toBe(true);
  const { code, message, data } = error as { code: string; message: string; data: object };
  return { code, message, data };
}

/** Runs the same failing call through both transports and expects identical errors. */
async function sameFailure(pair: Pair, call: (transport: ToolTransport) => Promise<unknown>, code: string) {
  const overHttp = await failure(call(pair.http));
  const inProcess = await failure(call(pair.inProcess));
  expect(overHttp.code).toBe(code);
  expect(inProcess).toEqual(overHttp);
  return overHttp;
}

const ref = (tool: string): ToolRef => ({ providerId: PROVIDER_ID, tool });

describe("HTTP and in-process transports", () => {
  it("answer the same results", async () => {
    const pair = await transports(ASSISTANT_ID);
    const previews = [await pair.http.preview(ref("list-notes"), { query: "q" }), await pair.inProcess.preview(ref("list-notes"), { query: "q" })];
    expect(previews[1]).toEqual(previews[0]);
    const viaHttp = await pair.http.execute(ref("echo"), { n: 1 });
    const viaProcess = await pair.inProcess.execute(ref("echo"), { n: 1 });
    expect(viaProcess.result).toEqual(viaHttp.result);
    expect(viaProcess.operationId).not.toBe(viaHttp.operationId);
  });

  it("confirm a write the same way: the token from one transport's preview works once", async () => {
    const pair = await transports(ASSISTANT_ID, { sub: "u-transport-write" });
    const input = { title: "via both" };
    const preview = await pair.http.preview(ref("create-note"), input);
    if (!preview.confirmation.required || preview.confirmation.mode !== "token") throw new Error("expected token mode");
    const token = preview.confirmation.token;
    const done = await pair.inProcess.execute(ref("create-note"), input, { confirmationToken: token });
    const used = await sameFailure(pair, (t) => t.execute(ref("create-note"), input, { confirmationToken: token }), "CONFIRMATION_USED");
    expect(used.data).toMatchObject({ operationId: done.operationId });
  });

  it("reject with the same code, message and data", async () => {
    const pair = await transports(ASSISTANT_ID, { sub: "u-transport-errors" });
    await sameFailure(pair, (t) => t.execute(ref("create-note"), { title: "no token" }), "CONFIRMATION_REQUIRED");
    const invalid = await sameFailure(pair, (t) => t.preview(ref("create-note"), { title: 42, extra: true }), "INPUT_INVALID");
    expect((invalid.data as { issues: unknown[] }).issues.length).toBeGreaterThanOrEqual(2);
    await sameFailure(pair, (t) => t.execute(ref("no-such-tool"), {}), "TOOL_NOT_FOUND");
    await sameFailure(pair, (t) => t.execute({ providerId: PROVIDER_ID, tool: "list-notes", version: 9 }, {}), "VERSION_UNSUPPORTED");
    await sameFailure(pair, (t) => t.execute(ref("unhandled"), {}), "HANDLER_MISSING");
    await sameFailure(pair, (t) => t.execute(ref("verified-read"), {}), "VERIFICATION_REQUIRED");
    const body = await sameFailure(pair, (t) => t.execute(ref("echo"), {}, { idempotencyKey: "" }), "INPUT_INVALID");
    expect((body.data as { issues: { path: string }[] }).issues[0]!.path).toBe("/idempotencyKey");

    const input = { title: "fails" };
    const failed = await Promise.all(
      [pair.http, pair.inProcess].map(async (transport) => {
        const preview = await transport.preview(ref("broken"), input);
        const token = preview.confirmation.required && preview.confirmation.mode === "token" ? preview.confirmation.token : "";
        return failure(transport.execute(ref("broken"), input, { confirmationToken: token }));
      }),
    );
    expect(failed[0]).toMatchObject({ code: "PROVIDER_FAILED", data: { errorClass: "RangeError" } });
    // Each transport ran its own operation: equal once the operation ids are set aside.
    const withoutOperation = (error: { code: string; message: string; data: object }) => ({
      ...error,
      message: error.message.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<operation>"),
      data: { ...error.data, operationId: "<operation>" },
    });
    expect(withoutOperation(failed[1]!)).toEqual(withoutOperation(failed[0]!));
  });

  it("refuse the same way for a caller outside its uses and for a bad plugin key", async () => {
    await sameFailure(await transports(NARROW_CALLER_ID), (t) => t.execute(ref("echo"), {}), "PERMISSION_DENIED");
    const forged = `tpk_${"0".repeat(20)}_${"A".repeat(43)}`;
    await sameFailure(await transports(ASSISTANT_ID, { pluginKey: forged }), (t) => t.execute(ref("echo"), {}), "UNAUTHENTICATED");
  });

  it("send the transport's runId with every call (an unknown run: RUN_DENIED)", async () => {
    const pluginKey = keys.t1[ASSISTANT_ID]!.key;
    const actorToken = await mintActorToken(secrets.actorSecret, { sub: "u-run" });
    const pair: Pair = {
      http: createHttpTransport({ url: stack.url, pluginKey, actorToken, runId: "run-1" }),
      inProcess: createInProcessTransport({ runtime: stack.runtime, pluginKey, actorToken, runId: "run-1" }),
    };
    const denied = await sameFailure(pair, (t) => t.execute(ref("echo"), {}), "RUN_DENIED");
    expect(denied.message).toContain('"run-1"');
    const perCall = await sameFailure(pair, (t) => t.preview(ref("echo"), {}, { runId: "run-2" }), "RUN_DENIED");
    expect(perCall.message).toContain('"run-2"');
  });

  it("in process, can take a principal source instead of credentials", async () => {
    const principal = await stack.runtime.authenticate({
      pluginKey: keys.t1[ASSISTANT_ID]!.key,
      actorToken: await mintActorToken(secrets.actorSecret, { sub: "u-principal" }),
    });
    let asked = 0;
    const transport = createInProcessTransport({ runtime: stack.runtime, principal: () => (asked++, principal) });
    const answer = await transport.execute(ref("echo"), { via: "principal" });
    expect(answer.result).toMatchObject({ seen: { userId: "u-principal", callerPluginId: ASSISTANT_ID, tenantId: "t1" } });
    await failure(transport.execute(ref("create-note"), { title: "x" }));
    expect(asked).toBe(2);
  });

  it("refuse a wait on a confirmation request the caller cannot see with the same error", async () => {
    const pair = await transports(ASSISTANT_ID);
    const hidden = await sameFailure(pair, (t) => t.waitForConfirmation("019b0000-0000-7000-8000-000000000000"), "PERMISSION_DENIED");
    expect(hidden.message).toMatch(/no confirmation request/);
  });

  it("wait on a platform request the same way: an aborted round rejects with the reason, a decided one gives the token", async () => {
    await stack.admin("setPolicy", {
      tenantId: "t1",
      policy: { rules: [{ tools: "com.test.*", effects: ["write"], decision: "confirm", mode: "platform" }] },
    });
    try {
      const pair = await transports(ASSISTANT_ID, { sub: "u-transport-platform" });
      const preview = await pair.inProcess.preview(ref("create-note"), { title: "platform" });
      if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
      const { requestId } = preview.confirmation;
      for (const transport of [pair.http, pair.inProcess]) {
        const controller = new AbortController();
        const reason = new Error("the caller stopped waiting");
        setTimeout(() => controller.abort(reason), 200);
        const started = Date.now();
        await expect(transport.waitForConfirmation(requestId, { signal: controller.signal })).rejects.toBe(reason);
        expect(Date.now() - started).toBeLessThan(3_000);
      }
      await stack.runtime.decideConfirmation({ tenantId: "t1", userId: "u-transport-platform" }, requestId, "approve");
      const [overHttp, inProcess] = [await pair.http.waitForConfirmation(requestId), await pair.inProcess.waitForConfirmation(requestId)];
      expect(overHttp.status).toBe("approved");
      expect(inProcess).toEqual(overHttp);
    } finally {
      await stack.admin("setPolicy", { tenantId: "t1", policy: TEST_POLICY });
    }
  });
});
