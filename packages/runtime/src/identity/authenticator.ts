import { ToolpactError, isToolpactError } from "@toolpact/contract";
import type { CallerCredentials, CallTraceContext, PresenceIdentity, Principal } from "../api.js";
import type { Logger } from "../logger.js";
import type { PluginKeyLookup, Store } from "../store/store.js";
import type { ActorTokenVerifier, VerifiedActor } from "./actor-token.js";
import type { VerifiedPresence } from "./presence-token.js";
import { PluginKeyCache } from "./plugin-key-cache.js";
import { hashPluginKey, pluginKeyId, pluginKeyMatches } from "./plugin-keys.js";
import { traceContextOf } from "../telemetry/trace-context.js";

/** Compared against when a key id is unknown, so a miss costs what a hit costs. */
const DECOY_HASH = hashPluginKey("tpk_00000000000000000000_decoy");

/** What authentication needs. */
export interface AuthenticatorOptions {
  readonly store: Store;
  readonly actors: ActorTokenVerifier;
  readonly logger: Logger;
}

/**
 * Authentication: who is calling. A plugin key bound to (tenant, plugin) and an actor token for that tenant and
 * caller; an in-process plugin's actor token (`sdk.withActor`); the confirmation page's presence token.
 * Keys are kept in a `PluginKeyCache` while the store's change feed vouches for them, and every call's
 * chain confirms its key against the tenant config it is decided under (`confirmKey`), which the call's
 * commit checks again: a revocation moves that version, so no execute commits under a revoked key.
 * Failures are logged and counted here: they are not activity events (no trustworthy actor yet).
 */
export class Authenticator {
  readonly #store: Store;
  readonly #keys: PluginKeyCache;
  readonly #actors: ActorTokenVerifier;
  readonly #logger: Logger;
  #failures = 0;

  constructor(options: AuthenticatorOptions) {
    this.#store = options.store;
    this.#keys = new PluginKeyCache(options.store);
    this.#actors = options.actors;
    this.#logger = options.logger;
  }

  /** Requests refused at authentication so far. */
  get failures(): number {
    return this.#failures;
  }

  /** The principal of a plugin key and an actor token. @throws UNAUTHENTICATED saying which check failed. */
  async authenticate(credentials: CallerCredentials): Promise<Principal> {
    const { pluginKey, actorToken } = credentials ?? ({} as CallerCredentials);
    if (typeof pluginKey !== "string" || pluginKey === "") {
      throw this.#failure("no plugin key: send Authorization: Bearer <plugin key>");
    }
    const keyId = pluginKeyId(pluginKey);
    if (keyId === undefined) throw this.#failure("the plugin key is malformed: it is not a key toolpact issued");
    const record = this.#keys.trusted(keyId) ?? (await this.#keys.read(keyId));
    const matches = pluginKeyMatches(pluginKey, record?.keyHash ?? DECOY_HASH);
    if (record === undefined || !matches) throw this.#failure("the plugin key is not known", { keyId });
    if (record.revokedAt !== undefined) {
      throw this.#failure("the plugin key was revoked: ask the tenant admin for a new one", { keyId });
    }
    if (typeof actorToken !== "string" || actorToken === "") {
      throw this.#failure("no actor token: send X-Toolpact-Actor: <actor token>", { keyId });
    }
    const verified = await this.#verify(actorToken, { keyId });
    if (verified.tenantId !== record.tenantId) {
      throw this.#failure("the actor token's tenant (tid) is not the plugin key's tenant", { keyId });
    }
    if (verified.authorizedParty !== undefined && verified.authorizedParty !== record.pluginId) {
      throw this.#failure("the actor token was issued to another plugin (azp)", { keyId });
    }
    return Object.freeze({
      tenantId: record.tenantId,
      callerPluginId: record.pluginId,
      actor: verified.actor,
      via: credentials.via ?? "in-process",
      keyId,
      authenticatedBy: "plugin-key",
      ...traced(credentials.traceContext),
    });
  }

  /**
   * The principal's key is still live under the tenant config version a call is decided under: at once
   * when the kept key was read at that version, else from the store. `committed`: the call's commit checks
   * that version, so a key kept from any epoch will do (a revocation since then moved the version and the
   * commit refuses). A principal without a key (an in-process plugin's) has nothing to confirm.
   * @throws UNAUTHENTICATED when the key was revoked.
   */
  confirmKey(principal: Principal, decided: { readonly tenantConfigVersion: number; readonly committed: boolean }): void | Promise<void> {
    const keyId = principal.keyId;
    if (keyId === undefined) return;
    const { tenantConfigVersion } = decided;
    const kept = decided.committed ? this.#keys.kept(keyId) : this.#keys.trusted(keyId);
    if (kept !== undefined && kept.tenantConfigVersion === tenantConfigVersion) return this.#stillLive(kept, principal);
    return this.#keys.read(keyId).then((read) => this.#stillLive(read, principal));
  }

  #stillLive(key: PluginKeyLookup | undefined, principal: Principal): void {
    if (key === undefined || key.tenantId !== principal.tenantId || key.pluginId !== principal.callerPluginId) {
      throw this.#failure("the plugin key is not known", { keyId: principal.keyId ?? "" });
    }
    if (key.revokedAt !== undefined) {
      throw this.#failure("the plugin key was revoked: ask the tenant admin for a new one", { keyId: key.keyId });
    }
  }

  /** The actor an in-process plugin acts for through `sdk.withActor(actorToken)`; its `azp`, if any, must be the plugin. */
  async verifyInProcessActor(actorToken: string, pluginId: string): Promise<VerifiedActor> {
    if (typeof actorToken !== "string" || actorToken === "") {
      throw this.#failure("no actor token: sdk.withActor needs the actor token of the user to act for", { pluginId });
    }
    const verified = await this.#verify(actorToken, { pluginId });
    if (verified.authorizedParty !== undefined && verified.authorizedParty !== pluginId) {
      throw this.#failure("the actor token was issued to another plugin (azp)", { pluginId });
    }
    return verified;
  }

  /**
   * The person a presence token signs in to the confirmation page. A presence token signs in once: its
   * `jti` is recorded in the store (on every instance), and a second use is refused.
   */
  async verifyPresence(token: string, now: number): Promise<PresenceIdentity> {
    let verified: VerifiedPresence;
    try {
      verified = await this.#actors.verifyPresence(token);
    } catch (error) {
      throw this.#failure(isToolpactError(error) ? error.message : "the presence token did not verify");
    }
    const { tenantId, userId, tokenId, expiresAt, requestId } = verified;
    if (!(await this.#store.usePresenceToken({ tenantId, tokenId, userId, usedAt: now, expiresAt }))) {
      throw this.#failure("this presence token was used already: a presence token signs in once; open the confirmation link from your app again", {
        tenantId,
      });
    }
    return Object.freeze(requestId === undefined ? { tenantId, userId, expiresAt } : { tenantId, userId, expiresAt, requestId });
  }

  async #verify(actorToken: string, fields: Record<string, string>): Promise<VerifiedActor> {
    try {
      return await this.#actors.verify(actorToken);
    } catch (error) {
      throw this.#failure(isToolpactError(error) ? error.message : "the actor token did not verify", fields);
    }
  }

  #failure(reason: string, fields: Record<string, string> = {}): ToolpactError {
    this.#failures++;
    this.#logger.warn({ event: "authentication_failed", reason, ...fields });
    return new ToolpactError("UNAUTHENTICATED", reason);
  }
}

/** The trace context credentials carry, checked again (an in-process caller hands it over as it likes). */
function traced(given: CallerCredentials["traceContext"]): { traceContext?: CallTraceContext } {
  if (given === undefined) return {};
  const traceContext = traceContextOf(given.traceparent, given.tracestate, given.jsonrpcRequestId);
  return traceContext === undefined ? {} : { traceContext };
}
