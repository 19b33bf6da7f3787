/**
 * `confirmationLogin` in toolpact.config.json: what the loader accepts and refuses, the client secret
 * read from its file, and a host started from it sending the page's sign-in to a real OpenID provider
 * (oidc-provider 9) with PKCE, and refusing or keeping presence tokens as configured.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createConfirmationLogin } from "../../packages/server/src/confirmation-login.js";
import { createPresenceSessions } from "../../packages/server/src/presence-session.js";
import { HostError, derivePresenceSessionSecret, loadHostConfig, startHost } from "../../packages/server/src/index.js";
import { CLIENT_ID, listenProvider, type TestProvider } from "./support/provider.js";

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-oidc-config-"));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const ISSUER = "https://id.example.com";

function writeConfig(config: Record<string, unknown>): void {
  writeFileSync(path.join(dir, "toolpact.config.json"), JSON.stringify({ actorIssuer: "https://id.example", port: 0, ...config }));
}

async function refusal(login: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
  writeConfig({ confirmationLogin: login, ...extra });
  try {
    await loadHostConfig({ cwd: dir, env: {} });
  } catch (error) {
    expect(error).toBeInstanceOf(HostError);
    return [(error as HostError).message, ...(error as HostError).details].join("\n");
  }
  throw new Error("expected a HostError");
}

describe("confirmationLogin in the config", () => {
  it("is read with the client secret from its file (relative to the config, trailing newline dropped)", async () => {
    writeFileSync(path.join(dir, "client-secret"), "s3cret value\n");
    writeConfig({
      confirmationLogin: { issuer: ISSUER, clientId: "toolpact", clientSecretFile: "./client-secret", tenantClaim: "tid", scopes: ["openid", "tenant"] },
    });
    const config = await loadHostConfig({ cwd: dir, env: {} });
    expect(config.confirmationLogin).toEqual({
      issuer: ISSUER,
      clientId: "toolpact",
      clientSecret: "s3cret value",
      tenantClaim: "tid",
      scopes: ["openid", "tenant"],
      insecure: false,
    });
    // A public client (no secret file): PKCE alone protects its code.
    writeConfig({ confirmationLogin: { issuer: ISSUER, clientId: "toolpact", tenant: "t1", presenceTokens: true } });
    expect((await loadHostConfig({ cwd: dir, env: {} })).confirmationLogin).toEqual({
      issuer: ISSUER,
      clientId: "toolpact",
      tenant: "t1",
      presenceTokens: true,
      insecure: false,
    });
  });

  it("refuses what cannot sign anyone in safely, naming the field", async () => {
    const base = { issuer: ISSUER, clientId: "toolpact", tenant: "t1" };
    expect(await refusal({ ...base, tenantClaim: "tid" })).toMatch(/confirmationLogin: give exactly one of tenant .* and tenantClaim/);
    expect(await refusal({ issuer: ISSUER, clientId: "toolpact" })).toMatch(/confirmationLogin: give exactly one of tenant/);
    expect(await refusal({ ...base, scopes: ["profile"] })).toMatch(/confirmationLogin\.scopes: must include "openid"/);
    expect(await refusal({ ...base, redirectPath: "session" })).toMatch(/confirmationLogin\.redirectPath: must not be "session" or "login"/);
    expect(await refusal({ ...base, redirectPath: "../elsewhere" })).toMatch(/confirmationLogin\.redirectPath: must be lowercase path segments/);
    expect(await refusal({ ...base, clientSecret: "inline" })).toMatch(/confirmationLogin: Unrecognized key: "clientSecret"/);
    expect(await refusal({ ...base, issuer: "ftp://id.example.com" })).toMatch(/confirmationLogin\.issuer/);
    expect(await refusal({ ...base, clientSecretFile: "./missing" })).toMatch(/clientSecretFile .*missing could not be read \(ENOENT\)/);
    writeFileSync(path.join(dir, "empty"), "");
    expect(await refusal({ ...base, clientSecretFile: "./empty" })).toMatch(/clientSecretFile .*empty is empty/);
  });

  it("refuses an issuer over plain http to another machine, unless insecure is set", async () => {
    const login = { issuer: "http://id.example.com", clientId: "toolpact", tenant: "t1" };
    expect(await refusal(login)).toMatch(/the provider's issuer http:\/\/id\.example\.com\/ is not https .* set "insecure": true/);
    writeConfig({ confirmationLogin: login, insecure: true });
    expect((await loadHostConfig({ cwd: dir, env: {} })).confirmationLogin?.insecure).toBe(true);
    writeConfig({ confirmationLogin: { ...login, issuer: "http://127.0.0.1:9000" } });
    expect((await loadHostConfig({ cwd: dir, env: {} })).confirmationLogin?.issuer).toBe("http://127.0.0.1:9000");
  });
});

describe("a host started with confirmationLogin", () => {
  let provider: TestProvider;

  beforeAll(async () => {
    provider = await listenProvider(() => "t1");
  });

  afterAll(async () => {
    await provider?.close();
  });

  const signingKey = randomBytes(32);
  const env = () => ({
    TOOLPACT_ADMIN_KEY: randomBytes(32).toString("base64url"),
    TOOLPACT_ACTOR_SECRET: randomBytes(32).toString("base64"),
    TOOLPACT_SIGNING_KEYS: `k1:${signingKey.toString("base64")}`,
    TOOLPACT_STORAGE_KEY: randomBytes(32).toString("base64"),
  });

  /** A valid page session made from a presence token, signed as the host signs them (its secret derives from the first signing key). */
  const presenceSessionCookie = (): string => {
    const sessions = createPresenceSessions({
      secret: derivePresenceSessionSecret(new Uint8Array(signingKey)),
      ttlSeconds: 600,
      secure: false,
      path: "/confirm",
      clock: Date.now,
    });
    return sessions.issue({ tenantId: "t1", userId: "user-1", notAfter: Date.now() + 60_000 }).setCookie.split(";")[0]!;
  };

  it("sends the page's sign-in to the provider with PKCE, and refuses presence tokens unless presenceTokens is set", async () => {
    writeFileSync(path.join(dir, "client-secret"), provider.clientSecret);
    for (const presenceTokens of [false, true]) {
      writeConfig({
        publicUrl: "http://127.0.0.1:1",
        confirmationLogin: { issuer: provider.issuer, clientId: CLIENT_ID, clientSecretFile: "client-secret", tenant: "t1", presenceTokens },
      });
      const host = await startHost({ config: await loadHostConfig({ cwd: dir, env: {} }), env: env() });
      try {
        if (!presenceTokens) {
          provider.start([{ clientId: CLIENT_ID, redirectUri: "http://127.0.0.1:1/confirm/login/callback" }]);
          const started = await fetch(`${host.url}/confirm/login?request=abc`, { redirect: "manual" });
          expect(started.status).toBe(303);
          const authorize = new URL(started.headers.get("location") ?? "");
          expect(authorize.origin + authorize.pathname).toBe(`${provider.issuer}/auth`);
          expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
            response_type: "code",
            client_id: CLIENT_ID,
            redirect_uri: "http://127.0.0.1:1/confirm/login/callback",
            scope: "openid",
            code_challenge_method: "S256",
          });
          expect(authorize.searchParams.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/);
          expect(authorize.searchParams.get("nonce")).toMatch(/^[A-Za-z0-9_-]{43}$/);
          // The provider takes the request as it is (client, redirect, PKCE): it answers with its login page.
          const atProvider = await fetch(authorize, { redirect: "manual" });
          expect(atProvider.status).toBe(303);
          expect(atProvider.headers.get("location")).toMatch(/^\/interaction\//);
        }
        const session = await fetch(`${host.url}/confirm/session?token=anything`);
        const text = await session.text();
        if (presenceTokens) expect(text).not.toContain("not with presence tokens");
        else expect(text).toContain("not with presence tokens");
        // A session a presence token made earlier (same secret) counts only while presenceTokens is on.
        const page = await fetch(`${host.url}/confirm/0190d1a2-0000-7000-8000-000000000000`, { headers: { cookie: presenceSessionCookie() } });
        if (presenceTokens) {
          expect(page.status).toBe(403);
          expect(await page.text()).toContain("is waiting for you");
        } else {
          expect(page.status).toBe(401);
          expect(await page.text()).toContain('id="sign-in"');
        }
      } finally {
        await host.close();
      }
    }
  });

  it("marks the login cookie Secure, with the __Secure- prefix, when the page is served over https", async () => {
    provider.start([{ clientId: CLIENT_ID, redirectUri: "https://tools.example.com/confirm/login/callback" }]);
    const login = createConfirmationLogin(
      { issuer: provider.issuer, clientId: CLIENT_ID, tenant: "t1" },
      { redirectUri: "https://tools.example.com/confirm/login/callback", cookiePath: "/confirm", secure: true, secret: randomBytes(32), clock: Date.now },
    );
    const { setCookie } = await login.begin(undefined);
    expect(setCookie).toMatch(/^__Secure-toolpact-confirm-login=[A-Za-z0-9_-]+; Path=\/confirm; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/);
    expect(login.clearCookie).toBe("__Secure-toolpact-confirm-login=; Path=/confirm; Max-Age=0; HttpOnly; SameSite=Lax; Secure");
  });
});
