/**
 * Opaque access tokens, checked at the issuer's RFC 7662 introspection endpoint (a real oidc-provider),
 * and issuers whose metadata cannot be trusted.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccessTokenVerifier } from "../../packages/server/src/oauth/access-tokens.js";
import { oauthConfigSchema } from "../../packages/server/src/oauth/oauth-config.js";
import { BOT_CLIENT, startIssuer, TOOL_SCOPES, type TestIssuer } from "./support/oidc-issuer.js";

const RESOURCE = "https://tools.test.example";
const ELSEWHERE = "https://elsewhere.example";

describe("opaque access tokens through introspection", () => {
  let issuer: TestIssuer;
  let verify: ReturnType<typeof createAccessTokenVerifier>;

  beforeAll(async () => {
    issuer = await startIssuer([RESOURCE, ELSEWHERE], { opaque: true });
    const config = oauthConfigSchema.parse({
      issuers: [{ issuer: issuer.issuer, tenant: "t1", introspection: { clientId: BOT_CLIENT.id, clientSecret: BOT_CLIENT.secret } }],
      clients: { [BOT_CLIENT.id]: "com.test.assistant" },
    })!;
    verify = createAccessTokenVerifier(config, RESOURCE);
  });
  afterAll(async () => {
    await issuer?.close();
  });

  it("accepts an active opaque token for this resource, with its client and scopes", async () => {
    const token = await issuer.clientToken(BOT_CLIENT, { resource: RESOURCE, scope: "tools:read" });
    expect(token.split(".")).toHaveLength(1);
    const verified = await verify(token);
    expect(verified.issuer.issuer).toBe(issuer.issuer);
    expect(verified.claims).toMatchObject({ active: true, client_id: BOT_CLIENT.id, scope: "tools:read" });
  });

  it("refuses an opaque token for another resource, and one the issuer does not know", async () => {
    const elsewhere = await issuer.clientToken(BOT_CLIENT, { resource: ELSEWHERE, scope: TOOL_SCOPES });
    await expect(verify(elsewhere)).rejects.toMatchObject({ code: "UNAUTHENTICATED", message: expect.stringMatching(/audience/) });
    await expect(verify("made-up-opaque-token-0123456789")).rejects.toMatchObject({ code: "UNAUTHENTICATED", message: expect.stringMatching(/not active/) });
  });

  it("refuses opaque tokens when no issuer introspects", async () => {
    const jwtOnly = createAccessTokenVerifier(oauthConfigSchema.parse({ issuers: [{ issuer: issuer.issuer, tenant: "t1" }], clients: {} })!, RESOURCE);
    await expect(jwtOnly("opaque")).rejects.toMatchObject({ code: "UNAUTHENTICATED", message: expect.stringMatching(/no issuer .* introspection/) });
  });
});

describe("issuer metadata", () => {
  it("refuses metadata that names another issuer (RFC 8414 3.3): no keys are fetched from it", async () => {
    let jwksFetched = false;
    const server = createServer((req, res) => {
      if (req.url?.startsWith("/.well-known/")) {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ issuer: "https://someone-else.example", jwks_uri: `http://${req.headers.host}/jwks` }));
        return;
      }
      jwksFetched = true;
      res.end(JSON.stringify({ keys: [] }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const verify = createAccessTokenVerifier(oauthConfigSchema.parse({ issuers: [{ issuer: url, tenant: "t1" }], clients: {} })!, RESOURCE);
      const header = Buffer.from(JSON.stringify({ alg: "ES256", kid: "k" })).toString("base64url");
      const payload = Buffer.from(JSON.stringify({ iss: url, aud: RESOURCE, exp: 9999999999 })).toString("base64url");
      await expect(verify(`${header}.${payload}.c2ln`)).rejects.toMatchObject({
        code: "STORE_UNAVAILABLE",
        message: expect.stringContaining('its "issuer" is "https://someone-else.example"'),
      });
      expect(jwksFetched).toBe(false);
    } finally {
      server.close();
    }
  });
});
