import { randomBytes } from "node:crypto";
import { SignJWT, decodeJwt, decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import type { Principal } from "../api.js";
import {
  ALLOW_ALL,
  ASSISTANT,
  NOTES,
  OTHER_TENANT,
  TENANT,
  configureTenant,
  eachTestFixtureWithAlice,
  notesManifest,
  rejection,
  tool,
  type RuntimeFixture,
} from "../testing/fixtures.js";

const create = { providerId: NOTES, tool: "create-record", version: 1 };
const createV2 = { providerId: NOTES, tool: "create-record", version: 2 };
const search = { providerId: NOTES, tool: "search-records" };

let fx: RuntimeFixture;
let alice: Principal;
eachTestFixtureWithAlice((made) => ({ fx, alice } = made));

async function tokenFor(principal: Principal = alice, input: unknown = { title: "Q3 plan" }, ref = create): Promise<string> {
  const preview = await fx.runtime.preview(principal, ref, input);
  if (!preview.confirmation.required || preview.confirmation.mode !== "token") throw new Error("expected a token");
  return preview.confirmation.token;
}

/** Re-signs `claims` and `header` with an HS256 key: for forging tests. */
function sign(header: Record<string, unknown>, claims: Record<string, unknown>, key: Uint8Array): Promise<string> {
  return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(key);
}

describe("minting", () => {
  it("mints an HS256 compact JWS with kid and typ, bound by the designed claims", async () => {
    const before = Math.floor(fx.now() / 1000);
    const preview = await fx.runtime.preview(alice, create, { title: "Q3 plan" });
    expect(preview.confirmation).toMatchObject({ required: true, mode: "token" });
    const token = (preview.confirmation as { token: string }).token;
    expect(decodeProtectedHeader(token)).toEqual({ alg: "HS256", kid: "k1", typ: "toolpact-confirm+jwt" });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({
      aud: "toolpact-confirmation",
      tid: TENANT,
      sub: "alice",
      cpl: ASSISTANT,
      prv: NOTES,
      tol: "create-record",
      ver: 1,
      eff: "write",
      mod: "token",
    });
    expect(claims.exp! - claims.iat!).toBe(300);
    expect(claims.iat).toBeGreaterThanOrEqual(before);
    expect(claims.sch).toMatch(/^[0-9a-f]{64}$/);
    expect(claims.dig).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(claims.run).toBeUndefined();
    expect(JSON.stringify(claims)).not.toContain("Q3 plan");
    expect((preview.confirmation as { expiresAt: string }).expiresAt).toBe(new Date(claims.exp! * 1000).toISOString());
  });

  it("executes once with the token and records the confirmation id", async () => {
    const token = await tokenFor();
    const answer = await fx.runtime.execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token });
    expect(answer.result).toEqual({ id: "rec-1", targetId: "rec-1" });
    const events = (await fx.runtime.admin.listActivity(TENANT)).events;
    expect(events[0]).toMatchObject({
      phase: "execute",
      outcome: "succeeded",
      confirmationId: decodeJwt(token).jti,
      targetId: "rec-1",
      operationId: answer.operationId,
    });
  });
});

describe("forged and damaged tokens", () => {
  async function expectRefused(token: string, code: string): Promise<void> {
    const error = await rejection(fx.runtime.execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token }));
    expect(error.code).toBe(code);
    expect(fx.handlers.executed).toHaveLength(0);
  }

  it("refuses a bad signature, trailing segments, alg none, an unknown kid and a wrong typ, without burning the real token", async () => {
    const token = await tokenFor();
    const [header, payload, signature] = token.split(".") as [string, string, string];
    const claims = decodeJwt(token);
    const flipped = signature.startsWith("A") ? `B${signature.slice(1)}` : `A${signature.slice(1)}`;
    await expectRefused(`${header}.${payload}.${flipped}`, "CONFIRMATION_INVALID");
    await expectRefused(`${token}.x`, "CONFIRMATION_INVALID");
    await expectRefused(`${header}.${payload}`, "CONFIRMATION_INVALID");
    const none = Buffer.from(JSON.stringify({ alg: "none", kid: "k1", typ: "toolpact-confirm+jwt" })).toString("base64url");
    await expectRefused(`${none}.${payload}.`, "CONFIRMATION_INVALID");
    await expectRefused(await sign({ alg: "HS256", kid: "k1", typ: "toolpact-confirm+jwt" }, claims, randomBytes(32)), "CONFIRMATION_INVALID");
    await expectRefused(await sign({ alg: "HS256", kid: "k9", typ: "toolpact-confirm+jwt" }, claims, fx.signingKeys[0]!.key), "CONFIRMATION_INVALID");
    await expectRefused(await sign({ alg: "HS256", kid: "k1", typ: "JWT" }, claims, fx.signingKeys[0]!.key), "CONFIRMATION_INVALID");
    await expectRefused(await sign({ alg: "HS512", kid: "k1", typ: "toolpact-confirm+jwt" }, claims, fx.signingKeys[0]!.key), "CONFIRMATION_INVALID");
    await expectRefused(
      await sign({ alg: "HS256", kid: "k1", typ: "toolpact-confirm+jwt" }, { ...claims, aud: "toolpact" }, fx.signingKeys[0]!.key),
      "CONFIRMATION_INVALID",
    );
    await expectRefused("not-a-token", "CONFIRMATION_INVALID");

    await expect(fx.runtime.execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token })).resolves.toBeDefined();
  });

  it("refuses an expired token (after the 5 s skew) and accepts one within the skew", async () => {
    const token = await tokenFor();
    fx.advance(300_000 + 2_000);
    const other = await tokenFor(alice, { title: "kept" });
    fx.advance(0);
    await expect(fx.runtime.execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token })).resolves.toBeDefined();
    fx.advance(300_000 + 6_000);
    await expectRefusedAfterRun(other, { title: "kept" }, "CONFIRMATION_EXPIRED");
  });

  async function expectRefusedAfterRun(token: string, input: unknown, code: string): Promise<void> {
    const error = await rejection(fx.runtime.execute(alice, create, input, { confirmationToken: token }));
    expect(error.code).toBe(code);
  }

  it("checks the signature before the expiry", async () => {
    const token = await tokenFor();
    fx.advance(3_600_000);
    const claims = decodeJwt(token);
    const forged = await sign({ alg: "HS256", kid: "k1", typ: "toolpact-confirm+jwt" }, claims, randomBytes(32));
    await expectRefused(forged, "CONFIRMATION_INVALID");
    await expectRefused(token, "CONFIRMATION_EXPIRED");
  });

  it("verifies tokens signed by any configured key and signs with the first", async () => {
    const token = await tokenFor();
    const rotated = await fx.reopen({ signingKeys: [{ kid: "k2", key: randomBytes(32) }, ...fx.signingKeys] });
    const fresh = await rotated.preview(alice, create, { title: "new" });
    expect(decodeProtectedHeader((fresh.confirmation as { token: string }).token).kid).toBe("k2");
    await expect(rotated.execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token })).resolves.toBeDefined();
    const retired = await fx.reopen({ signingKeys: [{ kid: "k3", key: randomBytes(32) }] });
    const error = await rejection(retired.execute(alice, create, { title: "new" }, { confirmationToken: (fresh.confirmation as { token: string }).token }));
    expect(error.code).toBe("CONFIRMATION_INVALID");
  });
});

describe("binding", () => {
  async function expectMismatch(principal: Principal, ref: typeof create, input: unknown, token: string, runtime = fx.runtime) {
    const error = await rejection(runtime.execute(principal, ref, input, { confirmationToken: token }));
    expect(error.code).toBe("CONFIRMATION_MISMATCH");
    return error.message;
  }

  it("refuses the token for a changed input, another actor, caller, tenant, tool or version; the token survives", async () => {
    const token = await tokenFor(alice, { title: "Q3 plan" });
    expect(await expectMismatch(alice, create, { title: "Q4 plan" }, token)).toContain("input differs");
    expect(await expectMismatch(await fx.principal(ASSISTANT, { sub: "bob" }), create, { title: "Q3 plan" }, token)).toContain("another user");
    expect(await expectMismatch(await fx.principal(NOTES), create, { title: "Q3 plan" }, token)).toContain("another caller");
    await configureTenant(fx.runtime, OTHER_TENANT, ALLOW_ALL);
    expect(await expectMismatch(await fx.principal(ASSISTANT, { tid: OTHER_TENANT }), create, { title: "Q3 plan" }, token)).toContain("another tenant");
    expect(await expectMismatch(alice, { providerId: NOTES, tool: "send-summary" } as typeof create, { title: "Q3 plan" }, token)).toContain("another tool");
    expect(await expectMismatch(alice, createV2, { title: "Q3 plan" }, token)).toContain("version 1, not 2");
    expect(fx.handlers.executed).toHaveLength(0);
    await expect(fx.runtime.execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token })).resolves.toBeDefined();
  });

  it("refuses the token when the tool's input schema changed since preview", async () => {
    const token = await tokenFor();
    const manifest = notesManifest();
    const changed = {
      ...manifest,
      tools: manifest.tools.map((declaration) =>
        declaration.name === "create-record" && declaration.version === 1
          ? tool({
              name: "create-record",
              effect: "write",
              inputSchema: { type: "object", properties: { title: { type: "string", maxLength: 100 } }, required: ["title"] },
            })
          : declaration,
      ),
    };
    const upgraded = await fx.reopen({ manifest: changed });
    expect(await expectMismatch(alice, create, { title: "Q3 plan" }, token, upgraded)).toContain("schema changed");
  });

  it("matches an input whose keys come in another order", async () => {
    const token = await tokenFor(alice, { title: "t", tags: ["a", "b"] }, createV2);
    await expect(fx.runtime.execute(alice, createV2, { tags: ["a", "b"], title: "t" }, { confirmationToken: token })).resolves.toMatchObject({
      result: { id: "v2" },
    });
    const reordered = await tokenFor(alice, { title: "t", tags: ["a", "b"] }, createV2);
    expect(await expectMismatch(alice, createV2, { title: "t", tags: ["b", "a"] }, reordered)).toContain("input differs");
  });
});

describe("single use", () => {
  it("refuses a second use and tells the bound caller which operation used it", async () => {
    const token = await tokenFor();
    const first = await fx.runtime.execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token });
    const again = await rejection(fx.runtime.execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token }));
    expect(again.code).toBe("CONFIRMATION_USED");
    expect(again.data.operationId).toBe(first.operationId);
    expect(fx.handlers.executed).toHaveLength(1);
    const events = (await fx.runtime.admin.listActivity(TENANT)).events;
    expect(events[0]).toMatchObject({ outcome: "denied", errorCode: "CONFIRMATION_USED" });
  });

  it("lets exactly one of 50 concurrent executes of one token run", async () => {
    const token = await tokenFor();
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, () => fx.runtime.execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token })),
    );
    const ok = results.filter((r) => r.status === "fulfilled");
    const used = results.filter((r) => r.status === "rejected" && (r.reason as { code?: string }).code === "CONFIRMATION_USED");
    expect(ok).toHaveLength(1);
    expect(used).toHaveLength(49);
    expect(fx.handlers.executed).toHaveLength(1);
  });

  it("lets exactly one of many executes across two instances on one database run", async () => {
    const token = await tokenFor();
    const second = await fx.reopen();
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? fx.runtime : second).execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token })),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(fx.handlers.executed).toHaveLength(1);
  });

  it("stays used after a restart", async () => {
    const token = await tokenFor();
    await fx.runtime.execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token });
    await fx.runtime.close();
    const restarted = await fx.reopen();
    const error = await rejection(restarted.execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token }));
    expect(error.code).toBe("CONFIRMATION_USED");
    expect(fx.handlers.executed).toHaveLength(1);
  });

  it("stays used through pruning while it can still verify, and is refused as expired after", async () => {
    const token = await tokenFor();
    await fx.runtime.execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token });
    fx.advance(300_000 + 3_000);
    expect((await fx.runtime.prune()).consumedTokens).toBe(0);
    expect((await rejection(fx.runtime.execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token }))).code).toBe("CONFIRMATION_USED");
    fx.advance(3_600_000);
    expect((await fx.runtime.prune()).consumedTokens).toBe(1);
    expect((await rejection(fx.runtime.execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token }))).code).toBe("CONFIRMATION_EXPIRED");
    expect(fx.handlers.executed).toHaveLength(1);
  });

  it("is not burnt by a denial", async () => {
    const token = await tokenFor();
    await fx.runtime.admin.setPolicy(TENANT, { rules: [{ tools: "*", decision: "deny" }], trustedConfirmationUis: [ASSISTANT] });
    expect((await rejection(fx.runtime.execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token }))).code).toBe("PERMISSION_DENIED");
    await fx.runtime.admin.setPolicy(TENANT, ALLOW_ALL);
    await expect(fx.runtime.execute(alice, create, { title: "Q3 plan" }, { confirmationToken: token })).resolves.toBeDefined();
  });

  it("ignores, and does not consume, a token sent to a call that needs none", async () => {
    await fx.runtime.admin.setPolicy(TENANT, {
      rules: [{ tools: `${NOTES}:search-records`, decision: "confirm" }],
      trustedConfirmationUis: [ASSISTANT],
    });
    const token = await tokenFor(alice, { query: "x" }, search as typeof create);
    await fx.runtime.admin.setPolicy(TENANT, { rules: [{ tools: "*", decision: "allow" }], trustedConfirmationUis: [ASSISTANT] });
    await expect(fx.runtime.execute(alice, search, { query: "x" }, { confirmationToken: token })).resolves.toBeDefined();
    await expect(fx.runtime.execute(alice, search, { query: "x" }, { confirmationToken: "garbage" })).resolves.toBeDefined();
    expect(await fx.store.findConsumedToken(TENANT, String(decodeJwt(token).jti))).toBeUndefined();
    await fx.runtime.admin.setPolicy(TENANT, {
      rules: [{ tools: `${NOTES}:search-records`, decision: "confirm" }],
      trustedConfirmationUis: [ASSISTANT],
    });
    await expect(fx.runtime.execute(alice, search, { query: "x" }, { confirmationToken: token })).resolves.toBeDefined();
  });
});
