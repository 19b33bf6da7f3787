/**
 * `confirmationLogin` in `toolpact.config.json`: the confirmation page signs people in at the platform's
 * OpenID provider (authorization code + PKCE) instead of, or beside, toolpact's presence tokens.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { TENANT_ID_MAX_LENGTH, withoutUndefined } from "@toolpact/contract";
import { z } from "zod";
import { requireSafeTransport, type ConfirmationLoginOptions } from "./confirmation-login.js";

/** Where the provider sends the browser back, below the page's `/confirm/` path, unless configured. */
export const DEFAULT_LOGIN_REDIRECT_PATH = "login/callback";
/** The scopes asked for unless configured. */
export const DEFAULT_LOGIN_SCOPES: readonly string[] = Object.freeze(["openid"]);

const CLAIM_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/;
const REDIRECT_PATH = /^[a-z][a-z0-9-]*(\/[a-z][a-z0-9-]*)*$/;

/** The zod schema of `confirmationLogin`. */
export const loginConfigSchema = z
  .strictObject({
    issuer: z
      .url({ protocol: /^https?$/ })
      .describe("The OpenID provider's issuer URL, exactly as its discovery document names it: https, or http to a loopback host (unless insecure is set)."),
    clientId: z.string().min(1).describe("The client id this confirmation page is registered under at the provider."),
    clientSecretFile: z
      .string()
      .min(1)
      .optional()
      .describe("A file holding the client secret (client_secret_basic), relative to this file; omit for a public client (PKCE only)."),
    redirectPath: z
      .string()
      .regex(REDIRECT_PATH, "must be lowercase path segments below /confirm/, such as login/callback")
      .refine((value) => value !== "session" && value !== "login", 'must not be "session" or "login": the page uses those')
      .optional()
      .describe(
        `Where the provider sends the browser back, below /confirm/ (default ${DEFAULT_LOGIN_REDIRECT_PATH}); register <publicUrl>/confirm/<redirectPath> at the provider.`,
      ),
    scopes: z
      .array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, "must be a scope token (no spaces or quotes)"))
      .max(32)
      .refine((scopes) => scopes.includes("openid"), 'must include "openid"')
      .optional()
      .describe('The scopes asked for (default ["openid"]; "openid" is required).'),
    tenantClaim: z.string().regex(CLAIM_NAME, "must be a claim name").optional().describe("The ID token claim that names the tenant (give this or tenant)."),
    tenant: z.string().min(1).max(TENANT_ID_MAX_LENGTH).optional().describe("A fixed tenant for everyone this provider signs in (give this or tenantClaim)."),
    userClaim: z.string().regex(CLAIM_NAME, "must be a claim name").optional().describe("The ID token claim that names the tenant's user (default sub)."),
    presenceTokens: z
      .boolean()
      .optional()
      .describe("Also accept toolpact's presence tokens on the page (default false: with a sign-in configured, presence tokens are refused)."),
  })
  .refine((login) => (login.tenant === undefined) !== (login.tenantClaim === undefined), {
    message: "give exactly one of tenant (a fixed tenant) and tenantClaim (the claim that names it)",
  });

/** `confirmationLogin` as written in the config file. */
export type LoginConfig = z.output<typeof loginConfigSchema>;

/**
 * The relying party's options from the config: the client secret read from `clientSecretFile` (relative
 * to the config file's directory, trailing newline dropped), `insecure` as the config says.
 * @throws Error naming the file when it cannot be read or is empty; TypeError for an issuer over plain http to another machine.
 */
export async function loginOptionsOf(login: LoginConfig, where: { readonly baseDir: string; readonly insecure: boolean }): Promise<ConfirmationLoginOptions> {
  const { clientSecretFile, ...rest } = login;
  requireSafeTransport(new URL(login.issuer), "issuer", where.insecure);
  const options: ConfirmationLoginOptions = { ...withoutUndefined(rest), insecure: where.insecure };
  if (clientSecretFile === undefined) return options;
  const file = path.resolve(where.baseDir, clientSecretFile);
  let secret: string;
  try {
    secret = (await readFile(file, "utf8")).replace(/\r?\n$/, "");
  } catch (error) {
    throw new Error(
      `confirmationLogin.clientSecretFile ${file} could not be read (${(error as NodeJS.ErrnoException).code ?? "error"}): create it or fix the path`,
    );
  }
  if (secret.length === 0) throw new Error(`confirmationLogin.clientSecretFile ${file} is empty: write the client secret into it`);
  return { ...options, clientSecret: secret };
}
