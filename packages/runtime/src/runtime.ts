import type { ConfirmationStatus, ExecuteOptions, ExecuteResult, Manifest, PreviewOptions, PreviewResult, ToolRef } from "@toolpact/contract";
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
import { InFlightCalls } from "./in-flight-calls.js";
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
import type { PruneResult } from "./store/store.js";
import { ActivityCheckpoints, countedRecovery, pruneExpired, startJobTimers } from "./runtime-jobs.js";
import { Telemetry } from "./telemetry/telemetry.js";
import type { GrantChoice } from "./grants/grant-from-request.js";
import { GrantFinder } from "./grants/find-grant.js";
import { createRuntimeGrants } from "./grants/runtime-grants.js";
import { wireTasks } from "./tasks/runtime-tasks.js";
import type { TaskService } from "./tasks/task-service.js";
import type { CheckpointRun } from "./audit/chain-checkpointer.js";
import { TenantConfigCache } from "./tenant-config.js";
import { findTool, listTools } from "./tool-listing.js";

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
  readonly #timers: NodeJS.Timeout[];
  readonly #checkpoints: ActivityCheckpoints;
  readonly #unsubscribe: () => void;
  readonly #unsubscribeTasks: () => void;
  readonly admin: RuntimeAdmin;
  readonly toolChanges: ToolChanges;
  readonly #tasks: TaskService;
  readonly tasks: Runtime["tasks"];
  readonly grants: Runtime["grants"];
  #activityWriteFailures = 0;
  #closing: Promise<void> | undefined;
  readonly #calls = new InFlightCalls(() => this.#closing !== undefined);

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
      grants: new GrantFinder(store),
      telemetry,
    };
    const recovery = new OperationRecovery(this.#parts);
    this.#recovery = new RecoveryScheduler({ store, clock, logger, recover: (expired) => countedRecovery(telemetry, recovery.recover(expired)) });
    this.admin = createAdmin({ context, registry, sealed, track: (work, tenantId) => this.#trackAdmin(work, tenantId) });
    const wired = wireTasks(
      { calls: this, store, sealed, clock, logger, instanceId: context.instanceId, claimMs: context.leaseMs, maxTtlMs: context.idempotencyTtlMs },
      (work) => this.#track(work),
    );
    const grants = createRuntimeGrants(store, clock, this.#parts.grants);
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
    this.#checkpoints = new ActivityCheckpoints(context);
    // A first recovery pass soon after start-up (hosts load their plugins first), then one every interval; pruning; checkpoints.
    this.#timers = startJobTimers(context, {
      maintain: () => this.#maintain(),
      prune: () => this.prune(),
      checkpointActivity: () => this.checkpointActivity(),
    });
  }

  get manifests(): ReadonlyMap<string, Manifest> {
    return this.#registry.manifests;
  }

  get metrics(): RuntimeMetrics {
    return { authFailures: this.#identity.failures, activityWriteFailures: this.#activityWriteFailures, inFlight: this.#calls.count };
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

  findTool(principal: Principal, ref: ToolRef): Promise<ToolListing | undefined> {
    return this.#track(() => findTool(this.#parts, principal, ref));
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

  #track<T>(work: () => Promise<T>): Promise<T> {
    return this.#calls.track(work);
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
    return pruneExpired(this.#context);
  }

  checkpointActivity(): Promise<CheckpointRun> {
    return this.#checkpoints.run();
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
    if (this.#calls.count > 0 && !(await this.#calls.drain(this.#context.drainTimeoutMs))) {
      this.#context.logger.warn({ event: "close_drain_timeout", inFlight: this.#calls.count });
      this.#parts.pluginCode.abortAll(Object.assign(new Error("the runtime is shutting down"), { name: "AbortError" }));
    }
    // Calls of tasks ran as in-flight calls; their outcomes are recorded before the store closes.
    await this.#tasks.close();
    this.#parts.leases.stop();
    await this.#checkpoints.stop();
    await this.#context.store.close();
  }
}
