/**
 * A platform preview answers the open request bound to exactly the same call instead of opening another
 * (what lets an MCP client retry a call after the user approved it). Everything that tries to widen that:
 * another input, actor, caller, tool version or run; a request that was denied, cancelled or expired;
 * a token already used.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PreviewResult } from "@toolpact/contract";
import type { Principal } from "../api.js";
import { NOTES, TENANT, UNTRUSTED, createFixture, rejection, type RuntimeFixture } from "../testing/fixtures.js";

const create = { providerId: NOTES, tool: "create-record", version: 1 };
const person = { tenantId: TENANT, userId: "alice" };

let fx: RuntimeFixture;
let caller: Principal;
beforeEach(async () => {
  fx = await createFixture({ runtime: { recoveryIntervalMs: 0 } });
  caller = await fx.principal(UNTRUSTED);
});
afterEach(async () => {
  await fx.dispose();
});

type Platform = Extract<PreviewResult["confirmation"], { mode: "platform" }>;

/** The platform request a preview answers. */
async function ask(principal: Principal, input: unknown = { title: "Q3" }, options: { runId?: string } = {}, ref: typeof create = create): Promise<Platform> {
  const preview = await fx.runtime.preview(principal, ref, input, options);
  if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
  return preview.confirmation;
}

describe("a preview of the same call", () => {
  it("answers the pending request again, on this instance and on another, and opens no other", async () => {
    const first = await ask(caller);
    expect(await ask(caller)).toEqual(first);
    // the canonical input: key order does not make another call
    const v2 = { ...create, version: 2 };
    expect((await ask(caller, { tags: ["a"], title: "Q3" }, {}, v2)).requestId).toBe((await ask(caller, { title: "Q3", tags: ["a"] }, {}, v2)).requestId);
    const other = await fx.reopen({ recoveryIntervalMs: 0 });
    expect((await other.preview(caller, create, { title: "Q3" })).confirmation).toEqual(first);
    // the provider's own preview still runs each time; the page keeps the first one's
    expect(fx.handlers.previewed.filter((seen) => seen.tool === "create-record")).toHaveLength(3);
  });

  it("once approved, answers the approved request (with its token's expiry) until that token expires", async () => {
    const first = await ask(caller);
    await fx.runtime.decideConfirmation(person, first.requestId, "approve");
    const again = await ask(caller);
    expect(again.requestId).toBe(first.requestId);
    const status = await fx.runtime.getConfirmation(caller, first.requestId);
    expect(status).toMatchObject({ status: "approved", expiresAt: again.expiresAt });
    fx.advance(Date.parse(again.expiresAt) - fx.now() + 1);
    expect((await ask(caller)).requestId).not.toBe(first.requestId);
  });

  it("after the approved token was used, still answers approved with the token, and the token still works once", async () => {
    const first = await ask(caller);
    await fx.runtime.decideConfirmation(person, first.requestId, "approve");
    const token = ((await fx.runtime.waitConfirmation(caller, first.requestId, { timeoutMs: 0 })) as { token: string }).token;
    const done = await fx.runtime.execute(caller, create, { title: "Q3" }, { confirmationToken: token, idempotencyKey: "retry" });
    expect((await ask(caller)).requestId).toBe(first.requestId);
    const status = await fx.runtime.getConfirmation(caller, first.requestId);
    expect(status).toMatchObject({ status: "approved", token });
    // with the same idempotency key: the recorded outcome; without: the token is spent
    await expect(fx.runtime.execute(caller, create, { title: "Q3" }, { confirmationToken: token, idempotencyKey: "retry" })).resolves.toEqual(done);
    expect((await rejection(fx.runtime.execute(caller, create, { title: "Q3" }, { confirmationToken: token }))).code).toBe("CONFIRMATION_USED");
    expect(fx.handlers.executed).toHaveLength(1);
  });

  it("never answers a request that was denied, cancelled or expired", async () => {
    const denied = await ask(caller, { title: "denied" });
    await fx.runtime.decideConfirmation(person, denied.requestId, "deny");
    expect((await ask(caller, { title: "denied" })).requestId).not.toBe(denied.requestId);

    const cancelled = await ask(caller, { title: "cancelled" });
    await fx.runtime.cancelConfirmation(caller, cancelled.requestId);
    expect((await ask(caller, { title: "cancelled" })).requestId).not.toBe(cancelled.requestId);

    const expired = await ask(caller, { title: "expired" });
    fx.advance(301_000);
    const fresh = await ask(caller, { title: "expired" });
    expect(fresh.requestId).not.toBe(expired.requestId);
    expect((await fx.runtime.getConfirmation(caller, expired.requestId)).status).toBe("expired");
  });
});

describe("a preview of another call", () => {
  it("never answers a request bound to another input, actor, caller, tool version or run", async () => {
    const first = await ask(caller);
    await fx.runtime.decideConfirmation(person, first.requestId, "approve");
    const others = [
      await ask(caller, { title: "Q4" }),
      await ask(await fx.principal(UNTRUSTED, { sub: "bob" })),
      await ask(caller, { title: "Q3" }, {}, { ...create, version: 2 }),
    ];
    const run = await fx.runtime.openRun(caller, { allow: [`${NOTES}:*`], ttlSeconds: 60 });
    others.push(await ask(caller, { title: "Q3" }, { runId: run.runId }));
    for (const other of others) expect(other.requestId).not.toBe(first.requestId);
    expect(new Set(others.map((other) => other.requestId)).size).toBe(others.length);
  });

  it("gives another caller or actor nothing of the approved request: not its status, not its token", async () => {
    const first = await ask(caller);
    await fx.runtime.decideConfirmation(person, first.requestId, "approve");
    const bob = await fx.principal(UNTRUSTED, { sub: "bob" });
    expect((await rejection(fx.runtime.getConfirmation(bob, first.requestId))).code).toBe("PERMISSION_DENIED");
    expect((await rejection(fx.runtime.waitConfirmation(await fx.principal(), first.requestId, { timeoutMs: 0 }))).code).toBe("PERMISSION_DENIED");
  });
});
