/**
 * toolpact as an OAuth 2.1 resource server, against a real OpenID provider (oidc-provider) in this
 * process: the v2 MCP SDK client's own OAuth flow connects to `/mcp` and calls a tool as the signed-in
 * user; every bad token is refused with the right status, and nothing runs.
 */
import {
  Client,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { exportSPKI, importJWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ASSISTANT_ID, PROVIDER_ID } from "../integration/support/plugins.js";
import { mutate, ok, query } from "../integration/support/wire.js";
import { startMcpWorld, type McpWorld } from "../mcp/support/mcp-world.js";
import { APP_CLIENT, APP_REDIRECT, BOT_CLIENT, signIn, STRANGER_CLIENT, startIssuer, TOOL_SCOPES, type TestIssuer } from "./support/oidc-issuer.js";

const ELSEWHERE = "https://elsewhere.example";
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };

/** An OAuth client provider as an MCP host app keeps one: the pre-registered public client, tokens in memory. */
class AppAuth implements OAuthClientProvider {
  saved: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;
  get redirectUrl() {
    return APP_REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: "test app", redirect_uris: [APP_REDIRECT], grant_types: ["authorization_code", "refresh_token"], token_endpoint_auth_method: "none" };
  }
  clientInformation(): OAuthClientInformationMixed {
    return { client_id: APP_CLIENT };
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  discovery: OAuthDiscoveryState | undefined;
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

interface Answer {
  readonly status: number;
  readonly challenge: string | null;
  /** The JSON-RPC error's message, else the body. */
  readonly text: string;
}

describe("OAuth 2.1 resource server", () => {
  const resources: string[] = [ELSEWHERE];
  let issuer: TestIssuer;
  let stranger: TestIssuer;
  let world: McpWorld;
  let resource: string;
  /** Every token a test used: none may appear in the logs. */
  const used: string[] = [];

  const token = async (options: { scope?: string; client?: { id: string; secret: string }; from?: TestIssuer; resource?: string } = {}) => {
    const minted = await (options.from ?? issuer).clientToken(options.client ?? BOT_CLIENT, {
      resource: options.resource ?? resource,
      scope: options.scope ?? TOOL_SCOPES,
    });
    used.push(minted);
    return minted;
  };
  const claims = (extra: Record<string, unknown> = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return { iss: issuer.issuer, aud: resource, sub: "mallory", client_id: BOT_CLIENT.id, scope: TOOL_SCOPES, tid: "t1", iat: now, exp: now + 600, ...extra };
  };
  const mcpCall = async (bearer: string, tool: string, args: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<Answer> => {
    const response = await fetch(world.mcpUrl, {
      method: "POST",
      headers: { ...MCP_HEADERS, authorization: `Bearer ${bearer}`, ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: tool, arguments: args } }),
    });
    const text = await response.text();
    const message = text.startsWith("{") ? ((JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text) : text;
    return { status: response.status, challenge: response.headers.get("www-authenticate"), text: message };
  };
  const ran = () => [...world.stack.probe.invocations.values()].reduce((sum, count) => sum + count, 0);

  beforeAll(async () => {
    issuer = await startIssuer(resources);
    stranger = await startIssuer(resources);
    world = await startMcpWorld({
      oauth: {
        issuers: [{ issuer: issuer.issuer, tenant: "t1", tenantClaim: "tid", jwksCooldownSeconds: 0 }],
        clients: { [APP_CLIENT]: ASSISTANT_ID, [BOT_CLIENT.id]: ASSISTANT_ID },
      },
    });
    resource = world.stack.url;
    resources.push(resource);
  });
  afterAll(async () => {
    await world?.close();
    await issuer?.close();
    await stranger?.close();
  });

  it("serves Protected Resource Metadata at the root and in the path form for /mcp", async () => {
    for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
      const response = await fetch(`${resource}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(await response.json()).toMatchObject({
        resource,
        authorization_servers: [issuer.issuer],
        scopes_supported: ["tools:read", "tools:write", "tools:external"],
        bearer_methods_supported: ["header"],
      });
    }
  });

  it("answers 401 on /mcp and /trpc with WWW-Authenticate naming the metadata and the scopes", async () => {
    const mcp = await fetch(world.mcpUrl, { method: "POST", headers: MCP_HEADERS, body: "{}" });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${resource}/.well-known/oauth-protected-resource/mcp", scope="tools:read tools:write tools:external"`,
    );
    const trpc = await query(resource, "tools.list", undefined, { authorization: "Bearer not-a-token" });
    expect(trpc.status).toBe(401);
    const challenge = (await fetch(`${resource}/trpc/tools.list`, { headers: { authorization: "Bearer not-a-token" } })).headers.get("www-authenticate");
    expect(challenge).toMatch(
      new RegExp(
        `^Bearer resource_metadata="${resource}/\\.well-known/oauth-protected-resource", scope="tools:read tools:write tools:external", error="invalid_token", error_description="[^"]+"$`,
      ),
    );
  });

  it("lets the MCP SDK client sign in through its own OAuth flow and call a read tool as the signed-in user", async () => {
    const auth = new AppAuth();
    const first = new StreamableHTTPClientTransport(world.mcpUrl, { authProvider: auth });
    const client = new Client({ name: "oauth-app", version: "1.0.0" });
    await expect(client.connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(auth.authorizationUrl).toBeDefined();
    const authorizationUrl = auth.authorizationUrl!;
    expect(authorizationUrl.origin).toBe(issuer.issuer);
    expect(authorizationUrl.searchParams.get("resource")).toBe(resource);
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");

    const callback = await signIn(authorizationUrl, "alice");
    await first.finishAuth(callback);
    expect(auth.saved?.access_token).toBeDefined();
    used.push(auth.saved!.access_token);

    const connected = new Client({ name: "oauth-app", version: "1.0.0" });
    await connected.connect(new StreamableHTTPClientTransport(world.mcpUrl, { authProvider: auth }));
    try {
      const { tools } = await connected.listTools();
      expect(tools.map((tool) => tool.name)).toContain("com-test-notes_echo");
      const before = world.stack.probe.invocations.get("echo") ?? 0;
      const result = await connected.callTool({ name: "com-test-notes_echo", arguments: { hello: "world" } });
      expect(result.isError).toBeFalsy();
      expect(world.stack.probe.invocations.get("echo")).toBe(before + 1);
      expect(world.stack.probe.lastContext).toMatchObject({ tenantId: "t1", callerPluginId: ASSISTANT_ID, actor: { userId: "alice" } });
    } finally {
      await connected.close();
    }
  });

  it("calls over /trpc with an access token alone", async () => {
    const bearer = await token();
    const answer = await mutate(
      resource,
      "tools.execute",
      { ref: { providerId: PROVIDER_ID, tool: "echo" }, input: { via: "trpc" } },
      { authorization: `Bearer ${bearer}` },
    );
    expect(answer.status).toBe(200);
    expect(world.stack.probe.lastContext).toMatchObject({ tenantId: "t1", callerPluginId: ASSISTANT_ID, actor: { userId: BOT_CLIENT.id } });
    // The activity log says an access token authenticated the call (and a plugin key never did).
    const { events } = await world.stack.runtime.admin.listActivity("t1", { limit: 5 });
    const call = events.find((event) => event.kind === "call" && event.tool?.includes(":echo@") && event.actorUserId === BOT_CLIENT.id);
    expect(call).toMatchObject({ authenticatedBy: "oauth", via: "http", callerPluginId: ASSISTANT_ID });
  });

  describe("refuses each bad token with nothing run", () => {
    const refusals: [string, () => Promise<string>, number, RegExp][] = [
      ["a token for another resource (wrong audience)", () => token({ resource: ELSEWHERE }), 401, /audience/],
      ["a token from an issuer not configured", () => token({ from: stranger }), 401, /issuer .* is not one this server accepts/],
      ["an expired token", () => issuer.sign(claims({ exp: Math.floor(Date.now() / 1000) - 3600 })), 401, /expired/],
      [
        "HS256 signed with the issuer's public key (JWK)",
        async () => hs256(claims(), new TextEncoder().encode(JSON.stringify(issuer.key.publicJwk))),
        401,
        /alg "HS256"/,
      ],
      [
        "HS256 signed with the issuer's public key (PEM)",
        async () => hs256(claims(), new TextEncoder().encode(await exportSPKI((await importJWK(issuer.key.publicJwk, "ES256")) as CryptoKey))),
        401,
        /alg "HS256"/,
      ],
      ["alg none", async () => unsigned(claims()), 401, /alg "none"/],
      [
        "a token of another type (an ID token's typ), signed by the issuer",
        () => new SignJWT(claims()).setProtectedHeader({ alg: "ES256", kid: issuer.key.kid, typ: "id_token+jwt" }).sign(issuer.key.privateKey),
        401,
        /typ "id_token\+jwt" is not an access token's/,
      ],
      ["a token signed with a key the issuer never published", async () => issuer.sign(claims(), await freshKey()), 401, /key its issuer does not publish/],
      [
        "a token for another tenant than the issuer's fixed one",
        async () => {
          issuer.extraClaims = { tid: "t2" };
          try {
            return await token();
          } finally {
            issuer.extraClaims = { tid: "t1" };
          }
        },
        401,
        /tenant "t2"/,
      ],
      ["a client not mapped to a caller plugin", () => token({ client: STRANGER_CLIENT }), 403, /OAuth client "stranger-bot" may not call tools here/],
    ];
    for (const [name, mint, status, message] of refusals) {
      it(name, async () => {
        const bearer = await mint();
        used.push(bearer);
        const before = ran();
        const mcp = await mcpCall(bearer, "com-test-notes_echo");
        expect(mcp.status, mcp.text).toBe(status);
        expect(mcp.text).toMatch(message);
        if (status === 401) expect(mcp.challenge).toMatch(/^Bearer resource_metadata="[^"]+\/mcp", scope="[^"]+", error="invalid_token"/);
        const trpc = await mutate(
          resource,
          "tools.execute",
          { ref: { providerId: PROVIDER_ID, tool: "echo" }, input: {} },
          { authorization: `Bearer ${bearer}` },
        );
        expect(trpc.status).toBe(status);
        expect(ran()).toBe(before);
      });
    }

    it("refuses an access token sent with an actor token: the two styles never mix", async () => {
      const bearer = await token();
      const [actorHeaders] = [await world.headers()];
      const before = ran();
      const mcp = await mcpCall(bearer, "com-test-notes_echo", {}, { "x-toolpact-actor": actorHeaders["x-toolpact-actor"]! });
      expect(mcp.status).toBe(401);
      expect(mcp.text).toContain("never both");
      expect(ran()).toBe(before);
    });
  });

  it("fetches the JWKS again for a rotated key, and refuses the retired key", async () => {
    const old = issuer.key;
    const oldToken = await issuer.sign(claims());
    used.push(oldToken);
    expect((await mcpCall(oldToken, "com-test-notes_echo")).status).toBe(200);
    await issuer.rotate();
    const fresh = await token();
    expect(fresh).not.toContain(old.kid);
    const answered = await mcpCall(fresh, "com-test-notes_echo");
    expect(answered.status, answered.text).toBe(200);
    const before = ran();
    const retired = await mcpCall(oldToken, "com-test-notes_echo");
    expect(retired.status).toBe(401);
    expect(retired.text).toMatch(/key its issuer does not publish/);
    expect(ran()).toBe(before);
  });

  describe("scopes", () => {
    it("lists only the tools a token's scopes can call", async () => {
      const readOnly = await token({ scope: "tools:read" });
      const listing = await query(resource, "tools.list", undefined, { authorization: `Bearer ${readOnly}` });
      expect(effectsOf(ok(listing))).toEqual(new Set(["read"]));
      const writeOnly = await token({ scope: "tools:write" });
      const writes = await query(resource, "tools.list", undefined, { authorization: `Bearer ${writeOnly}` });
      expect(effectsOf(ok(writes))).toEqual(new Set(["write"]));
      const mcp = await fetch(world.mcpUrl, {
        method: "POST",
        headers: { ...MCP_HEADERS, authorization: `Bearer ${readOnly}` },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
      });
      const names = ((await mcp.json()) as { result: { tools: { name: string }[] } }).result.tools.map((tool) => tool.name);
      expect(names).toContain("com-test-notes_echo");
      expect(names).not.toContain("com-test-notes_create_note");
    });

    it("answers a call beyond the token's scopes 403 insufficient_scope naming the scope, on /mcp and /trpc, and runs nothing", async () => {
      const readOnly = await token({ scope: "tools:read" });
      const before = ran();
      const mcp = await mcpCall(readOnly, "com-test-notes_create_note", { title: "no" });
      expect(mcp.status).toBe(403);
      expect(mcp.challenge).toBe(
        `Bearer resource_metadata="${resource}/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="tools:write", error_description="this call needs the scope tools:write"`,
      );
      for (const procedure of ["tools.preview", "tools.execute"]) {
        const response = await fetch(`${resource}/trpc/${procedure}`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${readOnly}` },
          body: JSON.stringify({ ref: { providerId: PROVIDER_ID, tool: "create-note" }, input: { title: "no" } }),
        });
        expect(response.status).toBe(403);
        expect(response.headers.get("www-authenticate")).toContain('error="insufficient_scope", scope="tools:write"');
        const body = (await response.json()) as { error: { data: { toolpactCode: string; toolpactData: { requiredScope?: string } } } };
        expect(body.error.data.toolpactCode).toBe("PERMISSION_DENIED");
        expect(body.error.data.toolpactData.requiredScope).toBe("tools:write");
      }
      // write does not imply read
      const writeOnly = await token({ scope: "tools:write" });
      const read = await mcpCall(writeOnly, "com-test-notes_echo");
      expect(read.status).toBe(403);
      expect(read.challenge).toContain('scope="tools:read"');
      expect(ran()).toBe(before);
    });
  });

  it("never writes a token to the log", () => {
    const logs = world.stack.logs.join("\n");
    expect(logs).toContain("oauth_token_refused");
    expect(used.length).toBeGreaterThan(10);
    for (const bearer of used) {
      expect(logs).not.toContain(bearer);
      for (const part of bearer.split(".").filter((piece) => piece.length > 16)) expect(logs).not.toContain(part);
    }
  });
});

/** The effects of the tools a listing shows. */
function effectsOf(listing: unknown): Set<string> {
  return new Set((listing as { effect: string }[]).map((tool) => tool.effect));
}

/** A token signed HS256 with `secret` (the alg-confusion attack: the issuer's public key as an HMAC secret). */
function hs256(claims: Record<string, unknown>, secret: Uint8Array): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "at+jwt" }).sign(secret);
}

/** An unsecured JWT (`alg: none`, empty signature). */
function unsigned(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none", typ: "at+jwt" })}.${part(claims)}.`;
}

/** A key pair the issuer never published, under a kid of its own. */
async function freshKey() {
  const { generateKeyPair } = await import("jose");
  const { privateKey } = await generateKeyPair("ES256");
  return { kid: "forged-kid", privateKey: privateKey as CryptoKey, privateJwk: {}, publicJwk: {} };
}
