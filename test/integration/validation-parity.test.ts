/**
 * Policy, run and recovery shapes are validated in one place (the runtime) with one set of limits, so an
 * HTTP caller and an in-process caller get the same answer to the same input. Each case below was answered
 * differently before (the router's zod and the runtime's checks disagreed); each now gets one answer.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ASSISTANT_ID } from "./support/plugins.js";
import { callerHeadersOf, configureWorld, makeSecrets, startStack, type CallerHeaders, type Stack } from "./support/stack.js";
import { mutate } from "./support/wire.js";

const secrets = makeSecrets();
let dir: string;
let stack: Stack;
let as: CallerHeaders;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-parity-"));
  stack = await startStack({ dbFile: path.join(dir, "parity.db"), secrets });
  as = callerHeadersOf(await configureWorld(stack), secrets.actorSecret);
});

afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What an answer says, reduced to what both paths must agree on: ok, or the code and the issue paths. */
type Answer = { readonly ok: true } | { readonly code: string; readonly paths: readonly string[] };

async function inProcess(work: () => Promise<unknown>): Promise<Answer> {
  try {
    await work();
    return { ok: true };
  } catch (error) {
    const { code, data } = error as { code: string; data: { issues?: { path: string }[] } };
    return { code, paths: (data.issues ?? []).map((issue) => issue.path) };
  }
}

async function overHttp(procedure: string, input: unknown, headers: Record<string, string>): Promise<Answer> {
  const { status, body } = await mutate(stack.url, procedure, input, headers);
  if (status === 200) return { ok: true };
  const data = body.error!.data as { toolpactCode: string; toolpactData?: { issues?: { path: string }[] } };
  return { code: data.toolpactCode, paths: (data.toolpactData?.issues ?? []).map((issue) => issue.path) };
}

const admin = { authorization: `Bearer ${secrets.adminKey}` };
/** A valid tool pattern longer than TOOL_PATTERN_MAX_LENGTH (512). */
const LONG_PATTERN = `com.${"a".repeat(600)}:*`;

describe("HTTP and in-process callers get the same answer", () => {
  it("runs.open with a field a run does not take: refused on both (in process it was accepted)", async () => {
    const principal = await stack.runtime.authenticate({
      pluginKey: (await as(ASSISTANT_ID)).authorization!.replace(/^Bearer /, ""),
      actorToken: (await as(ASSISTANT_ID))["x-toolpact-actor"],
    });
    const options = { allow: ["*"], ttlSeconds: 60, tenantId: "t2" };
    const local = await inProcess(() => stack.runtime.openRun(principal, options as never));
    const remote = await overHttp("runs.open", options, await as(ASSISTANT_ID));
    expect(local).toEqual({ code: "INPUT_INVALID", paths: ["/tenantId"] });
    expect(remote).toEqual(local);
  });

  it("a policy rule whose tool pattern is longer than 512 characters: refused on both (in process it was accepted)", async () => {
    const policy = { rules: [{ tools: LONG_PATTERN, decision: "allow" }] };
    const local = await inProcess(() => stack.runtime.admin.setPolicy("t1", policy as never));
    const remote = await overHttp("admin.setPolicy", { tenantId: "t1", policy }, admin);
    expect(local).toEqual({ code: "INPUT_INVALID", paths: ["/rules/0/tools"] });
    expect(remote).toEqual(local);
  });

  it("a recovery rule whose tool pattern is longer than 512 characters, and one that is no pattern at all", async () => {
    for (const tools of [LONG_PATTERN, "not a pattern"]) {
      const policy = { rules: [{ tools, retry: "none" }] };
      const local = await inProcess(() => stack.runtime.admin.setRecoveryPolicy("t1", policy as never));
      const remote = await overHttp("admin.setRecoveryPolicy", { tenantId: "t1", policy }, admin);
      expect(local).toEqual({ code: "INPUT_INVALID", paths: ["/rules/0/tools"] });
      expect(remote).toEqual(local);
    }
  });

  it("a valid policy and run are accepted on both", async () => {
    const policy = { rules: [{ tools: "*", decision: "allow" }] };
    expect(await inProcess(() => stack.runtime.admin.setPolicy("t2", policy))).toEqual({ ok: true });
    expect(await overHttp("admin.setPolicy", { tenantId: "t2", policy }, admin)).toEqual({ ok: true });
    expect(await overHttp("runs.open", { allow: ["com.test.*"], ttlSeconds: 60 }, await as(ASSISTANT_ID))).toEqual({ ok: true });
  });
});
