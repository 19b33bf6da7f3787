/**
 * The runtime decides: a call that needs confirmation and carries no token runs under a live grant that
 * covers it (same caller, tool, version and schema hash, input within the limits), its use counted by the
 * begin, and its activity event names the grant. Outside the limits, past the calls, under a new version,
 * for another caller, or once the policy no longer allows grants, it asks as before.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Principal, TenantPolicy } from "../../packages/runtime/src/api.js";
import type { GrantRecord } from "../../packages/runtime/src/store/store.js";
import { ASSISTANT, NOTES, TENANT, createFixture, UNTRUSTED, type RuntimeFixture } from "../../packages/runtime/src/testing/fixtures.js";
import { sampleGrant } from "../../packages/runtime/src/testing/instances.js";

const create = { providerId: NOTES, tool: "create-record", version: 1 };
const GRANTING: TenantPolicy = {
  rules: [
    { tools: "com.example.notes:create-record", decision: "confirm", callers: [ASSISTANT, UNTRUSTED], grants: { maxCalls: 10 } },
    { tools: "*", decision: "allow" },
  ],
};

let fx: RuntimeFixture | undefined;
afterEach(async () => {
  await fx?.dispose();
  fx = undefined;
});

async function grantFor(made: RuntimeFixture, principal: Principal, overrides: Partial<GrantRecord> = {}): Promise<GrantRecord> {
  const record = sampleGrant(made, principal, { constraintsJson: JSON.stringify({ properties: { title: { const: "ops" } } }), maxCalls: 3, ...overrides });
  await made.store.insertGrant(record);
  return record;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => "ran",
    (error: { code?: string }) => error.code ?? "no code",
  );
}

describe("calls under a grant", () => {
  it("run without a token while the grant covers them, each event naming the grant; then ask again", async () => {
    const made = (fx = await createFixture({ policy: GRANTING }));
    const principal = await made.principal(ASSISTANT);
    const granted = await grantFor(made, principal);
    for (let i = 0; i < 3; i++) expect(await codeOf(made.runtime.execute(principal, create, { title: "ops" }))).toBe("ran");
    expect(await codeOf(made.runtime.execute(principal, create, { title: "ops" }))).toBe("CONFIRMATION_REQUIRED");
    expect(made.handlers.executed).toHaveLength(3);
    const events = (await made.runtime.admin.listActivity(TENANT, { limit: 100 })).events.filter((event) => event.kind === "call");
    expect(events.filter((event) => event.grantId === granted.grantId && event.outcome === "succeeded")).toHaveLength(3);
  });

  it("ask as before outside the limits, for another caller, under a new version, or once the policy drops grants", async () => {
    const made = (fx = await createFixture({ policy: GRANTING }));
    const principal = await made.principal(ASSISTANT);
    await grantFor(made, principal, { maxCalls: 100 });
    expect(await codeOf(made.runtime.execute(principal, create, { title: "dev" }))).toBe("CONFIRMATION_REQUIRED");
    expect(await codeOf(made.runtime.execute(await made.principal(UNTRUSTED), create, { title: "ops" }))).toBe("CONFIRMATION_REQUIRED");
    expect(await codeOf(made.runtime.execute(principal, { ...create, version: 2 }, { title: "ops" }))).toBe("CONFIRMATION_REQUIRED");
    expect(await codeOf(made.runtime.execute(principal, create, { title: "ops" }))).toBe("ran");
    await made.runtime.admin.setPolicy(TENANT, { rules: [{ tools: "*", decision: "confirm" }] });
    expect(await codeOf(made.runtime.execute(principal, create, { title: "ops" }))).toBe("CONFIRMATION_REQUIRED");
    expect(made.handlers.executed).toHaveLength(1);
  });

  it("stop at once when the user revokes the grant, and when the schema hash changes", async () => {
    const made = (fx = await createFixture({ policy: GRANTING }));
    const principal = await made.principal(ASSISTANT);
    const granted = await grantFor(made, principal);
    expect(await made.store.revokeGrant(TENANT, principal.actor.userId, granted.grantId, made.now())).toBe(true);
    expect(await codeOf(made.runtime.execute(principal, create, { title: "ops" }))).toBe("CONFIRMATION_REQUIRED");
    await grantFor(made, principal, { schemaHash: "the schema before" });
    expect(await codeOf(made.runtime.execute(principal, create, { title: "ops" }))).toBe("CONFIRMATION_REQUIRED");
    expect(made.handlers.executed).toHaveLength(0);
  });
});
