import {
  ToolpactError,
  isToolpactError,
  type ExecuteOptions,
  type ExecuteResult,
  type Manifest,
  type PreviewOptions,
  type PreviewResult,
  type ToolRef,
} from "@toolpact/contract";
import { readActivityPage } from "./activity.js";
import { ActorTokenVerifier, type VerifiedActor } from "./actor-token.js";
import type {
  ActivityPage,
  ActivityQuery,
  CallerCredentials,
  OperationView,
  Principal,
  Runtime,
  RuntimeAdmin,
  TenantPolicy,
  ToolListing,
} from "./api.js";
import { ConfirmationTokens } from "./confirmation-token.js";
import { uuidv7 } from "./ids.js";
import { LeaseKeeper } from "./lease-keeper.js";
import { resolveOptions, type RuntimeContext, type RuntimeOptions } from "./options.js";
import { PayloadCipher } from "./payload-cipher.js";
import { normalizePolicy } from "./permission-policy.js";
import { createPluginSdk, type PluginSdk } from "./plugin-sdk.js";
import { hashPluginKey, issuePluginKey, pluginKeyId, pluginKeyMatches } from "./plugin-keys.js";
import { PluginRegistry } from "./registry.js";
import { CONSUMED_TOKEN_GRACE_MS, type PruneResult } from "./store/store.js";
import { TenantConfigCache } from "./tenant-config.js";
import { ToolPipeline } from "./tool-pipeline.js";

/** Counters a host can export (step-1 failures are not activity events: they are counted here). */
export interface RuntimeMetrics {
  /** Requests refused at step 1 (bad plugin key or actor token). */
  readonly authFailures: number;
  /** Activity events that could not be written (the store failed). */
  readonly activityWriteFailures: number;
  /** Calls in the pipeline right now. */
  readonly inFlight: number;
}

/** The runtime as a host holds it: the `Runtime` surface plus plugin loading, metrics and retention. */
export interface ToolpactRuntime extends Runtime {
  /** Makes a plugin known to this host (from its validated manifest). */
  registerPlugin(manifest: Manifest): void;
  /** The SDK bound to one registered plugin: what `activate(sdk)` receives. */
  sdkFor(pluginId: string): PluginSdk;
  /** A snapshot of the counters. */
  readonly metrics: RuntimeMetrics;
  /** Deletes expired consumed token ids and idempotency records, and activity past retention. */
  prune(): Promise<PruneResult>;
}

const TENANT_ID_MAX = 128;
/** Compared against when a key id is unknown, so a miss costs what a hit costs. */
const DECOY_HASH = hashPluginKey("tpk_00000000000000000000_decoy");

/**
 * Creates the runtime: checks secrets, imports keys once, and returns the pipeline behind the
 * `Runtime` surface. Register plugins with `registerPlugin`, hand each `sdkFor(id)` to its `activate`.
 * @example
 * const runtime = await createRuntime({ store: await createSqliteStore({ path: ".toolpact/toolpact.db" }),
 *   signingKeys: parseSigningKeys(env.TOOLPACT_SIGNING_KEYS), storageKey, actorTokens: { issuer, secret } });
 */
export async function createRuntime(options: RuntimeOptions): Promise<ToolpactRuntime> {
  const context = resolveOptions(options);
  const [tokens, actors] = await Promise.all([
    ConfirmationTokens.create(context.signingKeys, context.confirmationTtlSeconds, context.clock),
    ActorTokenVerifier.create(context.actorTokens, context.clock),
  ]);
  return new ToolpactRuntimeImpl(context, tokens, actors);
}

class ToolpactRuntimeImpl implements ToolpactRuntime {
  readonly #context: RuntimeContext;
  readonly #registry = new PluginRegistry();
  readonly #actors: ActorTokenVerifier;
  readonly #pipeline: ToolPipeline;
  readonly #tenants: TenantConfigCache;
  readonly #leases: LeaseKeeper;
  readonly #sdks = new Map<string, PluginSdk>();
  readonly #pruneTimer: NodeJS.Timeout | undefined;
  readonly admin: RuntimeAdmin;
  #authFailures = 0;
  #activityWriteFailures = 0;
  #inFlight = 0;
  #drained: (() => void) | undefined;
  #closing: Promise<void> | undefined;

  constructor(context: RuntimeContext, tokens: ConfirmationTokens, actors: ActorTokenVerifier) {
    this.#context = context;
    this.#actors = actors;
    this.#leases = new LeaseKeeper({
      store: context.store,
      owner: context.instanceId,
      leaseMs: context.leaseMs,
      clock: context.clock,
      logger: context.logger,
    });
    this.#tenants = new TenantConfigCache({
      store: context.store,
      refreshMs: context.configRefreshMs,
      clock: context.clock,
      onBadPolicy: (tenantId) =>
        context.logger.error({ event: "stored_policy_unreadable", tenantId, effect: "every call is denied until a new policy is set" }),
    });
    this.#pipeline = new ToolPipeline({
      context,
      registry: this.#registry,
      tenants: this.#tenants,
      tokens,
      cipher: new PayloadCipher(context.storageKey),
      leases: this.#leases,
      onActivityWriteFailure: () => {
        this.#activityWriteFailures++;
      },
    });
    if (context.pruneIntervalMs > 0) {
      this.#pruneTimer = setInterval(() => {
        this.prune().catch((error: unknown) =>
          context.logger.error({ event: "prune_failed", errorClass: (error as Error)?.constructor?.name ?? "Error" }),
        );
      }, context.pruneIntervalMs);
      this.#pruneTimer.unref();
    }
    this.admin = createAdmin(this, context, this.#registry);
  }

  get manifests(): ReadonlyMap<string, Manifest> {
    return this.#registry.manifests;
  }

  get metrics(): RuntimeMetrics {
    return {
      authFailures: this.#authFailures,
      activityWriteFailures: this.#activityWriteFailures,
      inFlight: this.#inFlight,
    };
  }

  registerPlugin(manifest: Manifest): void {
    this.#registry.register(manifest);
  }

  sdkFor(pluginId: string): PluginSdk {
    let sdk = this.#sdks.get(pluginId);
    if (sdk === undefined) {
      if (this.#registry.get(pluginId) === undefined) {
        throw new ToolpactError(
          "CAPABILITY_UNDECLARED",
          `plugin "${pluginId}" is not registered in this host: call registerPlugin(manifest) before sdkFor`,
        );
      }
      sdk = createPluginSdk(
        {
          registry: this.#registry,
          runtime: this,
          scope: this.#pipeline.scope,
          verifyActor: (token, caller) => this.#verifyInProcessActor(token, caller),
          clock: this.#context.clock,
        },
        pluginId,
      );
      this.#sdks.set(pluginId, sdk);
    }
    return sdk;
  }

  // ---------------------------------------------------------------------------------------------
  // Step 1

  async authenticate(credentials: CallerCredentials): Promise<Principal> {
    const { pluginKey, actorToken } = credentials ?? ({} as CallerCredentials);
    if (typeof pluginKey !== "string" || pluginKey === "") {
      throw this.#authFailure("no plugin key: send Authorization: Bearer <plugin key>");
    }
    const keyId = pluginKeyId(pluginKey);
    if (keyId === undefined) throw this.#authFailure("the plugin key is malformed: it is not a key toolpact issued");
    const record = await this.#context.store.findPluginKey(keyId);
    const matches = pluginKeyMatches(pluginKey, record?.keyHash ?? DECOY_HASH);
    if (record === undefined || !matches) throw this.#authFailure("the plugin key is not known", { keyId });
    if (record.revokedAt !== undefined) {
      throw this.#authFailure("the plugin key was revoked: ask the tenant admin for a new one", { keyId });
    }
    if (typeof actorToken !== "string" || actorToken === "") {
      throw this.#authFailure("no actor token: send X-Toolpact-Actor: <actor token>", { keyId });
    }
    let verified: VerifiedActor;
    try {
      verified = await this.#actors.verify(actorToken);
    } catch (error) {
      throw this.#authFailure(isToolpactError(error) ? error.message : "the actor token did not verify", { keyId });
    }
    if (verified.tenantId !== record.tenantId) {
      throw this.#authFailure("the actor token's tenant (tid) is not the plugin key's tenant", { keyId });
    }
    if (verified.authorizedParty !== undefined && verified.authorizedParty !== record.pluginId) {
      throw this.#authFailure("the actor token was issued to another plugin (azp)", { keyId });
    }
    return Object.freeze({ tenantId: record.tenantId, callerPluginId: record.pluginId, actor: verified.actor });
  }

  async #verifyInProcessActor(actorToken: string, pluginId: string): Promise<VerifiedActor> {
    if (typeof actorToken !== "string" || actorToken === "") {
      throw this.#authFailure("no actor token: sdk.withActor needs the actor token of the user to act for", { pluginId });
    }
    let verified: VerifiedActor;
    try {
      verified = await this.#actors.verify(actorToken);
    } catch (error) {
      throw this.#authFailure(isToolpactError(error) ? error.message : "the actor token did not verify", { pluginId });
    }
    if (verified.authorizedParty !== undefined && verified.authorizedParty !== pluginId) {
      throw this.#authFailure("the actor token was issued to another plugin (azp)", { pluginId });
    }
    return verified;
  }

  #authFailure(reason: string, fields: Record<string, string> = {}): ToolpactError {
    this.#authFailures++;
    this.#context.logger.warn({ event: "authentication_failed", reason, ...fields });
    return new ToolpactError("UNAUTHENTICATED", reason);
  }

  // ---------------------------------------------------------------------------------------------
  // Calls

  listTools(principal: Principal): Promise<readonly ToolListing[]> {
    return this.#track(() => this.#pipeline.listTools(principal));
  }

  preview(principal: Principal, ref: ToolRef, input: unknown, options?: PreviewOptions): Promise<PreviewResult> {
    return this.#track(() => this.#pipeline.preview(principal, ref, input, options));
  }

  execute(principal: Principal, ref: ToolRef, input: unknown, options?: ExecuteOptions): Promise<ExecuteResult> {
    return this.#track(() => this.#pipeline.execute(principal, ref, input, options));
  }

  getOperation(principal: Principal, operationId: string): Promise<OperationView> {
    return this.#track(() => this.#pipeline.getOperation(principal, operationId));
  }

  listActivity(principal: Principal, query?: ActivityQuery): Promise<ActivityPage> {
    return this.#track(() => readActivityPage(this.#context.store, principal.tenantId, principal.actor.userId, query));
  }

  async #track<T>(work: () => Promise<T>): Promise<T> {
    if (this.#closing !== undefined) {
      throw new ToolpactError("STORE_UNAVAILABLE", "the runtime is shutting down: retry against another instance");
    }
    this.#inFlight++;
    try {
      return await work();
    } finally {
      this.#inFlight--;
      if (this.#inFlight === 0) this.#drained?.();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Lifecycle

  /** Admin writes share the in-flight accounting of calls; a config write applies to this runtime at once. */
  trackAdmin<T>(work: () => Promise<T>, tenantId?: string): Promise<T> {
    if (tenantId === undefined) return this.#track(work);
    return this.#track(async () => {
      try {
        return await work();
      } finally {
        this.#tenants.invalidate(tenantId);
      }
    });
  }

  prune(): Promise<PruneResult> {
    const now = this.#context.clock();
    return this.#context.store.prune({
      now,
      consumedTokensExpiredBefore: now - CONSUMED_TOKEN_GRACE_MS,
      activityBefore: now - this.#context.activityRetentionMs,
    });
  }

  async ready(): Promise<boolean> {
    if (this.#closing !== undefined) return false;
    return this.#context.store.ping();
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    if (this.#pruneTimer !== undefined) clearInterval(this.#pruneTimer);
    if (this.#inFlight > 0) {
      const drained = new Promise<void>((resolve) => {
        this.#drained = resolve;
      });
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), this.#context.drainTimeoutMs);
      });
      const late = await Promise.race([drained.then(() => false), timedOut]);
      clearTimeout(timer);
      if (late) {
        this.#context.logger.warn({ event: "close_drain_timeout", inFlight: this.#inFlight });
        for (const controller of this.#pipeline.running) {
          controller.abort(Object.assign(new Error("the runtime is shutting down"), { name: "AbortError" }));
        }
      }
    }
    this.#leases.stop();
    await this.#context.store.close();
  }
}

function createAdmin(runtime: ToolpactRuntimeImpl, context: RuntimeContext, registry: PluginRegistry): RuntimeAdmin {
  const { store } = context;
  const known = (pluginId: string): void => {
    if (typeof pluginId !== "string" || registry.get(pluginId) === undefined) {
      throw new ToolpactError(
        "PROVIDER_NOT_FOUND",
        `no plugin "${String(pluginId).slice(0, 128)}" is registered in this host: load it (registerPlugin) first`,
      );
    }
  };
  return Object.freeze({
    installPlugin: (tenantId: string, pluginId: string) =>
      runtime.trackAdmin(async () => {
        checkTenant(tenantId);
        known(pluginId);
        await store.installPlugin(tenantId, pluginId, context.clock());
      }, tenantId),
    setPluginEnabled: (tenantId: string, pluginId: string, enabled: boolean) =>
      runtime.trackAdmin(async () => {
        checkTenant(tenantId);
        known(pluginId);
        if (typeof enabled !== "boolean") throw invalidArgument("/enabled", "enabled is true or false");
        if (!(await store.setPluginEnabled(tenantId, pluginId, enabled, context.clock()))) {
          throw new ToolpactError(
            "PROVIDER_NOT_FOUND",
            `plugin "${pluginId}" is not installed for tenant "${tenantId}": install it first with admin.installPlugin`,
          );
        }
      }, tenantId),
    issuePluginKey: (tenantId: string, pluginId: string) =>
      runtime.trackAdmin(async () => {
        checkTenant(tenantId);
        known(pluginId);
        const issued = issuePluginKey();
        await store.insertPluginKey({
          keyId: issued.keyId,
          tenantId,
          pluginId,
          keyHash: issued.keyHash,
          createdAt: context.clock(),
        });
        return { keyId: issued.keyId, key: issued.key };
      }),
    revokePluginKey: (tenantId: string, keyId: string) =>
      runtime.trackAdmin(async () => {
        checkTenant(tenantId);
        if (typeof keyId !== "string" || !(await store.revokePluginKey(tenantId, keyId, context.clock()))) {
          throw invalidArgument("/keyId", `tenant "${tenantId}" has no live plugin key "${String(keyId).slice(0, 64)}"`);
        }
      }),
    setPolicy: (tenantId: string, policy: TenantPolicy) =>
      runtime.trackAdmin(async () => {
        checkTenant(tenantId);
        const normalized = normalizePolicy(policy);
        const now = context.clock();
        await store.setPolicy(tenantId, JSON.stringify(normalized), {
          id: uuidv7(now),
          tenantId,
          at: now,
          kind: "policy",
          phase: "change",
          outcome: "succeeded",
        });
      }, tenantId),
    listActivity: (tenantId: string, query?: ActivityQuery) =>
      runtime.trackAdmin(async () => {
        checkTenant(tenantId);
        return readActivityPage(store, tenantId, undefined, query);
      }),
  });
}

function checkTenant(tenantId: string): void {
  if (typeof tenantId !== "string" || tenantId.length === 0 || tenantId.length > TENANT_ID_MAX) {
    throw invalidArgument("/tenantId", `a tenant id is a non-empty string of at most ${TENANT_ID_MAX} characters`);
  }
}

function invalidArgument(path: string, message: string): ToolpactError {
  return new ToolpactError("INPUT_INVALID", message, { issues: [{ path, message }] });
}
