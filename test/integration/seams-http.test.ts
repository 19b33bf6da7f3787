/**
 * The runtime's seams over HTTP: runs, gate and hook activation, the outbox, recovery policy and rate
 * limits, each reached through the tRPC API of a real server on 127.0.0.1:0 with a real SQLite file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ASSISTANT_ID, manifest, OTHER_CALLER_ID, PROVIDER_ID } from "./support/plugins.js";
import { callerHeadersOf, configureWorld, makeSecrets, startStack, TEST_POLICY, type Stack, type WorldKeys } from "./support/stack.js";
import { decodeJws, mintActorToken, type ActorTokenSpec } from "./support/tokens.js";
import { mutate, ok, query, type WireResponse } from "./support/wire.js";

const SEAMS_ID = "com.test.seams";
/** Previews one caller and actor may make per window before RATE_LIMITED. */
const PREVIEW_LIMIT = 5;

let dir: string;
let stack: Stack;
let keys: WorldKeys;
const secrets = makeSecrets();
let clockOffset = 0;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-seams-"));
  stack = await startStack({
    dbFile: path.join(dir, "toolpact.db"),
    secrets,
    clock: () => Date.now() + clockOffset,
    runtimeOptions: { rateLimits: { previewsPerMinute: PREVIEW_LIMIT, pendingConfirmations: 3 } },
    setup: (runtime) => {
      runtime.registerPlugin(
        manifest({
          id: SEAMS_ID,
          version: "1.0.0",
          permissions: ["tools:gate", "tools:observe"],
          gates: [{ name: "stop-sign", appliesTo: [`${PROVIDER_ID}:echo`] }],
          hooks: [{ name: "notify", point: "afterTool", appliesTo: [`${PROVIDER_ID}:list-notes`] }],
        }),
      );
      const sdk = runtime.sdkFor(SEAMS_ID);
      sdk.gates.provide("stop-sign", (call) =>
        (call.input as { stop?: boolean }).stop === true ? { decision: "block", reason: "stop sign" } : { decision: "allow" },
      );
      sdk.hooks.provide("notify", (call) => [{ kind: "notify-owner", payload: { tool: call.tool, outcome: call.outcome } }]);
    },
  });
  keys = await configureWorld(stack);
  await stack.admin("installPlugin", { tenantId: "t1", pluginId: SEAMS_ID });
});

beforeEach(() => {
  clockOffset = 0;
});

afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A caller's headers; each test uses its own user so rate limits of one do not touch another. */
const as = (caller: string, spec: ActorTokenSpec = {}) => callerHeadersOf(keys, secrets.actorSecret)(caller, spec);

const ref = (tool: string) => ({ providerId: PROVIDER_ID, tool });

function codeOf(response: WireResponse): unknown {
  return response.body.error?.data.toolpactCode;
}

function expectRefused(response: WireResponse, code: string, status: number): void {
  expect(response.body.error, JSON.stringify(response.body)).toBeDefined();
  expect(codeOf(response)).toBe(code);
  expect(response.status).toBe(status);
}

const adminHeaders = () => ({ authorization: `Bearer ${secrets.adminKey}` });

describe("runs over HTTP", () => {
  it("a call inside the run's allow list runs; outside it is RUN_DENIED", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-run-1" });
    const run = ok<{ runId: string; expiresAt: string }>(
      await mutate(stack.url, "runs.open", { allow: [`${PROVIDER_ID}:list-notes`], ttlSeconds: 60 }, headers),
    );
    expect(run.runId).toBeTypeOf("string");
    ok(await mutate(stack.url, "tools.execute", { ref: ref("list-notes"), input: {}, runId: run.runId }, headers));
    expectRefused(await mutate(stack.url, "tools.execute", { ref: ref("echo"), input: {}, runId: run.runId }, headers), "RUN_DENIED", 403);
    expectRefused(await mutate(stack.url, "tools.preview", { ref: ref("create-note"), input: { title: "x" }, runId: run.runId }, headers), "RUN_DENIED", 403);
  });

  it("tokens minted inside a run carry it, and are refused outside that run", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-run-2" });
    const run = ok<{ runId: string }>(await mutate(stack.url, "runs.open", { allow: [`${PROVIDER_ID}:*`], ttlSeconds: 60 }, headers));
    const input = { title: "in a run" };
    const preview = ok<{ confirmation: { token: string } }>(
      await mutate(stack.url, "tools.preview", { ref: ref("create-note"), input, runId: run.runId }, headers),
    );
    expect(decodeJws(preview.confirmation.token).payload.run).toBe(run.runId);
    const outside = await mutate(stack.url, "tools.execute", { ref: ref("create-note"), input, confirmationToken: preview.confirmation.token }, headers);
    expect(outside.body.error, JSON.stringify(outside.body)).toBeDefined();
    ok(await mutate(stack.url, "tools.execute", { ref: ref("create-note"), input, confirmationToken: preview.confirmation.token, runId: run.runId }, headers));
  });

  it("a closed, expired or foreign run is RUN_DENIED", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-run-3" });
    const open = async () => ok<{ runId: string }>(await mutate(stack.url, "runs.open", { allow: ["*"], ttlSeconds: 60 }, headers)).runId;
    const listNotes = (runId: string, h = headers) => mutate(stack.url, "tools.execute", { ref: ref("list-notes"), input: {}, runId }, h);

    const closed = await open();
    ok(await mutate(stack.url, "runs.close", { runId: closed }, headers));
    expectRefused(await listNotes(closed), "RUN_DENIED", 403);

    const foreign = await open();
    expectRefused(await listNotes(foreign, await as(OTHER_CALLER_ID, { sub: "u-run-3" })), "RUN_DENIED", 403);
    expectRefused(await listNotes(foreign, await as(ASSISTANT_ID, { sub: "u-run-3b" })), "RUN_DENIED", 403);
    // Nobody else may close it either.
    expect((await mutate(stack.url, "runs.close", { runId: foreign }, await as(OTHER_CALLER_ID, { sub: "u-run-3" }))).body.error).toBeDefined();
    ok(await listNotes(foreign));

    const expiring = await open();
    clockOffset = 61_000;
    expectRefused(await listNotes(expiring), "RUN_DENIED", 403);
    expectRefused(await listNotes("no-such-run"), "RUN_DENIED", 403);
  });

  it("a run cannot widen a denial: allow '*' still meets the policy's deny", async () => {
    await stack.admin("setPolicy", {
      tenantId: "t1",
      policy: { ...TEST_POLICY, rules: [...TEST_POLICY.rules, { tools: `${PROVIDER_ID}:echo`, decision: "deny" }] },
    });
    try {
      const headers = await as(ASSISTANT_ID, { sub: "u-run-4" });
      const run = ok<{ runId: string }>(await mutate(stack.url, "runs.open", { allow: ["*"], ttlSeconds: 60 }, headers));
      expectRefused(await mutate(stack.url, "tools.execute", { ref: ref("echo"), input: {}, runId: run.runId }, headers), "PERMISSION_DENIED", 403);
    } finally {
      await stack.admin("setPolicy", { tenantId: "t1", policy: TEST_POLICY });
    }
  });

  it("runs.open checks its body: no allow list, a bad TTL, or an identity field is INPUT_INVALID", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-run-5" });
    expectRefused(await mutate(stack.url, "runs.open", { allow: [], ttlSeconds: 60 }, headers), "INPUT_INVALID", 400);
    expectRefused(await mutate(stack.url, "runs.open", { allow: ["*"], ttlSeconds: 0 }, headers), "INPUT_INVALID", 400);
    expectRefused(await mutate(stack.url, "runs.open", { allow: ["*"], ttlSeconds: 60, userId: "someone" }, headers), "INPUT_INVALID", 400);
    expectRefused(await mutate(stack.url, "runs.open", { allow: ["*"], ttlSeconds: 60 }, {}), "UNAUTHENTICATED", 401);
  });
});

describe("rate limits over HTTP", () => {
  it("previews beyond the limit per caller and actor are RATE_LIMITED (429); another actor is unaffected", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-rate" });
    const answers: WireResponse[] = [];
    for (let i = 0; i <= PREVIEW_LIMIT; i++) {
      answers.push(await mutate(stack.url, "tools.preview", { ref: ref("list-notes"), input: {} }, headers));
    }
    for (const answer of answers.slice(0, PREVIEW_LIMIT)) ok(answer);
    const limited = answers[PREVIEW_LIMIT]!;
    expectRefused(limited, "RATE_LIMITED", 429);
    expect(limited.body.error?.data.toolpactData).toMatchObject({ retryAfterMs: expect.any(Number) });
    ok(await mutate(stack.url, "tools.preview", { ref: ref("list-notes"), input: {} }, await as(ASSISTANT_ID, { sub: "u-rate-other" })));
  });

  it("platform confirmation requests pending at once beyond the limit are RATE_LIMITED; cancelling one frees a slot", async () => {
    await stack.admin("setPolicy", {
      tenantId: "t1",
      policy: { rules: [{ tools: "com.test.*", effects: ["write"], decision: "confirm", mode: "platform" }] },
    });
    try {
      const headers = await as(ASSISTANT_ID, { sub: "u-pending" });
      const previewNote = (i: number) => mutate(stack.url, "tools.preview", { ref: ref("create-note"), input: { title: `pending ${i}` } }, headers);
      const requestIds: string[] = [];
      for (let i = 0; i < 3; i++) requestIds.push(ok<{ confirmation: { requestId: string } }>(await previewNote(i)).confirmation.requestId);
      expectRefused(await previewNote(3), "RATE_LIMITED", 429);
      ok(await mutate(stack.url, "confirmations.cancel", { requestId: requestIds[0] }, headers));
      ok(await previewNote(4));
    } finally {
      await stack.admin("setPolicy", { tenantId: "t1", policy: TEST_POLICY });
    }
  });
});

describe("gates, hooks and the outbox over HTTP", () => {
  it("admin.setActivation turns a declared gate on for a tenant; an undeclared name is CAPABILITY_UNDECLARED", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-gate" });
    ok(await mutate(stack.url, "tools.execute", { ref: ref("echo"), input: { stop: true } }, headers));
    await stack.admin("setActivation", { tenantId: "t1", pluginId: SEAMS_ID, gates: ["stop-sign"], hooks: ["notify"] });
    expectRefused(await mutate(stack.url, "tools.execute", { ref: ref("echo"), input: { stop: true } }, headers), "GATE_BLOCKED", 403);
    ok(await mutate(stack.url, "tools.execute", { ref: ref("echo"), input: { stop: false } }, headers));
    expectRefused(
      await mutate(stack.url, "admin.setActivation", { tenantId: "t1", pluginId: SEAMS_ID, gates: ["stop-sign", "made-up"] }, adminHeaders()),
      "CAPABILITY_UNDECLARED",
      403,
    );
    // Admin procedures need the admin key, not a plugin key.
    expectRefused(await mutate(stack.url, "admin.setActivation", { tenantId: "t1", pluginId: SEAMS_ID, gates: [] }, headers), "UNAUTHENTICATED", 401);
  });

  it("a hook's staged reaction is claimed from the outbox and acknowledged once", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-hook" });
    await stack.admin("setActivation", { tenantId: "t1", pluginId: SEAMS_ID, gates: ["stop-sign"], hooks: ["notify"] });
    const { operationId } = ok<{ operationId: string }>(await mutate(stack.url, "tools.execute", { ref: ref("list-notes"), input: {} }, headers));
    const claim = (limit: number) => mutate(stack.url, "outbox.claim", { tenantId: "t1", limit, leaseSeconds: 60 }, adminHeaders());
    const items = ok<{ id: string; kind: string; payload: unknown; operationId: string; hook: string }[]>(await claim(100));
    const mine = items.filter((item) => item.operationId === operationId);
    expect(mine).toEqual([
      expect.objectContaining({ kind: "notify-owner", hook: `${SEAMS_ID}:notify`, payload: expect.objectContaining({ outcome: "succeeded" }) }),
    ]);
    // Claimed: not handed out again while the claim holds.
    expect(ok<{ id: string }[]>(await claim(100)).some((item) => item.id === mine[0]!.id)).toBe(false);
    ok(await mutate(stack.url, "outbox.ack", { tenantId: "t1", ids: [mine[0]!.id] }, adminHeaders()));
    // Another tenant's admin call sees none of t1's reactions; a plugin key cannot claim.
    expect(ok<unknown[]>(await mutate(stack.url, "outbox.claim", { tenantId: "t2", limit: 100, leaseSeconds: 60 }, adminHeaders()))).toEqual([]);
    expectRefused(await mutate(stack.url, "outbox.claim", { tenantId: "t1", limit: 1, leaseSeconds: 60 }, headers), "UNAUTHENTICATED", 401);
  });

  it("admin.setRecoveryPolicy rejects a policy that exceeds tools' declared recovery, naming every mismatch", async () => {
    const refused = await mutate(
      stack.url,
      "admin.setRecoveryPolicy",
      { tenantId: "t1", policy: { rules: [{ tools: `${PROVIDER_ID}:*`, retry: "reinvoke" }] } },
      adminHeaders(),
    );
    expect(refused.body.error, JSON.stringify(refused.body)).toBeDefined();
    expect(refused.body.error?.message).toContain(`${PROVIDER_ID}:create-note@1`);
    expect(refused.body.error?.message).toContain(`${PROVIDER_ID}:list-notes@1`);
    ok(
      await mutate(stack.url, "admin.setRecoveryPolicy", { tenantId: "t1", policy: { rules: [{ tools: `${PROVIDER_ID}:*`, retry: "none" }] } }, adminHeaders()),
    );
  });
});
