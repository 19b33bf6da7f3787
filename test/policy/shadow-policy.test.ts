/**
 * A shadow policy: decided beside the live one on every call through the real runtime, never enforced; each
 * disagreement recorded as an activity event (kind "policy", phase "shadow", outcome the shadow's decision).
 */
import { createTestHost, TEST_CALLER_ID, type TestHost } from "@toolpact/runtime/testing";
import type { ActivityEvent } from "@toolpact/runtime";
import { afterEach, describe, expect, it } from "vitest";

const TICKETS = "com.example.tickets";
const manifest = {
  id: TICKETS,
  version: "1.0.0",
  permissions: ["tools:provide"],
  tools: ["create", "close", "delete"].map((name) => ({
    name,
    effect: "write",
    requiresConfirmation: false,
    inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"], additionalProperties: false },
    outputSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"], additionalProperties: false },
  })),
};

const LIVE_RULES = [
  { tools: `${TICKETS}:*`, callers: [TEST_CALLER_ID], decision: "allow" },
  { tools: `${TICKETS}:delete`, decision: "deny" },
] as const;

let host: TestHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

async function start(policy: object): Promise<TestHost> {
  host = await createTestHost({
    policy: policy as never,
    plugins: [
      {
        manifest,
        activate: (sdk) => {
          for (const name of ["create", "close", "delete"]) sdk.tools.provide(name, { execute: () => ({ ok: true }) });
        },
      },
    ],
  });
  return host;
}

/** The shadow events once `count` are written (they are written beside the call, without holding it up). */
async function shadowEvents(running: TestHost, count: number): Promise<ActivityEvent[]> {
  let events: ActivityEvent[] = [];
  for (let attempt = 0; attempt < 200; attempt++) {
    events = (await running.activity({ limit: 100 })).events.filter((event) => event.kind === "policy" && event.phase === "shadow");
    if (events.length >= count) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return events;
}

describe("shadow policy", () => {
  it("records every disagreement without changing what the live policy decides", async () => {
    const running = await start({
      rules: LIVE_RULES,
      shadow: {
        rules: [
          { tools: `${TICKETS}:create`, decision: "deny" },
          { tools: `${TICKETS}:*`, callers: [TEST_CALLER_ID], decision: "allow" },
          { tools: `${TICKETS}:close`, decision: "confirm" },
        ],
      },
    });
    const transport = running.transport();
    // The shadow denies create: it still runs.
    await expect(transport.execute({ providerId: TICKETS, tool: "create" }, { id: "1" })).resolves.toMatchObject({ result: { ok: true } });
    // The shadow would ask for confirmation of close: it still runs without one.
    await expect(transport.execute({ providerId: TICKETS, tool: "close" }, { id: "1" })).resolves.toMatchObject({ result: { ok: true } });
    // The shadow allows delete: the live policy still denies it.
    await expect(transport.execute({ providerId: TICKETS, tool: "delete" }, { id: "1" })).rejects.toMatchObject({ code: "PERMISSION_DENIED" });

    const events = await shadowEvents(running, 3);
    const seen = events.map((event) => [event.tool, event.outcome, event.errorCode, event.callerPluginId, event.actorUserId]);
    expect(seen).toEqual([
      [`${TICKETS}:delete@1`, "allow", undefined, TEST_CALLER_ID, running.userId],
      [`${TICKETS}:close@1`, "confirm", undefined, TEST_CALLER_ID, running.userId],
      [`${TICKETS}:create@1`, "deny", "PERMISSION_DENIED", TEST_CALLER_ID, running.userId],
    ]);
    // The calls' own events are as without a shadow.
    const calls = (await running.activity({ limit: 100 })).events.filter((event) => event.kind === "call");
    expect(calls.map((event) => [event.tool, event.outcome])).toEqual([
      [`${TICKETS}:delete@1`, "denied"],
      [`${TICKETS}:close@1`, "succeeded"],
      [`${TICKETS}:create@1`, "succeeded"],
    ]);
  });

  it("never lifts a confirmation or a verification floor the live policy asks for", async () => {
    const running = await start({
      rules: [...LIVE_RULES, { tools: `${TICKETS}:close`, decision: "confirm" }, { tools: `${TICKETS}:create`, decision: "allow", minVerificationLevel: 3 }],
      shadow: { rules: [{ tools: `${TICKETS}:*`, decision: "allow" }] },
    });
    const transport = running.transport({ actor: { verificationLevel: 1 } });
    await expect(transport.execute({ providerId: TICKETS, tool: "close" }, { id: "1" })).rejects.toMatchObject({ code: "CONFIRMATION_REQUIRED" });
    await expect(transport.execute({ providerId: TICKETS, tool: "create" }, { id: "1" })).rejects.toMatchObject({ code: "VERIFICATION_REQUIRED" });
    const events = await shadowEvents(running, 2);
    expect(events.map((event) => [event.tool, event.outcome])).toEqual([
      [`${TICKETS}:create@1`, "allow"],
      [`${TICKETS}:close@1`, "allow"],
    ]);
  });

  it("records nothing where the shadow agrees", async () => {
    const running = await start({ rules: LIVE_RULES, shadow: { rules: [...LIVE_RULES, { tools: `${TICKETS}:other`, decision: "deny" }] } });
    const transport = running.transport();
    await transport.execute({ providerId: TICKETS, tool: "create" }, { id: "1" });
    await expect(transport.execute({ providerId: TICKETS, tool: "delete" }, { id: "1" })).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    // A disagreeing call afterwards proves the writer ran: only its event is there.
    await running.runtime.admin.setPolicy(running.tenantId, { rules: LIVE_RULES, shadow: { rules: [] } } as never);
    await transport.execute({ providerId: TICKETS, tool: "close" }, { id: "1" });
    const events = await shadowEvents(running, 1);
    expect(events.map((event) => [event.tool, event.outcome])).toEqual([[`${TICKETS}:close@1`, "deny"]]);
  });

  it("refuses an invalid shadow, or a shadow of a shadow, when the policy is set", async () => {
    const running = await start({ rules: LIVE_RULES });
    const set = (policy: object) => running.runtime.admin.setPolicy(running.tenantId, policy as never);
    await expect(set({ rules: LIVE_RULES, shadow: { rules: [{ tools: "*", decision: "maybe" }] } })).rejects.toMatchObject({
      code: "INPUT_INVALID",
      message: expect.stringContaining("/shadow/rules/0/decision"),
    });
    await expect(set({ rules: LIVE_RULES, shadow: { rules: [], shadow: { rules: [] } } })).rejects.toMatchObject({
      message: expect.stringContaining("/shadow/shadow"),
    });
    await expect(set({ rules: LIVE_RULES, shadow: "deny everything" })).rejects.toMatchObject({ code: "INPUT_INVALID" });
  });
});
