/**
 * The platform's identity service, as far as the demo plays it: it signs actor tokens (what a caller
 * sends as `X-Toolpact-Actor`) and presence tokens (what signs a person in to the confirmation page).
 */
import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";

/** The identity service's signing setup: toolpact's `actorIssuer` and `TOOLPACT_ACTOR_SECRET`. */
export interface IdentityService {
  readonly issuer: string;
  readonly secret: Uint8Array;
}

/** A user in a tenant. */
export interface Person {
  readonly tenantId: string;
  readonly userId: string;
}

/** Claims of an actor token beyond the person. */
export interface ActorTokenOptions {
  /** Verification level 0..3 (`lvl`); default 1. */
  readonly level?: number;
  /** The plugin the token is issued to (`azp`); toolpact refuses it from any other caller. */
  readonly issuedTo?: string;
  readonly roles?: readonly string[];
  /** Lifetime in seconds; default 900. */
  readonly ttlSeconds?: number;
}

/** The actor token audience toolpact checks. */
export const ACTOR_AUDIENCE = "toolpact";
/** The presence token audience the confirmation page checks. */
export const PRESENCE_AUDIENCE = "toolpact-presence";

/** An HS256 actor token: `sub` user, `tid` tenant, `lvl`, optional `azp` and `roles`, `aud: "toolpact"`. */
export function mintActorToken(identity: IdentityService, person: Person, options: ActorTokenOptions = {}): Promise<string> {
  const claims: Record<string, unknown> = { tid: person.tenantId, lvl: options.level ?? 1 };
  if (options.issuedTo !== undefined) claims.azp = options.issuedTo;
  if (options.roles !== undefined) claims.roles = [...options.roles];
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(identity.issuer)
    .setAudience(ACTOR_AUDIENCE)
    .setSubject(person.userId)
    .setIssuedAt()
    .setExpirationTime(`${options.ttlSeconds ?? 900}s`)
    .sign(identity.secret);
}

/** A short-lived HS256 presence token (`aud: "toolpact-presence"`): proof that this person is at the browser now. */
export function mintPresenceToken(identity: IdentityService, person: Person, ttlSeconds = 120): Promise<string> {
  return new SignJWT({ tid: person.tenantId })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(identity.issuer)
    .setAudience(PRESENCE_AUDIENCE)
    .setSubject(person.userId)
    .setJti(randomUUID())
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(identity.secret);
}
