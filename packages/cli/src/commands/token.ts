import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import type { CliIo } from "../io.js";
import { parseCommandArgs } from "../command-args.js";
import { findActorSigning, type ActorSigning } from "../actor-signing.js";

const HELP = `usage: toolpact token --user <id> [--tenant <id>] [--level 0..3] [--roles a,b] [--caller <plugin id>]
                      [--presence] [--ttl <seconds>] [--config toolpact.config.json]

Prints a token signed as the platform's identity service signs it (HS256 with the actor secret):
  (default)    an actor token: send it as X-Toolpact-Actor (claims sub, tid, lvl, roles, azp)
  --presence   a presence token for the confirmation page, single-use (a fresh jti each time), at most
               600 s: open <server>/confirm/session?token=<it>&next=/confirm/<requestId>

  --user <id>        the user (sub); required
  --tenant <id>      the tenant (tid); default "dev" with a running \`toolpact dev\`'s secret
  --level <n>        verification level (lvl), 0 to 3; default 1
  --roles <a,b>      roles, comma-separated
  --caller <id>      the plugin the token is issued to (azp): only that caller may send it
  --ttl <seconds>    lifetime; default 900 (actor, at most 86400: 24 hours), 120 (presence, at most 600)

The secret is the one \`toolpact serve\` reads: TOOLPACT_ACTOR_SECRET, the file TOOLPACT_ACTOR_SECRET_FILE
names, or "secrets.actorSecret" in the config; the issuer is the config's "actorIssuer", else
"toolpact-dev" (what \`serve --dev\` accepts). Without any secret, the throwaway one of the
\`toolpact dev\` running in this folder (.toolpact/dev) is used, with its issuer and tenant; once that
\`toolpact dev\` has stopped, its secret is stale and refused. The secret is at least 32 bytes, and a
file holding it is readable by its owner alone (chmod 600).
Exit 0 with the token on stdout, 1 when no usable secret is found, 2 on usage errors.`;

const PRESENCE_MAX_TTL_SECONDS = 600;
/** The longest actor token lifetime `toolpact token` mints: a day (a leaked token should not outlive it). */
export const ACTOR_MAX_TTL_SECONDS = 24 * 60 * 60;

/** `toolpact token`: mints an actor or presence token from the configured actor secret. */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs({ name: "token", help: HELP }, io, {
    args: [...args],
    options: {
      user: { type: "string", short: "u" },
      tenant: { type: "string", short: "t" },
      level: { type: "string" },
      roles: { type: "string" },
      caller: { type: "string" },
      presence: { type: "boolean" },
      ttl: { type: "string" },
      config: { type: "string", short: "c" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (typeof parsed === "number") return parsed;
  const { values } = parsed;
  const usage = (message: string) => {
    io.stderr(`toolpact token: ${message}\n\n${HELP}`);
    return 2;
  };
  if (values.user === undefined || values.user.trim() === "") return usage("say who the token is for with --user <id>");
  const level = Number(values.level ?? "1");
  if (!Number.isInteger(level) || level < 0 || level > 3) return usage(`--level is an integer from 0 to 3, got "${values.level}"`);
  const presence = values.presence === true;
  const ttl = Number(values.ttl ?? (presence ? "120" : "900"));
  const maxTtl = presence ? PRESENCE_MAX_TTL_SECONDS : ACTOR_MAX_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > maxTtl) {
    return usage(
      `--ttl is a whole number of seconds from 1 to ${maxTtl} for ${presence ? "a presence token" : "an actor token (24 hours)"}, got "${values.ttl}"`,
    );
  }
  if (presence && (values.level !== undefined || values.roles !== undefined || values.caller !== undefined)) {
    return usage("a presence token names only the user and tenant: drop --level, --roles and --caller");
  }

  let signing: ActorSigning;
  try {
    signing = findActorSigning({ cwd: io.cwd, env: io.env, ...(values.config === undefined ? {} : { config: values.config }) });
  } catch (error) {
    io.stderr(`toolpact token: ${(error as Error).message}`);
    return 1;
  }
  const tenantId = values.tenant ?? signing.devTenant;
  if (tenantId === undefined || tenantId.trim() === "") {
    return usage(`say which tenant with --tenant <id> (the secret comes from ${signing.source}, which names no tenant)`);
  }
  const subject = { issuer: signing.issuer, secret: signing.secret, tenantId, userId: values.user, ttl };
  const token = presence
    ? await mintPresenceToken(subject)
    : await mintActorToken(subject, {
        level,
        ...(values.roles === undefined
          ? {}
          : {
              roles: values.roles
                .split(",")
                .map((role) => role.trim())
                .filter(Boolean),
            }),
        ...(values.caller === undefined ? {} : { caller: values.caller }),
      });
  io.stdout(token);
  return 0;
}

/** Who a token is for and how it is signed. */
interface TokenSubject {
  readonly issuer: string;
  readonly secret: Uint8Array;
  readonly tenantId: string;
  readonly userId: string;
  readonly ttl: number;
}

/** An HS256 actor token: `sub`, `tid`, `lvl`, optional `roles` and `azp`, `aud: "toolpact"`. */
export function mintActorToken(
  subject: TokenSubject,
  claims: { readonly level: number; readonly roles?: readonly string[]; readonly caller?: string },
): Promise<string> {
  return new SignJWT({
    tid: subject.tenantId,
    lvl: claims.level,
    ...(claims.roles === undefined ? {} : { roles: [...claims.roles] }),
    ...(claims.caller === undefined ? {} : { azp: claims.caller }),
  })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(subject.issuer)
    .setAudience("toolpact")
    .setSubject(subject.userId)
    .setIssuedAt()
    .setExpirationTime(`${subject.ttl}s`)
    .sign(subject.secret);
}

/**
 * A single-use presence token (a fresh `jti`), `aud: "toolpact-presence"`: proof the person is at the
 * browser now; with `requestId`, its `cfr` claim binds the sign-in to that one confirmation request.
 */
export function mintPresenceToken(subject: TokenSubject, requestId?: string): Promise<string> {
  return new SignJWT({ tid: subject.tenantId, ...(requestId === undefined ? {} : { cfr: requestId }) })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(subject.issuer)
    .setAudience("toolpact-presence")
    .setSubject(subject.userId)
    .setJti(randomUUID())
    .setIssuedAt()
    .setExpirationTime(`${subject.ttl}s`)
    .sign(subject.secret);
}
