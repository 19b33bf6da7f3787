import {
  ToolpactError,
  type ConfirmationStatus,
  type ExecuteOptions,
  type ExecuteResult,
  type Manifest,
  type PreviewOptions,
  type PreviewResult,
  type ToolRef,
} from "@toolpact/contract";
import { readActivityPage } from "./activity/activity-page.js";
import { ActivityWriter } from "./activity/call-trace.js";
import { checkCallerId, checkCallOptions } from "./caller-ids.js";
import { createAdmin } from "./admin.js";
import type {
  ActivityPage,
  ActivityQuery,
  CallerCredentials,
  ConfirmationDecision,
  ConfirmationPerson,
  ConfirmationRequestView,
  OperationView,
  PresenceIdentity,
  Principal,
  RunHandle,
  RunOptions,
  Runtime,
  RuntimeAdmin,
  ToolChanges,
  ToolListing,
  WaitConfirmationOptions,
} from "./api.js";
import type { CallParts } from "./calls/call.js";
import { runExecute } from "./calls/execute.js";
import { runPreview } from "./calls/preview.js";
import { OperationRecovery } from "./calls/recover.js";
import { ConfirmationTokens } from "./confirmation/confirmation-tokens.js";
import { PlatformConfirmations } from "./confirmation/platform-confirmations.js";
import { ActorTokenVerifier } from "./identity/actor-token.js";
import { Authenticator } from "./identity/authenticator.js";
import { LeaseKeeper } from "./ledger/lease-keeper.js";
import { readOperation } from "./ledger/operation-view.js";
import { RecoveryScheduler } from "./ledger/recovery-scheduler.js";
import { resolveOptions, type RuntimeContext, type RuntimeOptions } from "./options.js";
import { PluginCodeRunner } from "./plugin-code/plugin-code-runner.js";
import { createPluginSdk, type PluginSdk } from "./plugin-sdk.js";
import { WindowRateLimiter } from "./rate-limit.js";
import { PluginRegistry } from "./registry.js";
import { closeRun, openRun } from "./runs.js";
import { SealedPayloads } from "./sealed/sealed-payloads.js";
import { CONSUMED_TOKEN_GRACE_MS, type PruneResult } from "./store/store.js";
import { Telemetry } from "./telemetry/telemetry.js";
import type { GrantChoice } from "./grants/grant-from-request.js";
import { createRuntimeGrants } from "./grants/runtime-grants.js";
import { wireTasks } from "./tasks/runtime-tasks.js";
import type { TaskService } from "./tasks/task-service.js";
import { checkpointActivity, type CheckpointRun } from "./audit/chain-checkpointer.js";
import { TenantConfigCache } from "./tenant-config.js";
import { listTools } from "./tool-listing.js";

/** Counters a host can export (authentication failures are not activity events: they are counted here). */
export interface RuntimeMetrics {
  /** Requests refused at authentication (bad plugin key or actor token). */
  readonly authFailures: number;
  /** Activity events that could not be written (the store failed). */
  readonly activityWriteFailures: number;
  /** Calls in the runtime right now. */
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
  /** Deletes what is past its retention: consumed token ids, idempotency records, activity, confirmations, runs, outbox rows, settled operations. */
  prune(): Promise<PruneResult>;
  /**
   * Links settled activity events into the hash chain and signs a checkpoint (the job `audit` schedules;
   * `toolpact audit checkpoint` runs it at once). A run while one is in flight waits for that one's answer.
   */
  checkpointActivity(): Promise<CheckpointRun>;
}

/** How soon after creation the first recovery pass runs, ms. */
const STARTUP_RECOVERY_DELAY_MS = 1000;

/**
 * Creates the runtime: checks secrets, imports keys once, and wires the call paths behind the `Runtime`
 * surface. Register plugins with `registerPlugin`, hand each `sdkFor(id)` to its `activate`.
 * @example
 * const runtime = await createRuntime({ store: await createSqliteStore({ path: ".toolpact/toolpact.db" }),
 *   signingKeys: parseSigningKeys(env.TOOLPACT_SIGNING_KEYS), storageKey, actorTokens: { issuer, secret } });
 */
export async function createRuntime(options: RuntimeOptions): Promise<ToolpactRuntime> {
  const resolved = resolveOptions(options);
  const telemetry = await Telemetry.create(options.telemetry);
  const context: RuntimeContext = { ...resolved, store: telemetry.store(resolved.store) };
  const [tokens, actors] = await Promise.all([
    ConfirmationTokens.create(context.signingKeys, context.confirmationTtlSeconds, context.clock),
    ActorTokenVerifier.create(context.actorTokens, context.clock),
  ]);
  return new ToolpactRuntimeImpl(context, tokens, actors, telemetry);
}

class ToolpactRuntimeImpl implements ToolpactRuntime {
  readonly #context: RuntimeContext;
  readonly #registry = new PluginRegistry();
  readonly #identity: Authenticator;
  readonly #parts: CallParts;
  readonly #recovery: RecoveryScheduler;
  readonly #sdks = new Map<string, PluginSdk>();
  readonly #timers: NodeJS.Timeout[] = [];
  #checkpointing: Promise<CheckpointRun> | undefined;
  readonly #unsubscribe: () => void;
  readonly #unsubscribeTasks: () => void;
  readonly admin: RuntimeAdmin;
  readonly toolChanges: ToolChanges;
  readonly #tasks: TaskService;
  readonly tasks: Runtime["tasks"];
  readonly grants: Runtime["grants"];
  #activityWriteFailures = 0;
  #inFlight = 0;
  #drained: (() => void) | undefined;
  #closing: Promise<void> | undefined;

  constructor(context: RuntimeContext, tokens: ConfirmationTokens, actors: ActorTokenVerifier, telemetry: Telemetry) {
    this.#context = context;
    const { store, clock, logger } = context;
    this.#identity = new Authenticator({ store, actors, logger });
    const sealed = new SealedPayloads(context.storageKey);
    const registry = this.#registry;
    const tenants = new TenantConfigCache({
      store,
      refreshMs: context.configRefreshMs,
      clock,
      onBadPolicy: (tenantId) => logger.error({ event: "stored_policy_unreadable", tenantId, effect: "every call is denied until a new policy is set" }),
    });
    // Before anyone else hears a change: a listener that lists tools then sees the new config.
    this.#unsubscribe = store.changes.subscribe((change) => {
      if (change.kind === "tenant") tenants.invalidate(change.tenantId);
      else if (change.kind === "resync") tenants.invalidateAll();
    });
    this.toolChanges = {
      subscribe: (listener) =>
        store.changes.subscribe((change) => {
          if (change.kind === "tenant") listener(change.tenantId);
          else if (change.kind === "resync") listener(undefined);
        }),
      hearsOthers: () => store.changes.hearsOthers(),
    };
    this.#parts = {
      context,
      registry,
      tenants,
      identity: this.#identity,
      tokens,
      sealed,
      leases: new LeaseKeeper({ store, owner: context.instanceId, leaseMs: context.leaseMs, clock, logger }),
      confirmations: new PlatformConfirmations({ context, tokens, sealed, registry }),
      pluginCode: new PluginCodeRunner(),
      activity: new ActivityWriter({ store, clock, logger, onWriteFailure: () => this.#activityWriteFailures++ }),
      previewLimiter: new WindowRateLimiter(context.previewsPerMinute, 60_000, clock),
      telemetry,
    };
    const recovery = new OperationRecovery(this.#parts);
    this.#recovery = new RecoveryScheduler({ store, clock, logger, recover: (expired) => counted(telemetry, recovery.recover(expired)) });
    this.admin = createAdmin({ context, registry, sealed, track: (work, tenantId) => this.#trackAdmin(work, tenantId) });
    const wired = wireTasks(
      { calls: this, store, sealed, clock, logger, instanceId: context.instanceId, claimMs: context.leaseMs, maxTtlMs: context.idempotencyTtlMs },
      (work) => this.#track(work),
    );
    const grants = createRuntimeGrants(store, clock);
    this.grants = {
      mayCover: (principal, ref) => this.#track(() => grants.mayCover(principal, ref)),
      list: (person) => this.#track(() => grants.list(person)),
      revoke: (person, grantId) =>
        this.#track(async () => {
          checkCallerId("grantId", grantId);
          return grants.revoke(person, grantId);
        }),
    };
    this.#tasks = wired.service;
    this.tasks = wired.surface;
    this.#unsubscribeTasks = wired.unsubscribe;
    this.#startTimers();
  }

  /** A first recovery pass soon after start-up (hosts load their plugins first), then one every interval; and pruning. */
  #startTimers(): void {
    const { logger, recoveryIntervalMs, pruneIntervalMs } = this.#context;
    const failed = (event: string) => (error: unknown) => logger.error({ event, errorClass: (error as Error)?.constructor?.name ?? "Error" });
    if (recoveryIntervalMs > 0) {
      const maintain = () => void this.#maintain().catch(failed("recovery_failed"));
      this.#timers.push(setTimeout(maintain, Math.min(STARTUP_RECOVERY_DELAY_MS, recoveryIntervalMs)));
      this.#timers.push(setInterval(maintain, recoveryIntervalMs));
    }
    if (pruneIntervalMs > 0) this.#timers.push(setInterval(() => void this.prune().catch(failed("prune_failed")), pruneIntervalMs));
    const { checkpointIntervalMs } = this.#context.audit;
    if (checkpointIntervalMs > 0) {
      this.#timers.push(setInterval(() => void this.checkpointActivity().catch(failed("activity_checkpoint_failed")), checkpointIntervalMs));
    }
    for (const timer of this.#timers) timer.unref();
  }

  get manifests(): ReadonlyMap<string, Manifest> {
    return this.#registry.manifests;
  }

  get metrics(): RuntimeMetrics {
    return { authFailures: this.#identity.failures, activityWriteFailures: this.#activityWriteFailures, inFlight: this.#inFlight };
  }

  registerPlugin(manifest: Manifest): void {
    this.#registry.register(manifest);
  }

  sdkFor(pluginId: string): PluginSdk {
    let sdk = this.#sdks.get(pluginId);
    if (sdk === undefined) {
      if (this.#registry.get(pluginId) === undefined) {
        // The host's own mistake, not a plugin's undeclared capability: a TypeError that says the fix, like the runtime's option checks.
        throw new TypeError(`plugin "${pluginId}" is not registered in this host: call registerPlugin(manifest) before sdkFor`);
      }
      sdk = createPluginSdk(
        {
          registry: this.#registry,
          runtime: this,
          scope: this.#parts.pluginCode.scope,
          verifyActor: (token, caller) => this.#identity.verifyInProcessActor(token, caller),
          clock: this.#context.clock,
        },
        pluginId,
      );
      this.#sdks.set(pluginId, sdk);
    }
    return sdk;
  }

  // -- authentication and the calls -------------------------------------------------------------------

  authenticate(credentials: CallerCredentials): Promise<Principal> {
    return this.#identity.authenticate(credentials);
  }

  listTools(principal: Principal): Promise<readonly ToolListing[]> {
    return this.#track(() => listTools(this.#parts, principal));
  }

  preview(principal: Principal, ref: ToolRef, input: unknown, options?: PreviewOptions): Promise<PreviewResult> {
    return this.#track(async () => {
      checkCallOptions(options);
      return runPreview(this.#parts, { principal, ref, input, options });
    });
  }

  execute(principal: Principal, ref: ToolRef, input: unknown, options?: ExecuteOptions): Promise<ExecuteResult> {
    return this.#track(async () => {
      checkCallOptions(options);
      return runExecute(this.#parts, { principal, ref, input, options });
    });
  }

  getOperation(principal: Principal, operationId: string): Promise<OperationView> {
    return this.#track(async () => {
      checkCallerId("operationId", operationId);
      return readOperation(this.#context.store, principal, operationId);
    });
  }

  listActivity(principal: Principal, query?: ActivityQuery): Promise<ActivityPage> {
    const caller = { actorUserId: principal.actor.userId, callerPluginId: principal.callerPluginId };
    return this.#track(() => readActivityPage(this.#context.store, { tenantId: principal.tenantId, caller, query }));
  }

  openRun(principal: Principal, options: RunOptions): Promise<RunHandle> {
    return this.#track(() => openRun(this.#context, principal, options));
  }

  closeRun(principal: Principal, runId: string): Promise<void> {
    return this.#track(async () => {
      checkCallerId("runId", runId);
      return closeRun(this.#context, principal, runId);
    });
  }

  // -- platform confirmation ---------------------------------------------------------------------

  getConfirmation(principal: Principal, requestId: string): Promise<ConfirmationStatus> {
    return this.#track(async () => {
      checkCallerId("requestId", requestId);
      return this.#parts.confirmations.get(principal, requestId);
    });
  }

  waitConfirmation(principal: Principal, requestId: string, options?: WaitConfirmationOptions): Promise<ConfirmationStatus> {
    return this.#track(async () => {
      checkCallerId("requestId", requestId);
      return this.#parts.confirmations.wait(principal, requestId, options);
    });
  }

  cancelConfirmation(principal: Principal, requestId: string): Promise<void> {
    return this.#track(async () => {
      checkCallerId("requestId", requestId);
      return this.#parts.confirmations.cancel(principal, requestId);
    });
  }

  verifyPresenceToken(token: string): Promise<PresenceIdentity> {
    return this.#track(() => this.#identity.verifyPresence(token, this.#context.clock()));
  }

  describeConfirmation(person: ConfirmationPerson, requestId: string): Promise<ConfirmationRequestView> {
    return this.#track(async () => {
      checkCallerId("requestId", requestId);
      return this.#parts.confirmations.describe(person, requestId);
    });
  }

  decideConfirmation(person: ConfirmationPerson, requestId: string, decision: "approve" | "deny", grant?: GrantChoice): Promise<ConfirmationDecision> {
    return this.#track(async () => {
      checkCallerId("requestId", requestId);
      return this.#parts.confirmations.decide(person, requestId, decision, grant);
    });
  }

  // -- recovery, retention, lifecycle ------------------------------------------------------------

  settleExpiredLeases(): Promise<number> {
    return this.#track(() => this.#recovery.pass());
  }

  /** The periodic job: settle expired leases and expired confirmation requests, and move on tasks nobody drives. */
  async #maintain(): Promise<void> {
    if (this.#closing !== undefined) return;
    await Promise.all([this.settleExpiredLeases(), this.#track(() => this.#parts.confirmations.expireDue()), this.#track(() => this.#tasks.sweep())]);
  }

  async #track<T>(work: () => Promise<T>): Promise<T> {
    if (this.#closing !== undefined) {
      throw new ToolpactError("SHUTTING_DOWN", "the runtime is shutting down: retry against another instance");
    }
    this.#inFlight++;
    try {
      return await work();
    } finally {
      this.#inFlight--;
      if (this.#inFlight === 0) this.#drained?.();
    }
  }

  /** Admin writes share the in-flight accounting of calls; a config write applies to this runtime at once. */
  #trackAdmin<T>(work: () => Promise<T>, tenantId?: string): Promise<T> {
    if (tenantId === undefined) return this.#track(work);
    return this.#track(async () => {
      try {
        return await work();
      } finally {
        this.#parts.tenants.invalidate(tenantId);
      }
    });
  }

  prune(): Promise<PruneResult> {
    const context = this.#context;
    const now = context.clock();
    return context.store.prune({
      now,
      consumedTokensExpiredBefore: now - CONSUMED_TOKEN_GRACE_MS,
      activityBefore: now - context.activityRetentionMs,
      confirmationsExpiredBefore: now - context.confirmationRetentionMs,
      outboxBefore: now - context.outboxRetentionMs,
      operationsBefore: now - context.operationRetentionMs,
    });
  }

  checkpointActivity(): Promise<CheckpointRun> {
    if (this.#checkpointing !== undefined) return this.#checkpointing;
    const context = this.#context;
    const run = checkpointActivity(context.store.activityChain, context.auditKey, { now: context.clock(), settleMs: context.audit.settleMs });
    this.#checkpointing = run.finally(() => {
      this.#checkpointing = undefined;
    });
    return this.#checkpointing;
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
    for (const timer of this.#timers) clearTimeout(timer);
    this.#unsubscribe();
    this.#unsubscribeTasks();
    this.#parts.confirmations.close();
    if (this.#inFlight > 0 && !(await this.#drain())) {
      this.#context.logger.warn({ event: "close_drain_timeout", inFlight: this.#inFlight });
      this.#parts.pluginCode.abortAll(Object.assign(new Error("the runtime is shutting down"), { name: "AbortError" }));
    }
    // Calls of tasks ran as in-flight calls; their outcomes are recorded before the store closes.
    await this.#tasks.close();
    this.#parts.leases.stop();
    await this.#context.store.close();
  }

  /** Waits for in-flight calls to finish, at most `drainTimeoutMs`; false when some did not. */
  async #drain(): Promise<boolean> {
    const drained = new Promise<void>((resolve) => {
      this.#drained = resolve;
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), this.#context.drainTimeoutMs);
    });
    const late = await Promise.race([drained.then(() => false), timedOut]);
    clearTimeout(timer);
    return !late;
  }
}

/** A recovery pass, counted by how it ended. */
function counted(telemetry: Telemetry, pass: Promise<boolean>): Promise<boolean> {
  return pass.then(
    (settled) => {
      telemetry.recovered(settled ? "recovered" : "skipped");
      return settled;
    },
    (error: unknown) => {
      telemetry.recovered("failed");
      throw error;
    },
  );
}
