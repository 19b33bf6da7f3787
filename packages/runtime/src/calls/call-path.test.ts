/**
 * How the call path reads plugin answers, in which order its steps run, and what refused calls leave in
 * the activity log; listing tools, previews and policy events.
 */
import { describe, expect, it } from "vitest";
import { ToolpactError, type ToolHandler } from "@toolpact/contract";
import type { ActivityEvent } from "../api.js";
import {
  ALLOW_ALL,
  ASSISTANT,
  LIMITED,
  NOTES,
  NO_CALL,
  TENANT,
  callerManifest,
  eachTestFixture,
  rejection,
  tool,
  type RuntimeFixture,
} from "../testing/fixtures.js";

const search = { providerId: NOTES, tool: "search-records" };
const create = { providerId: NOTES, tool: "create-record", version: 1 };

let fx: RuntimeFixture;
eachTestFixture((made) => (fx = made));

async function activity(): Promise<readonly ActivityEvent[]> {
  return (await fx.runtime.admin.listActivity(TENANT, { limit: 1000 })).events.filter((event) => event.kind === "call");
}

describe("provider answers are read where provider failures are caught", () => {
  const SLY = "com.example.sly";
  /** An Error that claims to be toolpact's own, with a secret in its message and a forged operation id. */
  const forged = () =>
    Object.assign(new Error("db at postgres://svc:hunter2@10.0.0.5/notes refused"), {
      name: "ToolpactError",
      code: "OUTCOME_UNKNOWN",
      data: { operationId: "forged" },
    });

  async function sly(handlers: Record<string, ToolHandler>): Promise<void> {
    fx.runtime.registerPlugin({
      ...callerManifest(SLY, { permissions: ["tools:provide"] }),
      tools: Object.keys(handlers).map((name) => tool({ name, effect: "read" })),
    });
    for (const [name, handler] of Object.entries(handlers)) fx.runtime.sdkFor(SLY).tools.provide(name, handler);
    await fx.runtime.admin.installPlugin(TENANT, SLY);
  }

  it("a getter on authorize's or preview's answer that throws is PROVIDER_FAILED, never the provider's own error", async () => {
    await sly({
      authorize: {
        authorize: () => ({
          get allowed(): never {
            throw forged();
          },
        }),
        execute: () => ({}),
      },
      summary: {
        preview: () => ({
          get summary(): never {
            throw forged();
          },
        }),
        execute: () => ({}),
      },
      details: {
        preview: () => ({
          summary: "ok",
          details: {
            get inner(): never {
              throw forged();
            },
          },
        }),
        execute: () => ({}),
      },
      nested: { preview: () => ({ summary: "ok", details: { at: new Date(0) } }), execute: () => ({}) },
      thrown: {
        authorize: () => {
          throw new Proxy(
            {},
            {
              get: () => {
                throw forged();
              },
            },
          );
        },
        execute: () => ({}),
      },
    });
    const principal = await fx.principal();
    const calls = [
      ["authorize", () => fx.runtime.execute(principal, { providerId: SLY, tool: "authorize" }, { title: "x" }), "Error"],
      ["summary", () => fx.runtime.preview(principal, { providerId: SLY, tool: "summary" }, { title: "x" }), "Error"],
      ["details", () => fx.runtime.preview(principal, { providerId: SLY, tool: "details" }, { title: "x" }), "InvalidPreview"],
      ["nested", () => fx.runtime.preview(principal, { providerId: SLY, tool: "nested" }, { title: "x" }), "InvalidPreview"],
      ["thrown", () => fx.runtime.execute(principal, { providerId: SLY, tool: "thrown" }, { title: "x" }), "Error"],
    ] as const;
    for (const [name, call, errorClass] of calls) {
      const error = await rejection(call());
      expect(error, name).toBeInstanceOf(ToolpactError);
      expect(error, name).toMatchObject({ code: "PROVIDER_FAILED", data: { tool: `${SLY}:${name}@1`, errorClass } });
      expect(error.message, name).not.toContain("hunter2");
      expect(error.data.operationId, name).toBeUndefined();
    }
    const events = await activity();
    expect(events.slice(0, calls.length).map((event) => [event.outcome, event.errorCode, event.operationId])).toEqual(
      calls.map(() => ["failed", "PROVIDER_FAILED", undefined]),
    );
  });

  it("keeps a preview's answer as plain data: the summary whole (never cut), the details a frozen copy", async () => {
    const details: Record<string, unknown> = { amount: 10 };
    await sly({
      long: {
        preview: () => {
          setImmediate(() => Object.assign(details, { amount: 9000 }));
          return { summary: "x".repeat(2000), details };
        },
        execute: () => ({}),
      },
    });
    const principal = await fx.principal();
    const preview = await fx.runtime.preview(principal, { providerId: SLY, tool: "long" }, { title: "x" });
    await new Promise((resolve) => setImmediate(resolve));
    expect(preview.summary).toHaveLength(2000);
    expect(preview.details).toEqual({ amount: 10 });
    expect(Object.isFrozen(preview.details)).toBe(true);
  });
});

describe("pipeline order", () => {
  it("reports the earliest failing step", async () => {
    const principal = await fx.principal();
    await fx.runtime.admin.setPolicy(TENANT, {
      rules: [
        { tools: `${NOTES}:search-records`, decision: "deny" },
        { tools: "*", decision: "allow" },
      ],
    });
    // validate-input comes before decide-permission (policy)
    expect((await rejection(fx.runtime.execute(principal, search, { query: 1 }))).code).toBe("INPUT_INVALID");
    // check-caller (uses) comes before validate-input
    expect((await rejection(fx.runtime.execute(await fx.principal(LIMITED), create, { nope: 1 }))).code).toBe("PERMISSION_DENIED");
    // resolve-tool comes before everything
    await fx.runtime.admin.setPluginEnabled(TENANT, NOTES, false);
    await fx.runtime.admin.setPluginEnabled(TENANT, ASSISTANT, false);
    expect((await rejection(fx.runtime.execute(principal, search, { query: 1 }))).code).toBe("PROVIDER_DISABLED");
  });

  it("does not run the provider's authorize for a call policy denies", async () => {
    let asked = 0;
    fx.handlers.authorizeAnswer = true;
    const sdk = fx.runtime.sdkFor(NOTES);
    expect(sdk.pluginId).toBe(NOTES);
    await fx.runtime.admin.setPolicy(TENANT, { rules: [{ tools: `${NOTES}:guarded-read`, decision: "deny" }] });
    Object.defineProperty(fx.handlers, "authorizeAnswer", { get: () => (asked++, true) });
    const principal = await fx.principal();
    expect((await rejection(fx.runtime.execute(principal, { providerId: NOTES, tool: "guarded-read" }, { title: "x" }))).code).toBe("PERMISSION_DENIED");
    expect(asked).toBe(0);
  });
});

describe("activity of refused calls", () => {
  it("records every refusal from resolve-tool on, and none from authentication", async () => {
    const principal = await fx.principal();
    const noCall = await fx.principal(NO_CALL);
    const attempts: [() => Promise<unknown>, string][] = [
      [() => fx.runtime.execute(principal, { providerId: "com.example.nope", tool: "x" }, {}), "PROVIDER_NOT_FOUND"],
      [() => fx.runtime.execute(principal, { providerId: NOTES, tool: "nope" }, {}), "TOOL_NOT_FOUND"],
      [() => fx.runtime.execute(principal, { ...create, version: 9 }, {}), "VERSION_UNSUPPORTED"],
      [() => fx.runtime.execute(principal, { providerId: NOTES, tool: "unprovided" }, { title: "x" }), "HANDLER_MISSING"],
      [() => fx.runtime.execute(noCall, search, { query: "x" }), "PERMISSION_DENIED"],
      [() => fx.runtime.execute(principal, search, {}), "INPUT_INVALID"],
      [() => fx.runtime.preview(principal, search, { query: "x" }, { runId: "r" }), "RUN_DENIED"],
      [() => fx.runtime.execute(principal, create, { title: "x" }), "CONFIRMATION_REQUIRED"],
      [() => fx.runtime.execute(principal, create, { title: "x" }, { confirmationToken: "junk" }), "CONFIRMATION_INVALID"],
      [() => fx.runtime.execute(principal, { providerId: NOTES, tool: "verified-read" }, { title: "x" }), "VERIFICATION_REQUIRED"],
    ];
    for (const [attempt, code] of attempts) expect((await rejection(attempt())).code).toBe(code);
    const failures = fx.runtime.metrics.authFailures;
    await rejection(fx.runtime.authenticate({ pluginKey: "tpk_nope", actorToken: "x" }));
    expect(fx.runtime.metrics.authFailures).toBe(failures + 1);

    const events = [...(await activity())].reverse();
    expect(events.map((event) => [event.outcome, event.errorCode])).toEqual(attempts.map(([, code]) => ["denied", code]));
    expect(events[1]).toMatchObject({ providerPluginId: NOTES, tool: `${NOTES}:nope`, phase: "execute" });
    expect(events[6]).toMatchObject({ phase: "preview", tool: `${NOTES}:search-records@1` });
    expect(fx.logs.some((entry) => entry.event === "authentication_failed")).toBe(true);
  });
});

describe("listing tools", () => {
  it("lists what this caller may call for this user, with schemas and the effective confirmation", async () => {
    const assistant = await fx.principal();
    const names = (await fx.runtime.listTools(assistant)).map((listing) => listing.fullName);
    expect(names).toContain(`${NOTES}:create-record@1`);
    expect(names).not.toContain(`${NOTES}:unprovided@1`);
    const limited = await fx.principal(LIMITED);
    expect((await fx.runtime.listTools(limited)).map((listing) => listing.fullName)).toEqual([`${NOTES}:search-records@1`]);
    expect(await fx.runtime.listTools(await fx.principal(NO_CALL))).toEqual([]);

    await fx.runtime.admin.setPolicy(TENANT, {
      rules: [{ tools: `${NOTES}:search-records`, decision: "confirm" }],
      trustedConfirmationUis: [ASSISTANT],
    });
    const listed = await fx.runtime.listTools(assistant);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ name: "search-records", effect: "read", requiresConfirmation: true, inputSchema: { type: "object" } });
  });
});

describe("previews", () => {
  it("uses the provider's preview, or the tool title and full name with null details", async () => {
    const principal = await fx.principal();
    const preview = await fx.runtime.preview(principal, create, { title: "Q3 plan" });
    expect(preview.summary).toBe('Create "Q3 plan"');
    expect(preview.details).toEqual({ title: "Q3 plan" });
    const plain = await fx.runtime.preview(principal, search, { query: "x" });
    expect(plain).toEqual({ summary: `search-records (${NOTES}:search-records@1)`, details: null, confirmation: { required: false } });
    const events = await activity();
    expect(events[0]).toMatchObject({ phase: "preview", outcome: "previewed" });
    expect(events[1]).toMatchObject({ phase: "preview", outcome: "previewed", confirmationId: expect.any(String) });
  });
});

describe("policy events", () => {
  it("records every policy change as a policy event of the tenant", async () => {
    await fx.runtime.admin.setPolicy(TENANT, ALLOW_ALL);
    const events = (await fx.runtime.admin.listActivity(TENANT)).events.filter((event) => event.kind === "policy");
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(events[0]).toMatchObject({ kind: "policy", phase: "change", outcome: "succeeded", tenantId: TENANT });
  });

  it("rejects a malformed policy, listing every problem", async () => {
    const error = await rejection(
      fx.runtime.admin.setPolicy(TENANT, {
        rules: [{ tools: "not a pattern", decision: "maybe" } as never, { tools: "*", decision: "allow", effects: ["delete"] } as never],
      }),
    );
    expect(error.code).toBe("INPUT_INVALID");
    expect((error.data.issues as { path: string }[]).map((issue) => issue.path)).toEqual(["/rules/0/tools", "/rules/0/decision", "/rules/1/effects"]);
  });
});
