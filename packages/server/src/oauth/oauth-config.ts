/**
 * `oauth` in `toolpact.config.json`: toolpact as an OAuth 2.1 resource server (docs/oauth.md). Which
 * authorization servers issue access tokens for it, how a token's claims name the tenant and user, and
 * which caller plugin each OAuth client acts as.
 */
import { z } from "zod";

const httpUrl = z.url({ protocol: /^https?$/ });

const introspectionSchema = z
  .strictObject({
    endpoint: httpUrl.optional().describe("The RFC 7662 introspection endpoint; default: introspection_endpoint from the issuer's metadata."),
    clientId: z.string().min(1).describe("The client id toolpact authenticates to the introspection endpoint with (client_secret_basic)."),
    clientSecret: z.string().min(1).describe("Its client secret. Better in the environment: TOOLPACT_OAUTH_INTROSPECTION_SECRET overrides it."),
  })
  .describe("Introspect opaque (non-JWT) access tokens at this issuer (RFC 7662).");

const issuerSchema = z
  .strictObject({
    issuer: httpUrl.describe("The authorization server's issuer identifier, exactly as its tokens' \"iss\" claim and its metadata say it."),
    tenantClaim: z
      .string()
      .min(1)
      .optional()
      .describe('The access-token claim that names the tenant (e.g. "tid"). With "tenant" as well, the claim must name that tenant.'),
    tenant: z.string().min(1).optional().describe("The one tenant every token of this issuer acts in (instead of, or checked against, tenantClaim)."),
    userClaim: z.string().min(1).default("sub").describe('The access-token claim that names the user (default "sub").'),
    verificationLevel: z
      .number()
      .int()
      .min(0)
      .max(3)
      .default(1)
      .describe("The verification level (0..3) of users signed in at this issuer, as tools' minVerificationLevel compares it (default 1)."),
    jwksUrl: httpUrl.optional().describe("The issuer's JWKS; default: jwks_uri from its metadata."),
    jwksCooldownSeconds: z
      .number()
      .int()
      .min(0)
      .max(3600)
      .default(30)
      .describe("The least time between two fetches of the JWKS for a token signed with an unknown key id, seconds (default 30)."),
    introspection: introspectionSchema.optional(),
  })
  .refine((issuer) => issuer.tenant !== undefined || issuer.tenantClaim !== undefined, {
    message: 'give "tenant" (the one tenant this issuer\'s tokens act in) or "tenantClaim" (the claim that names it)',
  });

/** The zod schema of `oauth` in `toolpact.config.json`. */
export const oauthConfigSchema = z
  .strictObject({
    resource: httpUrl.optional().describe('This server\'s resource identifier (RFC 8707): access tokens must have it as their audience. Default: "publicUrl".'),
    issuers: z.array(issuerSchema).min(1).describe("The authorization servers whose access tokens are accepted."),
    clients: z
      .record(z.string().min(1), z.string().min(1))
      .describe("OAuth client id (or Client ID Metadata Document URL) -> the caller plugin id it acts as. An unmapped client is refused."),
    clockToleranceSeconds: z.number().int().min(0).max(300).default(30).describe("Leeway for the tokens' exp and nbf, seconds (default 30)."),
  })
  .optional()
  .describe("Accept OAuth 2.1 access tokens (remote MCP clients and HTTP callers): see docs/oauth.md.");

/** `oauth` as written (in toolpact.config.json, or given to a mounted handler): defaults may be left out. */
export type OAuthConfigInput = NonNullable<z.input<typeof oauthConfigSchema>>;

/** `oauth` as parsed, defaults filled in; undefined when not configured. */
export type OAuthConfig = NonNullable<z.output<typeof oauthConfigSchema>>;
/** One accepted authorization server. */
export type OAuthIssuerConfig = OAuthConfig["issuers"][number];

/**
 * `oauth` checked and with its defaults filled in, for a server or handler given it in code.
 * @throws TypeError naming every problem.
 */
export function parseOAuthConfig(input: OAuthConfigInput): OAuthConfig {
  const parsed = oauthConfigSchema.safeParse(input);
  if (parsed.success && parsed.data !== undefined) return parsed.data;
  const problems = parsed.success ? ["(root): missing"] : parsed.error.issues.map((issue) => `${["oauth", ...issue.path].join(".")}: ${issue.message}`);
  throw new TypeError(`the "oauth" option is invalid: ${problems.join("; ")}`);
}
