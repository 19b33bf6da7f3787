import { describe, expect, it } from "vitest";
import { oauthConfigSchema, parseOAuthConfig } from "./oauth-config.js";

describe("oauth config", () => {
  it("fills in the defaults: userClaim sub, a 30 s JWKS cooldown and clock tolerance, verification level 1", () => {
    const parsed = oauthConfigSchema.parse({ issuers: [{ issuer: "https://id.example.com", tenantClaim: "tid" }], clients: {} });
    expect(parsed).toEqual({
      issuers: [{ issuer: "https://id.example.com", tenantClaim: "tid", userClaim: "sub", verificationLevel: 1, jwksCooldownSeconds: 30 }],
      clients: {},
      clockToleranceSeconds: 30,
    });
  });

  it("refuses an issuer that says neither which tenant nor which claim names it", () => {
    const parsed = oauthConfigSchema.safeParse({ issuers: [{ issuer: "https://id.example.com" }], clients: {} });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toContain('give "tenant"');
  });

  it("refuses unknown keys, a non-http resource and no issuers", () => {
    for (const bad of [
      { issuers: [{ issuer: "https://id.example.com", tenant: "t1" }], clients: {}, extra: true },
      { resource: "ftp://tools.example.com", issuers: [{ issuer: "https://id.example.com", tenant: "t1" }], clients: {} },
      { issuers: [], clients: {} },
    ]) {
      expect(oauthConfigSchema.safeParse(bad).success).toBe(false);
    }
  });

  it("names every problem of an oauth option given in code", () => {
    expect(() => parseOAuthConfig({ issuers: [{ issuer: "not a url", tenant: "t1" }], clients: { app: "" } })).toThrow(
      /^the "oauth" option is invalid: oauth\.issuers\.0\.issuer: .*; oauth\.clients\.app: /,
    );
  });
});
