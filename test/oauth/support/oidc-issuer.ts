/**
 * A real OpenID provider for OAuth tests: `oidc-provider` 9 (a certified implementation) in this process,
 * on 127.0.0.1, issuing JWT access tokens (RFC 9068) for a resource indicator (RFC 8707). Its signing
 * keys are the test's own, so a test can also sign the tokens an attacker would (expired ones, others'
 * keys), and rotate them. Its users sign in through its development login form, which `signIn` fills in.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import Provider from "oidc-provider";

/** The scopes toolpact's resource server grants calls by. */
export const TOOL_SCOPES = "tools:read tools:write tools:external";
/** A public client (authorization code + PKCE): what an MCP client such as an IDE registers as. */
export const APP_CLIENT = "assistant-app";
/** Where the app client's authorization responses go (never fetched: the test reads the redirect). */
export const APP_REDIRECT = "http://127.0.0.1:9/callback";
/** Confidential clients with the client credentials grant, for tokens without a browser. */
export const BOT_CLIENT = { id: "ops-bot", secret: "ops-bot-secret-0123456789abcdef0123456789" } as const;
export const STRANGER_CLIENT = { id: "stranger-bot", secret: "stranger-secret-0123456789abcdef012345678" } as const;

/** One signing key pair of the issuer. */
interface KeyPair {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly privateJwk: JWK;
  readonly publicJwk: JWK;
}

/** A running issuer. */
export interface TestIssuer {
  /** The issuer identifier, `http://127.0.0.1:<port>`. */
  readonly issuer: string;
  /** The access tokens' signing key (ES256) now in use. */
  readonly key: KeyPair;
  /** The path of every request the issuer received, in order. */
  readonly requests: readonly string[];
  /** The claim values extra to every access token (default `{ tid: "t1" }`). */
  extraClaims: Record<string, unknown>;
  /** A client credentials token of `client` for `resource` with `scope`. */
  clientToken(client: { id: string; secret: string }, options: { resource: string; scope: string }): Promise<string>;
  /** Signs claims as the issuer would (its current key unless another is given). */
  sign(claims: Record<string, unknown>, key?: KeyPair): Promise<string>;
  /** Replaces every signing key: the JWKS publishes only the new ones from now on. */
  rotate(): Promise<KeyPair>;
  close(): Promise<void>;
}

async function makeKey(alg: "ES256" | "RS256"): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `${alg.toLowerCase()}-${Math.random().toString(36).slice(2, 10)}`;
  return {
    kid,
    privateKey: privateKey as CryptoKey,
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg, use: "sig" },
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" },
  };
}

/**
 * Starts an issuer whose tokens are for `resources` (the first is toolpact's): each gets the tool
 * scopes and JWT access tokens signed with ES256, or (`opaque`) opaque tokens its introspection
 * endpoint (RFC 7662) answers for; `introspection` offers that endpoint beside JWTs.
 */
export async function startIssuer(
  resources: readonly string[],
  options: { readonly opaque?: boolean; readonly introspection?: boolean } = {},
): Promise<TestIssuer> {
  let current: { provider: Provider; key: KeyPair } | undefined;
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? "");
    if (current === undefined) {
      res.statusCode = 503;
      res.end();
      return;
    }
    current.provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const state = { extraClaims: { tid: "t1" } as Record<string, unknown> };

  const providerWith = async (): Promise<{ provider: Provider; key: KeyPair }> => {
    const key = await makeKey("ES256");
    const idTokenKey = await makeKey("RS256");
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: APP_CLIENT,
          application_type: "native",
          token_endpoint_auth_method: "none",
          redirect_uris: [APP_REDIRECT],
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
        },
        ...[BOT_CLIENT, STRANGER_CLIENT].map((client) => ({
          client_id: client.id,
          client_secret: client.secret,
          grant_types: ["client_credentials"],
          response_types: [],
          redirect_uris: [],
        })),
      ],
      jwks: { keys: [idTokenKey.privateJwk, key.privateJwk] },
      features: {
        devInteractions: { enabled: true },
        clientCredentials: { enabled: true },
        introspection: { enabled: options.opaque === true || options.introspection === true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => resources[0],
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, indicator: string) => {
            if (!resources.includes(indicator)) throw new Error(`unknown resource ${indicator}`);
            const format =
              options.opaque === true ? { accessTokenFormat: "opaque" } : { accessTokenFormat: "jwt", jwt: { sign: { alg: "ES256", kid: key.kid } } };
            return { scope: TOOL_SCOPES, audience: indicator, accessTokenTTL: 600, ...format };
          },
        },
      },
      scopes: ["openid", "offline_access"],
      pkce: { required: () => true },
      findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
      extraTokenClaims: () => state.extraClaims,
    });
    // The test talks plain http to 127.0.0.1.
    provider.proxy = false;
    return { provider, key };
  };
  current = await providerWith();

  return {
    issuer,
    requests,
    get key() {
      return current!.key;
    },
    get extraClaims() {
      return state.extraClaims;
    },
    set extraClaims(claims) {
      state.extraClaims = claims;
    },
    async clientToken(client, { resource, scope }) {
      const response = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ grant_type: "client_credentials", resource, scope }),
      });
      const body = (await response.json()) as { access_token?: string };
      if (body.access_token === undefined) throw new Error(`no token from ${issuer}: HTTP ${response.status} ${JSON.stringify(body)}`);
      return body.access_token;
    },
    sign: (claims, key = current!.key) => new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: key.kid, typ: "at+jwt" }).sign(key.privateKey),
    async rotate() {
      current = await providerWith();
      return current.key;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Plays the user at the issuer: follows `authorizationUrl` through the provider's login and consent
 * forms (signing in as `login`), and answers the parameters it redirects to `APP_REDIRECT` with (`code`,
 * `state`, `iss`).
 */
export async function signIn(authorizationUrl: URL, login: string): Promise<URLSearchParams> {
  const cookies = new Map<string, string>();
  const send = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const response = await fetch(url, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string>), cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; ") },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair!.indexOf("=");
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    return response;
  };
  let url = authorizationUrl.href;
  for (let step = 0; step < 12; step += 1) {
    if (url.startsWith(APP_REDIRECT)) {
      const params = new URL(url).searchParams;
      if (!params.has("code")) throw new Error(`the issuer redirected back without a code: ${url}`);
      return params;
    }
    const response = await send(url);
    const location = response.headers.get("location");
    if (location !== null) {
      url = new URL(location, url).href;
      continue;
    }
    const html = await response.text();
    const prompt = /name="prompt" value="(login|consent)"/.exec(html)?.[1];
    const action = /<form[^>]* action="([^"]+)"/.exec(html)?.[1];
    if (prompt === undefined || action === undefined) throw new Error(`unexpected page at ${url}: HTTP ${response.status} ${html.slice(0, 300)}`);
    const form = prompt === "login" ? { prompt, login, password: "any" } : { prompt };
    const submitted = await send(new URL(action, url).href, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form).toString(),
    });
    const next = submitted.headers.get("location");
    if (next === null) throw new Error(`the ${prompt} form answered HTTP ${submitted.status} without a redirect`);
    url = new URL(next, url).href;
  }
  throw new Error("the sign-in did not come back to the app within 12 steps");
}
