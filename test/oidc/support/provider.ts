/**
 * A real OpenID provider for the confirmation page's sign-in tests: `oidc-provider` 9 (a certified
 * implementation) in this process on 127.0.0.1, with its own development login and consent pages (any
 * login name signs in as that account; the password is not checked). ID tokens carry `tid` (the tenant).
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import Provider from "oidc-provider";

/** The client the confirmation page is registered as. */
export const CLIENT_ID = "toolpact-confirm";

/** A client registered at the provider: where it sends the browser back, and how it signs the client's ID tokens. */
export interface ClientRegistration {
  readonly clientId: string;
  readonly redirectUri: string;
  /** Default RS256 (the provider's key); HS256 signs with the client secret. */
  readonly idTokenAlg?: "RS256" | "HS256";
}

/** A running provider. */
export interface TestProvider {
  /** The issuer, `http://127.0.0.1:<port>`. */
  readonly issuer: string;
  readonly clientSecret: string;
  /** Registers the clients (their redirect URIs are known once toolpact listens), all with `clientSecret`, and starts answering. */
  start(clients: readonly ClientRegistration[]): void;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:0 first, so that the issuer is known before toolpact starts; `start` makes the provider. */
export async function listenProvider(tenantOf: (accountId: string) => string): Promise<TestProvider> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => {
    if (handler === undefined) {
      res.writeHead(503).end("not started");
      return;
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  const issuer = `http://127.0.0.1:${address.port}`;
  const clientSecret = randomBytes(24).toString("base64url");
  const signingKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" });

  return {
    issuer,
    clientSecret,
    start(clients) {
      const provider = new Provider(issuer, {
        clients: clients.map((client) => ({
          client_id: client.clientId,
          client_secret: clientSecret,
          redirect_uris: [client.redirectUri],
          grant_types: ["authorization_code"],
          response_types: ["code"],
          token_endpoint_auth_method: "client_secret_basic",
          id_token_signed_response_alg: client.idTokenAlg ?? "RS256",
        })),
        jwks: { keys: [{ ...signingKey, kid: "test-rs256", use: "sig", alg: "RS256" }] },
        cookies: { keys: [randomBytes(32).toString("base64url")] },
        pkce: { required: () => true },
        scopes: ["openid", "tenant"],
        claims: { openid: ["sub"], tenant: ["tid"] },
        // Claims the scopes grant go into the ID token too (the page reads the tenant from it).
        conformIdTokenClaims: false,
        findAccount: (_ctx: unknown, accountId: string) => ({
          accountId,
          claims: () => ({ sub: accountId, tid: tenantOf(accountId) }),
        }),
        features: { devInteractions: { enabled: true } },
        // HS256 too, for a client that asks for it: the page must refuse such ID tokens.
        enabledJWA: { idTokenSigningAlgValues: ["RS256", "HS256"] },
      });
      handler = provider.callback();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
