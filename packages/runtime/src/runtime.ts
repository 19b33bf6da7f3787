import { randomUUID } from "node:crypto";
import {
  ToolpactError,
  isToolpactError,
  type ConfirmationStatus,
  type ExecuteOptions,
  type ExecuteResult,
  type Manifest,
  type PreviewOptions,
  type PreviewResult,
  type ToolRef,
} from "@toolpact/contract";
import { errorClassOf, readActivityPage } from "./activity.js";
import { ActorTokenVerifier, type VerifiedActor } from "./actor-token.js";
import type {
  Activation,
  ActivityPage,
  ActivityQuery,
  CallerCredentials,
  ConfirmationDecision,
  ConfirmationPerson,
  ConfirmationRequestView,
  OperationView,
  OutboxClaim,
  OutboxItem,
  PresenceIdentity,
  Principal,
  RecoveryPolicy,
  RunHandle,
  RunOptions,
  Runtime,
  RuntimeAdmin,
  TenantPolicy,
  ToolListing,
  WaitConfirmationOptions,
} from "./api.js";
import { ConfirmationTokens } from "./confirmation-token.js";
import { uuidv7 } from "./ids.js";
import { LeaseKeeper } from "./lease-keeper.js";
import { resolveOptions, type RuntimeContext, type RuntimeOptions } from "./options.js";
import { PayloadCipher } from "./payload-cipher.js";
import { TOOL_PATTERN, normalizePolicy } from "./permission-policy.js";
import { PlatformConfirmations } from "./platform-confirmations.js";
import { WindowRateLimiter } from "./rate-limit.js";
import { normalizeRecoveryPolicy } from "./recovery-policy.js";
import { createPluginSdk, type PluginSdk } from "./plugin-sdk.js";
import { hashPluginKey, issuePluginKey, pluginKeyId, pluginKeyMatches } from "./plugin-keys.js";
import { PluginRegistry } from "./registry.js";
import { CONSUMED_TOKEN_GRACE_MS, type ActivityRecord, type OperationRecord, type PruneResult } from "./store/store.js";
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
const RUN_TTL_MAX_SECONDS = 7 * 24 * 60 * 60;
const RUN_ALLOW_MAX = 1000;
/** How soon after creation the first recovery pass runs, ms. */
const STARTUP_RECOVERY_DELAY_MS = 1000;
/** Expired leases settled per pass step. */
const RECOVERY_BATCH = 100;
/** Expired leases this instance settles at once (a re-invocation runs up to its tool's timeout). */
const RECOVERY_CONCURRENCY = 8;
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
  readonly #recoveryTimer: NodeJS.Timeout | undefined;
  readonly #startupTimer: NodeJS.Timeout | undefined;
  readonly #confirmations: PlatformConfirmations;
  readonly #cipher: PayloadCipher;
  /** Operations this instance is settling now: a pass skips them, so each is taken up once here. */
  readonly #recoveringIds = new Set<string>();
  /** Free recovery slots, and who waits for one. */
  #recoverySlots = RECOVERY_CONCURRENCY;
  readonly #recoveryWaiters: (() => void)[] = [];
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
    this.#cipher = new PayloadCipher(context.storageKey);
    this.#confirmations = new PlatformConfirmations({ context, tokens, cipher: this.#cipher, registry: this.#registry });
    this.#pipeline = new ToolPipeline({
      context,
      registry: this.#registry,
      tenants: this.#tenants,
      tokens,
      cipher: this.#cipher,
      leases: this.#leases,
      confirmations: this.#confirmations,
      previewLimiter: new WindowRateLimiter(context.previewsPerMinute, 60_000, context.clock),
      onActivityWriteFailure: () => {
        this.#activityWriteFailures++;
      },
    });
    if (context.recoveryIntervalMs > 0) {
      const maintain = () => {
        this.#maintain().catch((error: unknown) =>
          context.logger.error({ event: "recovery_failed", errorClass: (error as Error)?.constructor?.name ?? "Error" }),
        );
      };
      // A first pass soon after start-up (hosts load their plugins first, and may call settleExpiredLeases
      // themselves once they have), then one every interval.
      this.#startupTimer = setTimeout(maintain, Math.min(STARTUP_RECOVERY_DELAY_MS, context.recoveryIntervalMs));
      this.#startupTimer.unref();
      this.#recoveryTimer = setInterval(maintain, context.recoveryIntervalMs);
      this.#recoveryTimer.unref();
    }
    if (context.pruneIntervalMs > 0) {
      this.#pruneTimer = setInterval(() => {
        this.prune().catch((error: unknown) =>
          context.logger.error({ event: "prune_failed", errorClass: (error as Error)?.constructor?.name ?? "Error" }),
        );
      }, context.pruneIntervalMs);
      this.#pruneTimer.unref();
    }
    this.admin = createAdmin(this, context, this.#registry, this.#cipher);
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

  // ---------------------------------------------------------------------------------------------
  // Runs

  openRun(principal: Principal, options: RunOptions): Promise<RunHandle> {
    return this.#track(async () => {
      const allow = options?.allow;
      const ttlSeconds = options?.ttlSeconds;
      const issues: { path: string; message: string }[] = [];
      if (!Array.isArray(allow) || allow.length === 0 || allow.length > RUN_ALLOW_MAX) {
        issues.push({ path: "/allow", message: `allow is a list of 1 to ${RUN_ALLOW_MAX} tool patterns` });
      } else {
        allow.forEach((pattern, index) => {
          if (typeof pattern !== "string" || !TOOL_PATTERN.test(pattern)) {
            issues.push({ path: `/allow/${index}`, message: 'a tool pattern: "*", "<pluginId>:*", "<pluginId>:<tool>" or "<pluginId>:<tool>@<version>"' });
          }
        });
      }
      if (typeof ttlSeconds !== "number" || !Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > RUN_TTL_MAX_SECONDS) {
        issues.push({ path: "/ttlSeconds", message: `ttlSeconds is an integer from 1 to ${RUN_TTL_MAX_SECONDS}` });
      }
      if (issues.length > 0) {
        throw new ToolpactError("INPUT_INVALID", `the run cannot be opened: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`, {
          issues,
        });
      }
      const now = this.#context.clock();
      const runId = randomUUID();
      const expiresAt = now + ttlSeconds * 1000;
      await this.#context.store.insertRun({
        tenantId: principal.tenantId,
        runId,
        callerPluginId: principal.callerPluginId,
        actorUserId: principal.actor.userId,
        allow: Object.freeze([...allow]),
        createdAt: now,
        expiresAt,
      });
      return { runId, expiresAt: new Date(expiresAt).toISOString() };
    });
  }

  closeRun(principal: Principal, runId: string): Promise<void> {
    return this.#track(async () => {
      const run = typeof runId === "string" && runId.length <= 128 ? await this.#context.store.getRun(principal.tenantId, runId) : undefined;
      if (run === undefined || run.callerPluginId !== principal.callerPluginId || run.actorUserId !== principal.actor.userId) {
        throw new ToolpactError(
          "RUN_DENIED",
          `run "${String(runId).slice(0, 128)}" is not a run of this caller and user: only the caller and user that opened a run close it`,
        );
      }
      if (run.closedAt === undefined) await this.#context.store.closeRun(principal.tenantId, runId, this.#context.clock());
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Platform confirmation

  getConfirmation(principal: Principal, requestId: string): Promise<ConfirmationStatus> {
    return this.#track(() => this.#confirmations.get(principal, requestId));
  }

  waitConfirmation(principal: Principal, requestId: string, options?: WaitConfirmationOptions): Promise<ConfirmationStatus> {
    return this.#track(() => this.#confirmations.wait(principal, requestId, options));
  }

  cancelConfirmation(principal: Principal, requestId: string): Promise<void> {
    return this.#track(() => this.#confirmations.cancel(principal, requestId));
  }

  async verifyPresenceToken(token: string): Promise<PresenceIdentity> {
    try {
      return await this.#actors.verifyPresence(token);
    } catch (error) {
      throw this.#authFailure(isToolpactError(error) ? error.message : "the presence token did not verify");
    }
  }

  describeConfirmation(person: ConfirmationPerson, requestId: string): Promise<ConfirmationRequestView> {
    return this.#track(() => this.#confirmations.describe(person, requestId));
  }

  decideConfirmation(person: ConfirmationPerson, requestId: string, decision: "approve" | "deny"): Promise<ConfirmationDecision> {
    return this.#track(() => this.#confirmations.decide(person, requestId, decision));
  }

  // ---------------------------------------------------------------------------------------------
  // Recovery

  /**
   * One pass: lists expired leases and settles them, at most RECOVERY_CONCURRENCY at once on this instance,
   * so one slow re-invocation does not hold up the rest. Passes may overlap (the periodic job does not wait
   * for a pass stuck on a slow provider); an operation already being settled here is skipped, and the
   * store's lease takeover lets only one instance act on each. Resolves once this pass's work is done.
   */
  settleExpiredLeases(): Promise<number> {
    return this.#track(async () => {
      let settled = 0;
      for (;;) {
        const expired = await this.#context.store.listExpiredLeases(this.#context.clock(), RECOVERY_BATCH);
        const fresh = expired.filter((operation) => !this.#recoveringIds.has(operation.operationId));
        for (const operation of fresh) this.#recoveringIds.add(operation.operationId);
        const outcomes = await Promise.all(fresh.map((operation) => this.#recoverOne(operation)));
        const progressed = outcomes.filter(Boolean).length;
        settled += progressed;
        if (expired.length < RECOVERY_BATCH || progressed === 0) return settled;
      }
    });
  }

  /** Settles one expired lease in a recovery slot; false when it was left alone or failed (logged). */
  async #recoverOne(operation: OperationRecord): Promise<boolean> {
    try {
      while (this.#recoverySlots === 0) await new Promise<void>((resolve) => this.#recoveryWaiters.push(resolve));
      this.#recoverySlots--;
      try {
        return await this.#pipeline.recover(operation);
      } finally {
        this.#recoverySlots++;
        this.#recoveryWaiters.shift()?.();
      }
    } catch (error) {
      this.#context.logger.error({ event: "recovery_failed", operationId: operation.operationId, errorClass: errorClassOf(error) });
      return false;
    } finally {
      this.#recoveringIds.delete(operation.operationId);
    }
  }

  /** The periodic job: settle expired leases and expired confirmation requests. */
  async #maintain(): Promise<void> {
    if (this.#closing !== undefined) return;
    await Promise.all([this.settleExpiredLeases(), this.#track(() => this.#confirmations.expireDue())]);
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
      confirmationsExpiredBefore: now - this.#context.confirmationRetentionMs,
      outboxBefore: now - this.#context.outboxRetentionMs,
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
    if (this.#recoveryTimer !== undefined) clearInterval(this.#recoveryTimer);
    if (this.#startupTimer !== undefined) clearTimeout(this.#startupTimer);
    this.#confirmations.close();
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

function createAdmin(runtime: ToolpactRuntimeImpl, context: RuntimeContext, registry: PluginRegistry, cipher: PayloadCipher): RuntimeAdmin {
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
        await store.setPolicy(tenantId, JSON.stringify(normalized), policyEvent(tenantId, now));
      }, tenantId),
    setActivation: (tenantId: string, pluginId: string, activation: Activation) =>
      runtime.trackAdmin(async () => {
        checkTenant(tenantId);
        known(pluginId);
        const plugin = registry.get(pluginId)!;
        const lists = { gates: activation?.gates ?? [], hooks: activation?.hooks ?? [], guards: activation?.guards ?? [] };
        const undeclared: string[] = [];
        for (const kind of ["gates", "hooks", "guards"] as const) {
          const names = lists[kind];
          if (!Array.isArray(names) || names.some((name) => typeof name !== "string")) {
            throw invalidArgument(`/${kind}`, `${kind} is a list of names the plugin's manifest declares`);
          }
          for (const name of names) if (!plugin[kind].has(name)) undeclared.push(`${kind.slice(0, -1)} "${String(name).slice(0, 64)}"`);
        }
        if (undeclared.length > 0) {
          throw new ToolpactError(
            "CAPABILITY_UNDECLARED",
            `plugin "${pluginId}" does not declare ${undeclared.join(", ")}: only declared gates, hooks and guards can be activated`,
          );
        }
        const now = context.clock();
        await store.setActivation(
          {
            tenantId,
            pluginId,
            gates: [...new Set(lists.gates)],
            hooks: [...new Set(lists.hooks)],
            guards: [...new Set(lists.guards)],
          },
          policyEvent(tenantId, now, pluginId),
        );
      }, tenantId),
    setRecoveryPolicy: (tenantId: string, policy: RecoveryPolicy) =>
      runtime.trackAdmin(async () => {
        checkTenant(tenantId);
        const tools = [...registry.all()].flatMap((plugin) => plugin.toolList);
        const normalized = normalizeRecoveryPolicy(policy, tools);
        const now = context.clock();
        await store.setRecoveryPolicy(tenantId, JSON.stringify(normalized), policyEvent(tenantId, now));
      }, tenantId),
    claimOutbox: (tenantId: string, claim: OutboxClaim) =>
      runtime.trackAdmin(async () => {
        checkTenant(tenantId);
        const limit = claim?.limit;
        const leaseSeconds = claim?.leaseSeconds;
        if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > 1000) {
          throw invalidArgument("/limit", "limit is an integer from 1 to 1000");
        }
        if (typeof leaseSeconds !== "number" || !Number.isInteger(leaseSeconds) || leaseSeconds < 1 || leaseSeconds > 3600) {
          throw invalidArgument("/leaseSeconds", "leaseSeconds is an integer from 1 to 3600");
        }
        const now = context.clock();
        const rows = await store.claimOutbox(tenantId, limit, now, now + leaseSeconds * 1000);
        return rows.map(
          (row): OutboxItem => ({
            id: row.id,
            tenantId: row.tenantId,
            kind: row.kind,
            payload: JSON.parse(cipher.open(row.sealedPayload, `toolpact:outbox:${row.tenantId}:${row.id}`)) as unknown,
            hook: row.hook,
            operationId: row.operationId,
            tool: row.tool,
            createdAt: new Date(row.createdAt).toISOString(),
            attempts: row.attempts,
            claimedUntil: new Date(row.claimedUntil ?? now + leaseSeconds * 1000).toISOString(),
          }),
        );
      }),
    ackOutbox: (tenantId: string, ids: readonly string[]) =>
      runtime.trackAdmin(async () => {
        checkTenant(tenantId);
        if (!Array.isArray(ids) || ids.length > 1000 || ids.some((id) => typeof id !== "string" || id.length === 0 || id.length > 64)) {
          throw invalidArgument("/ids", "ids is a list of at most 1000 outbox item ids");
        }
        await store.ackOutbox(tenantId, ids);
      }),
    listActivity: (tenantId: string, query?: ActivityQuery) =>
      runtime.trackAdmin(async () => {
        checkTenant(tenantId);
        return readActivityPage(store, tenantId, undefined, query);
      }),
  });
}

/** A configuration change as the activity log shows it (`kind: policy`). */
function policyEvent(tenantId: string, at: number, pluginId?: string): ActivityRecord {
  return {
    id: uuidv7(at),
    tenantId,
    at,
    kind: "policy",
    phase: "change",
    outcome: "succeeded",
    ...(pluginId === undefined ? {} : { providerPluginId: pluginId }),
  };
}

function checkTenant(tenantId: string): void {
  if (typeof tenantId !== "string" || tenantId.length === 0 || tenantId.length > TENANT_ID_MAX) {
    throw invalidArgument("/tenantId", `a tenant id is a non-empty string of at most ${TENANT_ID_MAX} characters`);
  }
}

function invalidArgument(path: string, message: string): ToolpactError {
  return new ToolpactError("INPUT_INVALID", message, { issues: [{ path, message }] });
}
