import { generateKeyPair, exportJWK, SignJWT } from "jose";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ActorTokenVerifier } from "./actor-token.js";
import { ASSISTANT, ISSUER, NOTES, OTHER_TENANT, TENANT, eachTestFixture, rejection, type RuntimeFixture } from "../testing/fixtures.js";

let fx: RuntimeFixture;
let key: string;
eachTestFixture(async (made) => {
  fx = made;
  key = (await made.runtime.admin.issuePluginKey(TENANT, ASSISTANT)).key;
});

async function refused(credentials: { pluginKey: string | undefined; actorToken: string | undefined }): Promise<string> {
  const before = fx.runtime.metrics.authFailures;
  const error = await rejection(fx.runtime.authenticate(credentials));
  expect(error.code).toBe("UNAUTHENTICATED");
  expect(fx.runtime.metrics.authFailures).toBe(before + 1);
  return error.message;
}

describe("plugin keys", () => {
  it("issues tpk_ keys bound to one tenant and plugin, stored only as a hash", async () => {
    const issued = await fx.runtime.admin.issuePluginKey(TENANT, NOTES);
    expect(issued.key).toMatch(new RegExp(`^tpk_${issued.keyId}_[A-Za-z0-9_-]{43}$`));
    const principal = await fx.runtime.authenticate({ pluginKey: issued.key, actorToken: await fx.actorToken() });
    expect(principal).toMatchObject({ tenantId: TENANT, callerPluginId: NOTES, actor: { userId: "alice", verificationLevel: 1 } });
    const stored = await fx.store.findPluginKey(issued.keyId);
    expect(Buffer.from(stored!.keyHash).toString("utf8")).not.toContain(issued.key.slice(-43));
  });

  it("refuses a missing, malformed, unknown, altered or revoked key, saying which", async () => {
    const actorToken = await fx.actorToken();
    expect(await refused({ pluginKey: undefined, actorToken })).toContain("no plugin key");
    expect(await refused({ pluginKey: "hello", actorToken })).toContain("malformed");
    expect(await refused({ pluginKey: `tpk_${"0".repeat(20)}_${"A".repeat(43)}`, actorToken })).toContain("not known");
    const altered = key.slice(0, -1) + (key.endsWith("A") ? "B" : "A");
    expect(await refused({ pluginKey: altered, actorToken })).toContain("not known");
    const { keyId } = await fx.runtime.admin.issuePluginKey(TENANT, ASSISTANT).then((k) => ({ keyId: k.keyId, key: k.key }));
    expect(await refused({ pluginKey: key, actorToken: undefined })).toContain("no actor token");

    const rotated = await fx.runtime.admin.issuePluginKey(TENANT, ASSISTANT);
    await fx.runtime.admin.revokePluginKey(TENANT, rotated.keyId);
    expect(await refused({ pluginKey: rotated.key, actorToken })).toContain("revoked");
    // the other live keys of the plugin keep working (rotation)
    await expect(fx.runtime.authenticate({ pluginKey: key, actorToken })).resolves.toBeDefined();
    expect((await rejection(fx.runtime.admin.revokePluginKey(OTHER_TENANT, keyId))).code).toBe("INPUT_INVALID");
    expect(fx.logs.filter((entry) => entry.event === "authentication_failed").length).toBeGreaterThanOrEqual(6);
    expect(JSON.stringify(fx.logs)).not.toContain(key);
  });

  it("refuses keys for plugins this host does not know", async () => {
    expect((await rejection(fx.runtime.admin.issuePluginKey(TENANT, "com.example.ghost"))).code).toBe("PROVIDER_NOT_FOUND");
  });
});

describe("actor tokens", () => {
  it("checks signature, alg, iss, aud, exp and the claims", async () => {
    const t = (claims: Record<string, unknown> = {}, options: Parameters<RuntimeFixture["actorToken"]>[1] = {}) => fx.actorToken(claims, options);
    expect(await refused({ pluginKey: key, actorToken: await t({}, { secret: randomBytes(32) }) })).toContain("signature");
    expect(await refused({ pluginKey: key, actorToken: await t({}, { expiresInSeconds: -60 }) })).toContain("expired");
    expect(await refused({ pluginKey: key, actorToken: await t({ lvl: 4 }) })).toContain("lvl");
    expect(await refused({ pluginKey: key, actorToken: await t({ lvl: undefined }) })).toContain("lvl");
    expect(await refused({ pluginKey: key, actorToken: await t({ tid: undefined }) })).toContain("tid");
    expect(await refused({ pluginKey: key, actorToken: await t({ roles: "admin" }) })).toContain("roles");
    expect(await refused({ pluginKey: key, actorToken: await t({ sub: undefined }) })).toContain("sub");
    const wrongIssuer = await new SignJWT({ sub: "a", tid: TENANT, lvl: 0 })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer("https://evil.example")
      .setAudience("toolpact")
      .setExpirationTime("5m")
      .sign(fx.actorSecret);
    expect(await refused({ pluginKey: key, actorToken: wrongIssuer })).toContain("iss");
    const wrongAudience = await new SignJWT({ sub: "a", tid: TENANT, lvl: 0 })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(ISSUER)
      .setAudience("toolpact-confirmation")
      .setExpirationTime("5m")
      .sign(fx.actorSecret);
    expect(await refused({ pluginKey: key, actorToken: wrongAudience })).toContain("aud");
    const noExpiry = await new SignJWT({ sub: "a", tid: TENANT, lvl: 0 })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(ISSUER)
      .setAudience("toolpact")
      .sign(fx.actorSecret);
    expect(await refused({ pluginKey: key, actorToken: noExpiry })).toContain("exp");
    const hs512 = await new SignJWT({ sub: "a", tid: TENANT, lvl: 0 })
      .setProtectedHeader({ alg: "HS512" })
      .setIssuer(ISSUER)
      .setAudience("toolpact")
      .setExpirationTime("5m")
      .sign(fx.actorSecret);
    expect(await refused({ pluginKey: key, actorToken: hs512 })).toContain("alg");
    const [, payload] = (await t()).split(".");
    const none = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${payload}.`;
    expect(await refused({ pluginKey: key, actorToken: none })).toContain("alg");
  });

  it("refuses an actor of another tenant, or one issued to another plugin (azp)", async () => {
    expect(await refused({ pluginKey: key, actorToken: await fx.actorToken({ tid: OTHER_TENANT }) })).toContain("tenant");
    expect(await refused({ pluginKey: key, actorToken: await fx.actorToken({ azp: NOTES }) })).toContain("azp");
    await expect(fx.runtime.authenticate({ pluginKey: key, actorToken: await fx.actorToken({ azp: ASSISTANT }) })).resolves.toMatchObject({
      callerPluginId: ASSISTANT,
    });
  });

  it("stops accepting a remembered token once it expires", async () => {
    const actorToken = await fx.actorToken({}, { expiresInSeconds: 60 });
    await expect(fx.runtime.authenticate({ pluginKey: key, actorToken })).resolves.toBeDefined();
    fx.advance(66_000);
    expect(await refused({ pluginKey: key, actorToken })).toContain("expired");
  });

  it("verifies asymmetric tokens against a JWKS, with the JWKS's algorithm pinned", async () => {
    const { publicKey, privateKey } = await generateKeyPair("ES256");
    const jwk = { ...(await exportJWK(publicKey)), kid: "es", alg: "ES256" };
    const verifier = await ActorTokenVerifier.create({ issuer: ISSUER, jwks: { keys: [jwk] } }, Date.now);
    const good = await new SignJWT({ sub: "u", tid: TENANT, lvl: 2 })
      .setProtectedHeader({ alg: "ES256", kid: "es" })
      .setIssuer(ISSUER)
      .setAudience("toolpact")
      .setExpirationTime("5m")
      .sign(privateKey);
    await expect(verifier.verify(good)).resolves.toMatchObject({ tenantId: TENANT, actor: { userId: "u", verificationLevel: 2 } });
    const symmetric = await new SignJWT({ sub: "u", tid: TENANT, lvl: 2 })
      .setProtectedHeader({ alg: "HS256", kid: "es" })
      .setIssuer(ISSUER)
      .setAudience("toolpact")
      .setExpirationTime("5m")
      .sign(randomBytes(32));
    await expect(verifier.verify(symmetric)).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
    await expect(ActorTokenVerifier.create({ issuer: ISSUER, jwks: { keys: [{ kty: "oct", k: "abc" }] } }, Date.now)).rejects.toThrow(
      /no RS256, ES256 or EdDSA key/,
    );
    await expect(ActorTokenVerifier.create({ issuer: ISSUER }, Date.now)).rejects.toThrow(/exactly one of/);
  });
});
