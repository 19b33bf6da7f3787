import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import {
  PLUGIN_ID_MAX_LENGTH,
  PLUGIN_ID_PATTERN,
  TOOL_NAME_MAX_LENGTH,
  TOOL_NAME_PATTERN,
  ToolpactError,
  inputDigest,
  isToolpactError,
  matchesToolPattern,
  parseToolFullName,
  prepareInput,
  prepareOutput,
  toolFullName,
  type ActorInfo,
  type ConfirmationInfo,
  type ExecuteOptions,
  type ExecuteResult,
  type PreviewOptions,
  type PreviewResult,
  type ToolCallContext,
  type ToolExecuteContext,
  type ToolHandler,
  type ToolRef,
  type ToolpactErrorCode,
} from "@toolpact/contract";
import { errorClassOf, outcomeOf } from "./activity.js";
import type { ActivityKind, ActivityPhase, OperationState, OperationView, Principal, ToolListing } from "./api.js";
import type { ConfirmationBinding, ConfirmationTokens } from "./confirmation-token.js";
import { uuidv7 } from "./ids.js";
import type { LeaseKeeper } from "./lease-keeper.js";
import type { RuntimeContext } from "./options.js";
import type { PayloadCipher } from "./payload-cipher.js";
import type { PermissionDecision } from "./permission-policy.js";
import type { PlatformConfirmations } from "./platform-confirmations.js";
import type { WindowRateLimiter } from "./rate-limit.js";
import type { PluginRegistry, RegisteredPlugin, RegisteredTool } from "./registry.js";
import {
  gateRank,
  type GateCall,
  type GateDecision,
  type GuardCall,
  type HookCall,
  type RegisteredSeam,
  type ResolvedSeams,
  type SeamContext,
  type StagedReaction,
} from "./seams.js";
import type {
  ActivityRecord,
  IdempotencyRecord,
  IdempotencyScope,
  OperationRecord,
  OutboxRecord,
} from "./store/store.js";
import { resolveSeams, type TenantConfigCache } from "./tenant-config.js";

/**
 * Who a provider, gate, hook or guard invocation acts for: what a plugin's caller methods inherit inside
 * it. Each invocation gets its own; `active` turns false once that invocation settled or timed out, so code
 * it left running (a timer, a background loop) acts for nobody.
 */
export interface CallScope {
  readonly tenantId: string;
  readonly actor: ActorInfo;
  readonly correlationId: string | undefined;
  readonly active: boolean;
}

/** What a call decides once about its scopes; each invocation makes its own live CallScope from it. */
type ScopeOwner = Omit<CallScope, "active">;

/** A CallScope while its invocation runs. */
interface LiveScope extends ScopeOwner {
  active: boolean;
}

/** A call that passed steps 2-6. */
interface AuthorizedCall {
  readonly principal: Principal;
  readonly tool: RegisteredTool;
  readonly handler: ToolHandler;
  /** The frozen, validated copy: digested, checked and handed to the provider. */
  readonly input: unknown;
  readonly decision: Extract<PermissionDecision, { kind: "allow" }>;
  readonly runId: string | undefined;
  /**
   * Who provider code acts for: only for providers holding `tools:call`, the only ones whose caller
   * methods can act (skipping it spares every other call the cost of async context tracking).
   */
  readonly scope: ScopeOwner | undefined;
  /** The tenant config version steps 2-7 decided under. */
  readonly configVersion: number;
  /** The gates, hooks and guards acting on this call. */
  readonly seams: ResolvedSeams;
  /** A gate answered the call with a value (a frozen JSON copy): the provider is not invoked. */
  readonly gateResult: { readonly value: unknown; readonly seam: string } | undefined;
}

/** A staged reaction that passed the checks, with its payload as JSON. */
interface CheckedReaction {
  readonly kind: StagedReaction["kind"];
  readonly json: string;
}

/** What `#run` settles: the operation, under which lease epoch, and its idempotency record (if any). */
interface RunSpec {
  readonly operationId: string;
  readonly leaseEpoch: number;
  /** The record to settle with the outcome; `{}` finds it by operation id (recovery). */
  readonly idempotency: { readonly scope?: IdempotencyScope } | undefined;
}

/** The input kept sealed while an idempotent tool runs: what recovery needs to run steps 2-7 again. */
interface RecoveryEnvelope {
  readonly i: unknown;
  readonly a: { readonly l: number; readonly r: readonly string[] };
  readonly r?: string;
}

/** What the pipeline knows about a call so far, for its activity event. */
interface CallTrace {
  readonly principal: Principal;
  readonly kind: ActivityKind;
  readonly phase: ActivityPhase;
  readonly started: number;
  providerId: string | undefined;
  tool: RegisteredTool | undefined;
  toolName: string | undefined;
  version: number | undefined;
  confirmationId: string | undefined;
  /** The gate or guard that decided the call's fate, `<pluginId>:<name>`. */
  seam: string | undefined;
  /** Set once the event is written (by the step-12 commit or explicitly). */
  recorded: boolean;
}

const TIMED_OUT: unique symbol = Symbol("timed out");
const CONFIG_CHANGED: unique symbol = Symbol("config changed");
const NO_OPTIONS: ExecuteOptions = Object.freeze({});
/** How often step 9 may find the tenant config changed under a call before the call gives up. */
const CONFIG_RETRIES = 3;

/** A call's AbortSignal, made only when provider code reads `ctx.signal` (most never do). */
export class CallAbort {
  #controller: AbortController | undefined;
  #reason: unknown;
  #aborted = false;

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
const IDEMPOTENCY_KEY_MAX = 256;
const TARGET_ID_MAX = 256;
const RUN_ID_MAX = 128;
/** After start-up, recovery waits this long for a handler it may re-invoke to be provided. */
const STARTUP_GRACE_MS = 60_000;
const REASON_MAX = 500;
/** The longest preview summary kept (and shown on the confirmation page); longer ones are cut. */
const SUMMARY_MAX = 2_000;
/** Reactions one hook may stage per call, and the largest payload (JSON bytes). */
const MAX_REACTIONS = 100;
const MAX_REACTION_BYTES = 64 * 1024;
const REACTION_KIND = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

const TIMEOUT_REASON = (ms: number) =>
  Object.assign(new Error(`the tool did not finish within its timeout of ${ms} ms`), { name: "TimeoutError" });

/** Parts the pipeline runs on; made once by `createRuntime`. */
export interface PipelineParts {
  readonly context: RuntimeContext;
  readonly registry: PluginRegistry;
  readonly tenants: TenantConfigCache;
  readonly tokens: ConfirmationTokens;
  readonly cipher: PayloadCipher;
  readonly leases: LeaseKeeper;
  readonly confirmations: PlatformConfirmations;
  readonly previewLimiter: WindowRateLimiter;
  readonly onActivityWriteFailure: () => void;
}

/**
 * The one pipeline every call goes through (DESIGN "One pipeline"): resolve, check the caller,
 * validate input, permission, provider authorize, preview/confirm, ledger, invoke, commit.
 */
export class ToolPipeline {
  /** The call a provider's code runs inside (per runtime). */
  readonly scope = new AsyncLocalStorage<CallScope>();
  readonly #context: RuntimeContext;
  readonly #registry: PluginRegistry;
  readonly #tenants: TenantConfigCache;
  readonly #tokens: ConfirmationTokens;
  readonly #cipher: PayloadCipher;
  readonly #leases: LeaseKeeper;
  readonly #confirmations: PlatformConfirmations;
  readonly #previewLimiter: WindowRateLimiter;
  readonly #onActivityWriteFailure: () => void;
  readonly #startedAt = performance.now();
  /** Aborts handlers still running when the runtime closes. */
  readonly running = new Set<CallAbort>();

  constructor(parts: PipelineParts) {
    this.#context = parts.context;
    this.#registry = parts.registry;
    this.#tenants = parts.tenants;
    this.#tokens = parts.tokens;
    this.#cipher = parts.cipher;
    this.#leases = parts.leases;
    this.#confirmations = parts.confirmations;
    this.#previewLimiter = parts.previewLimiter;
    this.#onActivityWriteFailure = parts.onActivityWriteFailure;
  }

  // ---------------------------------------------------------------------------------------------
  // preview

  async preview(principal: Principal, ref: ToolRef, rawInput: unknown, options: PreviewOptions | undefined): Promise<PreviewResult> {
    const trace = this.#trace(principal, "preview");
    try {
      const retryAfterMs = this.#previewLimiter.take(
        `${principal.tenantId}\u0000${principal.callerPluginId}\u0000${principal.actor.userId}`,
      );
      if (retryAfterMs !== undefined) {
        throw new ToolpactError(
          "RATE_LIMITED",
          `too many previews by this caller for this user: at most ${this.#context.previewsPerMinute} a minute; retry in ${Math.ceil(retryAfterMs / 1000)} s`,
          { retryAfterMs },
        );
      }
      const controller = new CallAbort();
      const call = await this.#authorize(trace, ref, rawInput, "preview", options?.runId, controller);
      const shown = await this.#previewSummary(call, controller);
      let confirmation: ConfirmationInfo = { required: false };
      if (call.decision.confirm && call.decision.mode === "platform") {
        const { tool } = call;
        confirmation = await this.#confirmations.create({
          principal,
          providerId: tool.providerId,
          tool: tool.declaration.name,
          fullName: tool.fullName,
          version: tool.declaration.version,
          effect: tool.declaration.effect,
          schemaHash: tool.schemaHash,
          runId: call.runId,
          input: call.input,
          summary: shown.summary,
          details: shown.details,
        });
        trace.confirmationId = confirmation.requestId;
      } else if (call.decision.confirm) {
        const minted = await this.#tokens.mint(this.#binding(call));
        trace.confirmationId = minted.tokenId;
        confirmation = {
          required: true,
          mode: "token",
          token: minted.token,
          expiresAt: new Date(minted.expiresAt).toISOString(),
        };
      }
      await this.#record(trace, "previewed", {});
      return { summary: shown.summary, details: shown.details, confirmation };
    } catch (error) {
      throw await this.#refused(trace, error);
    }
  }

  async #previewSummary(call: AuthorizedCall, controller: CallAbort): Promise<{ summary: string; details: unknown }> {
    const { declaration, fullName } = call.tool;
    const preview = call.handler.preview;
    if (preview === undefined) {
      // Nobody approves blind: without a preview of its own, a confirmation shows the validated input.
      return { summary: `${declaration.title ?? declaration.name} (${fullName})`, details: call.decision.confirm ? call.input : null };
    }
    const ctx: ToolCallContext = Object.freeze({
      tenantId: call.principal.tenantId,
      actor: call.principal.actor,
      callerPluginId: call.principal.callerPluginId,
      tool: fullName,
      effect: declaration.effect,
      phase: "preview" as const,
      get signal() {
        return controller.signal;
      },
    });
    // The answer is read and copied inside the guarded block: a getter that throws is the provider failing.
    let shown: { summary: string; details: unknown } | string;
    try {
      shown = previewOf(await this.#invoke(call.scope, () => preview.call(call.handler, call.input, ctx), declaration.timeoutMs, controller));
    } catch (error) {
      throw providerFailed(fullName, "preview", error);
    }
    if (typeof shown === "string") {
      throw new ToolpactError("PROVIDER_FAILED", `the provider's preview of ${fullName} ${shown}`, {
        tool: fullName,
        errorClass: "InvalidPreview",
      });
    }
    return shown;
  }

  // ---------------------------------------------------------------------------------------------
  // execute

  async execute(principal: Principal, ref: ToolRef, rawInput: unknown, options: ExecuteOptions = NO_OPTIONS): Promise<ExecuteResult> {
    const trace = this.#trace(principal, "execute");
    try {
      for (let attempt = 1; ; attempt++) {
        const answer = await this.#executeOnce(trace, ref, rawInput, options);
        if (answer !== CONFIG_CHANGED) return answer;
        // Another instance changed the tenant's config after steps 2-6 read it: decide again.
        this.#tenants.invalidate(principal.tenantId);
        if (attempt >= CONFIG_RETRIES) {
          throw new ToolpactError(
            "STORE_UNAVAILABLE",
            "the tenant's configuration kept changing while this call was authorized; nothing ran: retry",
          );
        }
      }
    } catch (error) {
      throw await this.#refused(trace, error);
    }
  }

  async #executeOnce(
    trace: CallTrace,
    ref: ToolRef,
    rawInput: unknown,
    options: ExecuteOptions,
  ): Promise<ExecuteResult | typeof CONFIG_CHANGED> {
    const { principal } = trace;
    const controller = new CallAbort();
    const call = await this.#authorize(trace, ref, rawInput, "execute", options.runId, controller);
    const { tool } = call;
    const now = this.#context.clock();

    // Step 8: the idempotency record first, then the confirmation.
    let idempotency: { scope: IdempotencyScope; inputDigest: string } | undefined;
    if (options.idempotencyKey !== undefined) {
      idempotency = this.#idempotencyScope(call, options.idempotencyKey);
      const existing = await this.#context.store.findIdempotency(idempotency.scope, now);
      if (existing !== undefined) return await this.#replay(trace, call, existing, idempotency.inputDigest);
    }
    let consume: { tokenId: string; consumedAt: number; expiresAt: number } | undefined;
    if (call.decision.confirm) {
      const token = options.confirmationToken;
      if (token === undefined) {
        throw new ToolpactError(
          "CONFIRMATION_REQUIRED",
          `${tool.fullName} requires confirmation: call preview first and pass its confirmationToken`,
          { tool: tool.fullName },
        );
      }
      const verified = await this.#tokens.verify(token, this.#binding(call), tool.fullName);
      trace.confirmationId = verified.tokenId;
      consume = { tokenId: verified.tokenId, consumedAt: now, expiresAt: verified.expiresAt };
    }

    // Step 9: one transaction: consume the token, take the idempotency key, create the operation.
    const operationId = uuidv7(now);
    const operation: OperationRecord = {
      tenantId: principal.tenantId,
      operationId,
      callerPluginId: principal.callerPluginId,
      actorUserId: principal.actor.userId,
      providerPluginId: tool.providerId,
      tool: tool.fullName,
      state: "running",
      createdAt: now,
      leaseOwner: this.#context.instanceId,
      leaseEpoch: 1,
      leaseExpiresAt: this.#leases.expiry(now),
      ...(tool.declaration.recovery === "idempotent" ? { sealedInput: this.#sealEnvelope(call, operationId) } : {}),
    };
    const begun = await this.#context.store.beginOperation({
      operation,
      tenantConfigVersion: call.configVersion,
      ...(consume === undefined ? {} : { consumeToken: consume }),
      ...(idempotency === undefined
        ? {}
        : {
            idempotency: {
              scope: idempotency.scope,
              inputDigest: idempotency.inputDigest,
              expiresAt: now + this.#context.idempotencyTtlMs,
            },
          }),
    });
    switch (begun.status) {
      case "started":
        // Steps 10 to 12.
        return await this.#run(trace, call, controller, {
          operationId,
          leaseEpoch: 1,
          idempotency: idempotency === undefined ? undefined : { scope: idempotency.scope },
        });
      case "config-changed":
        trace.confirmationId = undefined;
        return CONFIG_CHANGED;
      case "idempotency-exists":
        return await this.#replay(trace, call, begun.record, idempotency!.inputDigest);
      case "token-used": {
        const { consumed } = begun;
        const bound =
          consumed.callerPluginId === principal.callerPluginId && consumed.actorUserId === principal.actor.userId;
        throw new ToolpactError(
          "CONFIRMATION_USED",
          `this confirmation for ${tool.fullName} was already used` +
            (bound ? ` by operation ${consumed.operationId}: read its outcome with tools.operation` : "") +
            "; preview again to confirm another call",
          bound ? { tool: tool.fullName, operationId: consumed.operationId } : { tool: tool.fullName },
        );
      }
    }
  }

  async #run(trace: CallTrace, call: AuthorizedCall, controller: CallAbort, spec: RunSpec): Promise<ExecuteResult> {
    const { principal, tool, handler } = call;
    const { declaration, fullName } = tool;
    const { operationId, leaseEpoch } = spec;
    const tenantId = principal.tenantId;
    this.#leases.hold({ tenantId, operationId, leaseEpoch });
    try {
      const ctx: ToolExecuteContext = Object.freeze({
        tenantId,
        actor: principal.actor,
        callerPluginId: principal.callerPluginId,
        tool: fullName,
        effect: declaration.effect,
        phase: "execute" as const,
        get signal() {
          return controller.signal;
        },
        operationId,
      });
      let state: Exclude<OperationState, "running"> = "succeeded";
      let errorCode: ToolpactErrorCode | undefined;
      let errorClass: string | undefined;
      /** From here on only a frozen JSON copy: what is validated, guarded, sealed, shown to hooks and returned. */
      let result: unknown;
      if (call.gateResult !== undefined) {
        // A gate answered: the provider is not invoked, the value (copied when the gate gave it) is checked like any result.
        result = call.gateResult.value;
        trace.seam = call.gateResult.seam;
      } else {
        try {
          const answer = await this.#invoke(call.scope, () => handler.execute(call.input, ctx), declaration.timeoutMs, controller);
          // The copy is taken at once: whatever the provider does to its object later changes nothing here.
          try {
            result = outputOf(answer);
          } catch {
            errorCode = "OUTPUT_INVALID";
            errorClass = "NotJson";
          }
        } catch (error) {
          if (error === TIMED_OUT) {
            // A read has no effect to be unsure about; a write or external effect may have happened.
            state = declaration.effect === "read" ? "failed" : "unknown";
            errorCode = declaration.effect === "read" ? "PROVIDER_FAILED" : "OUTCOME_UNKNOWN";
            errorClass = "TimeoutError";
          } else {
            state = "failed";
            errorCode = "PROVIDER_FAILED";
            errorClass = errorClassOf(error);
          }
          this.#context.logger.warn({ event: "provider_failed", tool: fullName, operationId, errorClass, state });
        }
      }

      // The effect ran: whatever the result does (a throwing getter, a cycle), the operation gets settled.
      let sealedResult: Uint8Array | undefined;
      let guardSet: string | undefined;
      let targetId: string | undefined;
      if (state === "succeeded" && errorCode === undefined) {
        try {
          if (tool.validateOutput !== undefined && tool.validateOutput(result).length > 0) {
            errorCode = "OUTPUT_INVALID";
          } else if (call.seams.guards.length > 0) {
            const guarded = await this.#guard(call, result, operationId);
            if (guarded.ok) {
              result = guarded.output;
            } else {
              errorCode = guarded.errorCode;
              errorClass = guarded.errorClass;
              trace.seam = guarded.seam;
            }
          }
          if (errorCode === undefined) {
            if (spec.idempotency !== undefined) {
              sealedResult = this.#cipher.seal(JSON.stringify({ r: result }), resultAad(tenantId, operationId));
              guardSet = guardSetOf(call.seams);
            }
            targetId = targetIdOf(result);
          }
        } catch {
          errorCode = "OUTPUT_INVALID";
          sealedResult = undefined;
          guardSet = undefined;
        }
      }

      // Step 11: AfterTool hooks see what the caller gets; their failures are recorded, the outcome kept.
      let staged: { outbox: OutboxRecord[]; events: ActivityRecord[] } | undefined;
      if (call.seams.hooks.length > 0) {
        staged = await this.#hooks(call, trace, {
          operationId,
          outcome: state,
          output: errorCode === undefined ? result : undefined,
          errorCode,
        });
      }

      const activity = this.#event(trace, state === "succeeded" ? "succeeded" : state, {
        operationId,
        ...(errorCode === undefined ? {} : { errorCode }),
        ...(errorClass === undefined ? {} : { errorClass }),
        ...(targetId === undefined ? {} : { targetId }),
      });
      let settled: "settled" | "lease-lost" | "failed";
      try {
        settled = await this.#context.store.settleOperation({
          tenantId,
          operationId,
          leaseOwner: this.#context.instanceId,
          leaseEpoch,
          state,
          ...(errorCode === undefined ? {} : { errorCode }),
          settledAt: this.#context.clock(),
          activity,
          ...(staged === undefined || staged.events.length === 0 ? {} : { extraActivity: staged.events }),
          ...(staged === undefined || staged.outbox.length === 0 ? {} : { outbox: staged.outbox }),
          ...(spec.idempotency === undefined
            ? {}
            : {
                idempotency: {
                  ...spec.idempotency,
                  ...(sealedResult === undefined ? {} : { sealedResult }),
                  ...(guardSet === undefined ? {} : { guardSet }),
                },
              }),
        });
      } catch (error) {
        this.#context.logger.error({ event: "commit_failed", tool: fullName, operationId, errorClass: errorClassOf(error) });
        settled = "failed";
      }
      if (settled !== "settled") {
        if (settled === "lease-lost") this.#context.logger.warn({ event: "lease_lost", tool: fullName, operationId });
        throw new ToolpactError(
          "OUTCOME_UNKNOWN",
          `${fullName} ran but its outcome could not be recorded; operation ${operationId} is settled by recovery: ` +
            "read it with tools.operation before retrying",
          { tool: fullName, operationId },
        );
      }
      trace.recorded = true;
      if (errorCode === undefined) return { operationId, result };
      throw outcomeError(errorCode, fullName, operationId, errorClass);
    } finally {
      this.#leases.release(operationId);
    }
  }

  #sealEnvelope(call: AuthorizedCall, operationId: string): Uint8Array {
    const { actor, tenantId } = call.principal;
    const envelope: RecoveryEnvelope = {
      i: call.input,
      a: { l: actor.verificationLevel, r: actor.roles },
      ...(call.runId === undefined ? {} : { r: call.runId }),
    };
    return this.#cipher.seal(JSON.stringify(envelope), inputAad(tenantId, operationId));
  }

  // ---------------------------------------------------------------------------------------------
  // recovery

  /**
   * Settles one operation whose lease expired. Takes the lease first (new owner, next epoch), so only one
   * instance acts. A tool declaring `recovery: "idempotent"` whose tenant policy allows it is re-invoked
   * with the same operation id after steps 2-7 run again; anything else becomes `unknown`.
   * Returns false when it left the operation alone (another instance took it, or its plugin is not loaded here).
   */
  async recover(expired: OperationRecord): Promise<boolean> {
    const parsed = parseToolFullName(expired.tool);
    const provider = parsed === undefined ? undefined : this.#registry.get(parsed.pluginId);
    if (parsed === undefined || provider === undefined) {
      this.#context.logger.warn({ event: "recovery_skipped", operationId: expired.operationId, tool: expired.tool, reason: "plugin not loaded here" });
      return false;
    }
    const declared = provider.tools.get(parsed.tool)?.byVersion.get(parsed.version);
    if (declared?.declaration.recovery === "idempotent" && declared.handler === undefined && this.#inStartupGrace()) {
      // The host may still be activating its plugins: do not decide without the handler it may re-invoke.
      return false;
    }
    const now = this.#context.clock();
    const taken = await this.#context.store.takeLease({
      tenantId: expired.tenantId,
      operationId: expired.operationId,
      leaseEpoch: expired.leaseEpoch,
      owner: this.#context.instanceId,
      now,
      expiresAt: this.#leases.expiry(now),
    });
    if (taken === undefined) return false;
    const tool = declared;
    this.#tenants.invalidate(taken.tenantId);
    const tenantState = this.#tenants.get(taken.tenantId);
    const tenant = tenantState instanceof Promise ? await tenantState : tenantState;
    const decision = tool === undefined ? undefined : tenant.recovery.decide(tool);
    const attempts = taken.recoveryAttempts ?? 1;
    const minimal: Principal = {
      tenantId: taken.tenantId,
      callerPluginId: taken.callerPluginId,
      actor: { userId: taken.actorUserId, verificationLevel: 0, roles: [] },
    };
    if (decision?.reinvoke === true && attempts <= decision.maxAttempts && taken.sealedInput !== undefined) {
      let envelope: RecoveryEnvelope | undefined;
      try {
        envelope = JSON.parse(this.#cipher.open(taken.sealedInput, inputAad(taken.tenantId, taken.operationId))) as RecoveryEnvelope;
      } catch (error) {
        this.#context.logger.error({ event: "recovery_input_unreadable", operationId: taken.operationId, errorClass: errorClassOf(error) });
      }
      if (envelope !== undefined) {
        const principal: Principal = {
          ...minimal,
          actor: Object.freeze({ userId: taken.actorUserId, verificationLevel: envelope.a.l, roles: Object.freeze([...envelope.a.r]) }),
        };
        const trace = this.#trace(principal, "settle", "recovery");
        const controller = new CallAbort();
        try {
          const ref = { providerId: parsed.pluginId, tool: parsed.tool, version: parsed.version };
          const call = await this.#authorize(trace, ref, envelope.i, "execute", envelope.r, controller);
          await this.#run(trace, call, controller, { operationId: taken.operationId, leaseEpoch: taken.leaseEpoch, idempotency: {} });
        } catch (error) {
          if (!trace.recorded) {
            // Steps 2-7 refused the call again (or its commit failed): the first attempt's effect stays unknown.
            await this.#settleUnknown(taken, trace, isToolpactError(error) ? error.code : "OUTCOME_UNKNOWN");
          }
        }
        return true;
      }
    }
    const trace = this.#trace(minimal, "settle", "recovery");
    trace.providerId = parsed.pluginId;
    trace.toolName = parsed.tool;
    trace.version = parsed.version;
    if (tool !== undefined) trace.tool = tool;
    await this.#settleUnknown(taken, trace, "OUTCOME_UNKNOWN");
    return true;
  }

  #inStartupGrace(): boolean {
    return performance.now() - this.#startedAt < STARTUP_GRACE_MS;
  }

  async #settleUnknown(taken: OperationRecord, trace: CallTrace, reason: string): Promise<void> {
    let settled: "settled" | "lease-lost" | "failed";
    try {
      settled = await this.#context.store.settleOperation({
      tenantId: taken.tenantId,
      operationId: taken.operationId,
      leaseOwner: this.#context.instanceId,
      leaseEpoch: taken.leaseEpoch,
      state: "unknown",
      errorCode: "OUTCOME_UNKNOWN",
      settledAt: this.#context.clock(),
        activity: this.#event(trace, "unknown", { operationId: taken.operationId, errorCode: reason }),
        idempotency: {},
      });
    } catch (error) {
      // Settled meanwhile by whoever holds a newer lease, or the store failed: the next pass looks again.
      this.#context.logger.warn({ event: "recovery_settle_failed", operationId: taken.operationId, errorClass: errorClassOf(error) });
      settled = "failed";
    }
    trace.recorded = settled === "settled";
    this.#context.logger.warn({ event: "operation_settled_unknown", operationId: taken.operationId, tool: taken.tool, reason, settled });
  }

  async #replay(trace: CallTrace, call: AuthorizedCall, record: IdempotencyRecord, digest: string): Promise<ExecuteResult> {
    const fullName = call.tool.fullName;
    if (record.inputDigest !== digest) {
      throw new ToolpactError(
        "IDEMPOTENCY_CONFLICT",
        `this idempotency key was used for ${fullName} with a different input: use a new key for a new call`,
        { tool: fullName },
      );
    }
    const operationId = record.operationId;
    trace.confirmationId = undefined;
    if (record.state === "running") {
      throw new ToolpactError(
        "OPERATION_IN_PROGRESS",
        `operation ${operationId} with this idempotency key is still running: read it with tools.operation, or retry later`,
        { tool: fullName, operationId },
      );
    }
    if (record.state === "succeeded" && record.errorCode === undefined) {
      const sealed = record.sealedResult;
      const opened =
        sealed === undefined
          ? undefined
          : (JSON.parse(this.#cipher.open(sealed, resultAad(call.principal.tenantId, operationId))) as { r?: unknown }).r;
      let result = outputOf(opened);
      if (call.seams.guards.length > 0 && record.guardSet !== guardSetOf(call.seams)) {
        // Guards were activated, removed or reordered since the result was recorded: today's guards decide.
        const guarded = await this.#guard(call, result, operationId);
        if (!guarded.ok) {
          trace.seam = guarded.seam;
          throw outcomeError(guarded.errorCode, fullName, operationId, guarded.errorClass);
        }
        result = guarded.output;
      }
      await this.#record(trace, "succeeded", { operationId });
      return { operationId, result };
    }
    const code: ToolpactErrorCode =
      record.errorCode !== undefined && isKnownCode(record.errorCode)
        ? record.errorCode
        : record.state === "unknown"
          ? "OUTCOME_UNKNOWN"
          : "PROVIDER_FAILED";
    throw outcomeError(code, fullName, operationId, undefined);
  }

  #idempotencyScope(call: AuthorizedCall, key: string): { scope: IdempotencyScope; inputDigest: string } {
    if (typeof key !== "string" || key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX) {
      throw new ToolpactError("INPUT_INVALID", `an idempotency key is a string of 1 to ${IDEMPOTENCY_KEY_MAX} characters`, {
        issues: [{ path: "/idempotencyKey", message: `must be 1 to ${IDEMPOTENCY_KEY_MAX} characters` }],
      });
    }
    return {
      scope: {
        tenantId: call.principal.tenantId,
        callerPluginId: call.principal.callerPluginId,
        actorUserId: call.principal.actor.userId,
        tool: call.tool.fullName,
        keyHash: createHash("sha256").update(key, "utf8").digest("base64url"),
      },
      inputDigest: inputDigest(this.#context.idempotencyDigestKey, call.input),
    };
  }

  // ---------------------------------------------------------------------------------------------
  // steps 2-6

  async #authorize(
    trace: CallTrace,
    ref: ToolRef,
    rawInput: unknown,
    phase: "preview" | "execute",
    runId: string | undefined,
    controller: CallAbort,
  ): Promise<AuthorizedCall> {
    const { principal } = trace;
    const cached = this.#tenants.get(principal.tenantId);
    const tenant = cached instanceof Promise ? await cached : cached;

    // Step 2: the provider, for this tenant.
    const providerId = ref?.providerId;
    if (typeof providerId !== "string" || providerId.length > PLUGIN_ID_MAX_LENGTH || !PLUGIN_ID_PATTERN.test(providerId)) {
      throw new ToolpactError("PROVIDER_NOT_FOUND", "ref.providerId is not a plugin id, e.g. \"com.example.notes\"");
    }
    trace.providerId = providerId;
    const provider = this.#registry.get(providerId);
    const install = tenant.installs.get(providerId);
    if (provider === undefined || install === undefined) {
      throw new ToolpactError(
        "PROVIDER_NOT_FOUND",
        provider === undefined
          ? `no plugin "${providerId}" is loaded in this host`
          : `plugin "${providerId}" is not installed for this tenant: the tenant admin installs it with admin.installPlugin`,
      );
    }
    if (!install.enabled) {
      throw new ToolpactError("PROVIDER_DISABLED", `plugin "${providerId}" is disabled for this tenant`);
    }
    const name = ref.tool;
    if (typeof name !== "string" || name.length > TOOL_NAME_MAX_LENGTH || !TOOL_NAME_PATTERN.test(name)) {
      throw new ToolpactError("TOOL_NOT_FOUND", `ref.tool is not a tool name, e.g. "create-record"`);
    }
    trace.toolName = name;
    const versions = provider.tools.get(name);
    if (versions === undefined) {
      throw new ToolpactError("TOOL_NOT_FOUND", `plugin "${providerId}" declares no tool "${name}"`);
    }
    const version = ref.version;
    let tool: RegisteredTool | undefined;
    if (version === undefined) {
      tool = versions.highest;
    } else {
      trace.version = version;
      tool = Number.isInteger(version) ? versions.byVersion.get(version) : undefined;
      if (tool === undefined) {
        throw new ToolpactError(
          "VERSION_UNSUPPORTED",
          `${providerId}:${name} has no version ${String(version)}; declared: ${versions.versions.join(", ")}`,
        );
      }
    }
    trace.tool = tool;
    trace.version = tool.declaration.version;
    const handler = tool.handler;
    if (handler === undefined) {
      throw new ToolpactError(
        "HANDLER_MISSING",
        `${tool.fullName} is declared but its provider registered no handler: the provider must call sdk.tools.provide`,
        { tool: tool.fullName },
      );
    }

    // Step 3: the caller.
    const caller = this.#registry.get(principal.callerPluginId);
    const callerInstall = tenant.installs.get(principal.callerPluginId);
    if (caller === undefined || callerInstall === undefined || !callerInstall.enabled) {
      throw new ToolpactError(
        "CALLER_DISABLED",
        `the calling plugin "${principal.callerPluginId}" is not ${caller === undefined ? "loaded in this host" : callerInstall === undefined ? "installed for this tenant" : "enabled for this tenant"}`,
        { tool: tool.fullName },
      );
    }
    this.#checkCaller(caller, tool);
    if (runId !== undefined) await this.#checkRun(principal, tool, runId);

    // Step 4: the input, validated as the frozen copy that is digested and handed to the provider.
    const input = prepareInput(rawInput, this.#context.inputLimits);
    const issues = tool.validateInput(input);
    if (issues.length > 0) {
      const first = issues[0]!;
      throw new ToolpactError(
        "INPUT_INVALID",
        `the input of ${tool.fullName} does not match its inputSchema at ${first.path || "/"}: ${first.message}` +
          (issues.length > 1 ? ` (and ${issues.length - 1} more)` : ""),
        { tool: tool.fullName, issues },
      );
    }

    // Step 5: permission, the sole grant.
    const decision = tenant.policy.decide(tool, principal.callerPluginId, principal.actor);
    if (decision.kind === "deny") {
      throw new ToolpactError("PERMISSION_DENIED", `${tool.fullName} is not permitted for this caller and user: ${decision.reason}`, {
        tool: tool.fullName,
      });
    }
    if (principal.actor.verificationLevel < decision.minVerificationLevel) {
      throw new ToolpactError(
        "VERIFICATION_REQUIRED",
        `${tool.fullName} needs verification level ${decision.minVerificationLevel}; the user is at ${principal.actor.verificationLevel}: ` +
          "the user must verify further",
        { tool: tool.fullName },
      );
    }

    const scope: ScopeOwner | undefined = provider.canCall
      ? { tenantId: principal.tenantId, actor: principal.actor, correlationId: principal.correlationId }
      : undefined;
    const seams = resolveSeams(tenant, this.#registry, tool);
    const call: AuthorizedCall = {
      principal,
      tool,
      handler,
      input,
      decision,
      runId,
      scope,
      configVersion: tenant.version,
      seams,
      gateResult: undefined,
    };

    // Step 6: the provider's own authorization.
    const authorize = handler.authorize;
    if (authorize !== undefined) {
      const ctx: ToolCallContext = Object.freeze({
        tenantId: principal.tenantId,
        actor: principal.actor,
        callerPluginId: principal.callerPluginId,
        tool: tool.fullName,
        effect: tool.declaration.effect,
        phase,
        get signal() {
          return controller.signal;
        },
      });
      // The answer is read inside the guarded block: a getter that throws is the provider failing.
      let allowed: boolean;
      try {
        const answer = await this.#invoke(scope, () => authorize.call(handler, input, ctx), tool.declaration.timeoutMs, controller);
        allowed = answer === true || (typeof answer === "object" && answer !== null && (answer as { allowed?: unknown }).allowed === true);
      } catch (error) {
        throw providerFailed(tool.fullName, "authorize", error);
      }
      if (!allowed) {
        throw new ToolpactError("PERMISSION_DENIED", `the provider of ${tool.fullName} refused this call for this user`, {
          tool: tool.fullName,
        });
      }
    }

    // Step 7: gates of activated plugins, which can only narrow what steps 2-6 allowed.
    return seams.gates.length === 0 ? call : await this.#gates(trace, call, phase);
  }

  /** Step 3 for a call in a run: the run is the caller's and actor's, open, unexpired, and allows the tool. */
  async #checkRun(principal: Principal, tool: RegisteredTool, runId: string): Promise<void> {
    const shown = String(runId).slice(0, RUN_ID_MAX);
    const run =
      typeof runId === "string" && runId.length > 0 && runId.length <= RUN_ID_MAX
        ? await this.#context.store.getRun(principal.tenantId, runId)
        : undefined;
    const denied = (why: string) => new ToolpactError("RUN_DENIED", `run "${shown}" ${why}`, { tool: tool.fullName });
    if (run === undefined || run.callerPluginId !== principal.callerPluginId || run.actorUserId !== principal.actor.userId) {
      throw denied("is not a run of this caller and user: open one with runs.open and pass its runId");
    }
    if (run.closedAt !== undefined) throw denied("was closed: open a new run");
    if (run.expiresAt <= this.#context.clock()) throw denied("has expired: open a new run");
    const { providerId, declaration } = tool;
    if (!run.allow.some((pattern) => matchesToolPattern(pattern, providerId, declaration.name, declaration.version))) {
      throw denied(`does not allow ${tool.fullName}: its allow list is ${run.allow.map((p) => `"${p}"`).join(", ")}`);
    }
  }

  /**
   * Step 7: every acting gate, in declared order; the most restrictive answer wins
   * (block > requireConfirmation > result > allow). A gate that throws, times out, answers nonsense or
   * has no function blocks.
   */
  async #gates(trace: CallTrace, call: AuthorizedCall, phase: "preview" | "execute"): Promise<AuthorizedCall> {
    const { principal, tool } = call;
    const gateCall: GateCall = Object.freeze({
      tenantId: principal.tenantId,
      tool: tool.fullName,
      providerId: tool.providerId,
      name: tool.declaration.name,
      version: tool.declaration.version,
      effect: tool.declaration.effect,
      input: call.input,
      phase,
      callerPluginId: principal.callerPluginId,
      actor: principal.actor,
      ...(call.runId === undefined ? {} : { runId: call.runId }),
    });
    let winner: { decision: GateDecision; seam: string } | undefined;
    for (const gate of call.seams.gates) {
      const handler = gate.handler;
      let decision: GateDecision | undefined;
      let failure: string | undefined;
      if (handler === undefined) {
        failure = "HandlerMissing";
      } else {
        try {
          // Read (and a result value copied) inside the guarded block: a getter that throws is the gate failing.
          decision = gateDecisionOf(await this.#invokeSeam(gate, call, phase, undefined, (ctx) => handler(gateCall, ctx)));
        } catch (error) {
          failure = error === TIMED_OUT ? "TimeoutError" : errorClassOf(error);
        }
      }
      if (decision === undefined || decision.decision === "block") {
        trace.seam = gate.key;
        const why =
          failure === "HandlerMissing"
            ? "the gate is activated but its plugin provided no function for it (fail closed)"
            : failure === "TimeoutError"
              ? `the gate did not answer within ${gate.timeoutMs} ms (fail closed)`
              : failure !== undefined
                ? "the gate failed (fail closed); its message is not forwarded"
                : decision === undefined
                  ? "the gate gave no valid decision (fail closed)"
                  : decision.reason;
        throw new ToolpactError("GATE_BLOCKED", `${tool.fullName} was blocked by gate ${gate.key}: ${why}`, {
          tool: tool.fullName,
          ...(failure !== undefined ? { errorClass: failure } : decision === undefined ? { errorClass: "InvalidGateDecision" } : {}),
        });
      }
      if (winner === undefined || gateRank(decision.decision) > gateRank(winner.decision.decision)) {
        winner = { decision, seam: gate.key };
      }
    }
    switch (winner?.decision.decision) {
      case "requireConfirmation":
        // Adds a confirmation, in the mode policy decided; never removes one.
        trace.seam = winner.seam;
        return { ...call, decision: { ...call.decision, confirm: true } };
      case "result":
        return { ...call, gateResult: { value: winner.decision.value, seam: winner.seam } };
      default:
        return call;
    }
  }

  /**
   * Step 10 (guards): each acting guard in order may pass, replace (validated again) or withhold the
   * output. A guard that throws, times out, answers nonsense or has no function withholds (fail closed).
   */
  async #guard(
    call: AuthorizedCall,
    output: unknown,
    operationId: string,
  ): Promise<{ ok: true; output: unknown } | { ok: false; errorCode: "GUARD_REJECTED" | "OUTPUT_INVALID"; errorClass?: string; seam: string }> {
    const { principal, tool } = call;
    let current = output;
    for (const guard of call.seams.guards) {
      const handler = guard.handler;
      if (handler === undefined) return { ok: false, errorCode: "GUARD_REJECTED", errorClass: "HandlerMissing", seam: guard.key };
      const guardCall: GuardCall = Object.freeze({
        tenantId: principal.tenantId,
        tool: tool.fullName,
        providerId: tool.providerId,
        effect: tool.declaration.effect,
        input: call.input,
        output: current,
        operationId,
        callerPluginId: principal.callerPluginId,
        actor: principal.actor,
      });
      let decision: GuardAnswer;
      try {
        // Read (and a replacement copied) inside the guarded block: a getter that throws is the guard failing.
        decision = guardAnswerOf(await this.#invokeSeam(guard, call, "execute", operationId, (ctx) => handler(guardCall, ctx)));
      } catch (error) {
        return { ok: false, errorCode: "GUARD_REJECTED", errorClass: error === TIMED_OUT ? "TimeoutError" : errorClassOf(error), seam: guard.key };
      }
      switch (decision.kind) {
        case "pass":
          continue;
        case "withhold":
          return { ok: false, errorCode: "GUARD_REJECTED", seam: guard.key };
        case "replace":
          // The replacement is a frozen copy too: no later guard, hook or caller can change it in place.
          current = decision.output;
          if (tool.validateOutput !== undefined && tool.validateOutput(current).length > 0) {
            return { ok: false, errorCode: "OUTPUT_INVALID", errorClass: "InvalidReplacement", seam: guard.key };
          }
          continue;
        case "not-json":
          return { ok: false, errorCode: "OUTPUT_INVALID", errorClass: "InvalidReplacement", seam: guard.key };
        default:
          return { ok: false, errorCode: "GUARD_REJECTED", errorClass: "InvalidGuardDecision", seam: guard.key };
      }
    }
    return { ok: true, output: current };
  }

  /**
   * Step 11: every acting AfterTool hook, at once, each under its timeout. Staged reactions become
   * outbox rows (payload sealed); a hook that fails becomes an activity event of kind `hook`.
   */
  async #hooks(
    call: AuthorizedCall,
    trace: CallTrace,
    outcome: { operationId: string; outcome: Exclude<OperationState, "running">; output: unknown; errorCode: string | undefined },
  ): Promise<{ outbox: OutboxRecord[]; events: ActivityRecord[] }> {
    const { principal, tool } = call;
    const hookCall: HookCall = Object.freeze({
      tenantId: principal.tenantId,
      tool: tool.fullName,
      providerId: tool.providerId,
      effect: tool.declaration.effect,
      input: call.input,
      output: outcome.output,
      outcome: outcome.outcome,
      ...(outcome.errorCode === undefined ? {} : { errorCode: outcome.errorCode }),
      operationId: outcome.operationId,
      callerPluginId: principal.callerPluginId,
      actor: principal.actor,
    });
    const answers = await Promise.all(
      call.seams.hooks.map(async (hook): Promise<{ reactions: readonly CheckedReaction[] } | { failure: string }> => {
        const handler = hook.handler;
        if (handler === undefined) return { failure: "HandlerMissing" };
        try {
          const answer = await this.#invokeSeam(hook, call, "execute", outcome.operationId, (ctx) => handler(hookCall, ctx));
          return reactionsOf(answer ?? []);
        } catch (error) {
          return { failure: error === TIMED_OUT ? "TimeoutError" : errorClassOf(error) };
        }
      }),
    );
    const outbox: OutboxRecord[] = [];
    const events: ActivityRecord[] = [];
    const now = this.#context.clock();
    answers.forEach((answer, index) => {
      const hook = call.seams.hooks[index]!;
      if ("failure" in answer) {
        this.#context.logger.warn({ event: "hook_failed", hook: hook.key, tool: tool.fullName, operationId: outcome.operationId, errorClass: answer.failure });
        events.push({
          ...this.#event(trace, "failed", { operationId: outcome.operationId, errorClass: answer.failure }),
          kind: "hook",
          phase: "execute",
          seam: hook.key,
        });
        return;
      }
      for (const reaction of answer.reactions) {
        const id = uuidv7(now);
        outbox.push({
          tenantId: principal.tenantId,
          id,
          operationId: outcome.operationId,
          tool: tool.fullName,
          hook: hook.key,
          kind: reaction.kind,
          sealedPayload: this.#cipher.seal(reaction.json, outboxAad(principal.tenantId, id)),
          createdAt: now,
          attempts: 0,
        });
      }
    });
    return { outbox, events };
  }

  /** Runs one gate, hook or guard in the call's scope (when its plugin may call tools) under its timeout. */
  #invokeSeam<T>(
    seam: RegisteredSeam<unknown>,
    call: AuthorizedCall,
    phase: "preview" | "execute",
    operationId: string | undefined,
    run: (ctx: SeamContext) => T | Promise<T>,
  ): Promise<T> {
    const { principal, tool } = call;
    const controller = new CallAbort();
    const ctx: SeamContext = Object.freeze({
      tenantId: principal.tenantId,
      actor: principal.actor,
      callerPluginId: principal.callerPluginId,
      tool: tool.fullName,
      phase,
      ...(operationId === undefined ? {} : { operationId }),
      get signal() {
        return controller.signal;
      },
    });
    const scope: ScopeOwner | undefined = seam.canCall
      ? { tenantId: principal.tenantId, actor: principal.actor, correlationId: principal.correlationId }
      : undefined;
    return this.#invoke(scope, () => run(ctx), seam.timeoutMs, controller);
  }

  #checkCaller(caller: RegisteredPlugin, tool: RegisteredTool): void {
    if (!caller.canCall) {
      throw new ToolpactError(
        "PERMISSION_DENIED",
        `plugin "${caller.id}" does not hold the "tools:call" permission: add it to its manifest's permissions`,
        { tool: tool.fullName },
      );
    }
    if (!caller.usesAllows(tool)) {
      throw new ToolpactError(
        "PERMISSION_DENIED",
        `plugin "${caller.id}" may not call ${tool.fullName}: its manifest's "uses" does not include it`,
        { tool: tool.fullName },
      );
    }
  }

  #binding(call: AuthorizedCall): ConfirmationBinding {
    const { principal, tool } = call;
    return {
      tenantId: principal.tenantId,
      actorUserId: principal.actor.userId,
      callerPluginId: principal.callerPluginId,
      providerId: tool.providerId,
      tool: tool.declaration.name,
      version: tool.declaration.version,
      schemaHash: tool.schemaHash,
      effect: tool.declaration.effect,
      mode: call.decision.mode,
      ...(call.runId === undefined ? {} : { runId: call.runId }),
      input: call.input,
    };
  }

  /**
   * Runs provider code under the tool's timeout, in a scope of its own (when `owner` is given) that
   * ends with it: settled, thrown or timed out, the scope turns inactive. A synchronous answer costs no
   * timer; a pending one races the timer, which aborts `signal` when it fires. Never throws: a
   * synchronous throw becomes a rejection.
   */
  #invoke<T>(owner: ScopeOwner | undefined, run: () => T | Promise<T>, timeoutMs: number, controller: CallAbort): Promise<T> {
    const scope: LiveScope | undefined =
      owner === undefined ? undefined : { tenantId: owner.tenantId, actor: owner.actor, correlationId: owner.correlationId, active: true };
    let pending: T | Promise<T>;
    try {
      pending = scope === undefined ? run() : this.scope.run(scope, run);
      if (!isThenable(pending)) {
        if (scope !== undefined) scope.active = false;
        return Promise.resolve(pending);
      }
    } catch (error) {
      if (scope !== undefined) scope.active = false;
      return Promise.reject(error);
    }
    this.running.add(controller);
    return new Promise<T>((resolve, reject) => {
      const end = (): void => {
        clearTimeout(timer);
        this.running.delete(controller);
        if (scope !== undefined) scope.active = false;
      };
      const timer = setTimeout(() => {
        end();
        controller.abort(TIMEOUT_REASON(timeoutMs));
        reject(TIMED_OUT);
      }, timeoutMs);
      try {
        pending.then(
          (value: T) => {
            end();
            resolve(value);
          },
          (error: unknown) => {
            end();
            reject(error);
          },
        );
      } catch (error) {
        end();
        reject(error);
      }
    });
  }

  // ---------------------------------------------------------------------------------------------
  // tools.list, tools.operation

  async listTools(principal: Principal): Promise<readonly ToolListing[]> {
    const tenant = await this.#tenants.get(principal.tenantId);
    const caller = this.#registry.get(principal.callerPluginId);
    const callerInstall = tenant.installs.get(principal.callerPluginId);
    if (caller === undefined || callerInstall === undefined || !callerInstall.enabled) {
      throw new ToolpactError("CALLER_DISABLED", `the calling plugin "${principal.callerPluginId}" is not enabled for this tenant`);
    }
    if (!caller.canCall) return [];
    const listing: ToolListing[] = [];
    for (const provider of this.#registry.all()) {
      if (tenant.installs.get(provider.id)?.enabled !== true) continue;
      for (const tool of provider.toolList) {
        if (tool.handler === undefined || !caller.usesAllows(tool)) continue;
        const decision = tenant.policy.decide(tool, principal.callerPluginId, principal.actor);
        if (decision.kind === "deny") continue;
        const { declaration } = tool;
        listing.push({
          providerId: provider.id,
          name: declaration.name,
          version: declaration.version,
          fullName: tool.fullName,
          ...(declaration.title === undefined ? {} : { title: declaration.title }),
          ...(declaration.description === undefined ? {} : { description: declaration.description }),
          effect: declaration.effect,
          requiresConfirmation: decision.confirm,
          minVerificationLevel: decision.minVerificationLevel,
          inputSchema: declaration.inputSchema,
          ...(declaration.outputSchema === undefined ? {} : { outputSchema: declaration.outputSchema }),
        });
      }
    }
    return listing;
  }

  /**
   * An operation, only for the tenant, caller and actor that started it. Anyone else gets the same
   * PERMISSION_DENIED as for an id that does not exist, so ids leak nothing.
   */
  async getOperation(principal: Principal, operationId: string): Promise<OperationView> {
    const record =
      typeof operationId === "string" && operationId.length <= 64
        ? await this.#context.store.getOperation(principal.tenantId, operationId)
        : undefined;
    if (
      record === undefined ||
      record.callerPluginId !== principal.callerPluginId ||
      record.actorUserId !== principal.actor.userId
    ) {
      throw new ToolpactError(
        "PERMISSION_DENIED",
        `no operation "${String(operationId).slice(0, 64)}" is visible to this caller and user: ` +
          "an operation is visible only to the caller and user that started it",
      );
    }
    return {
      operationId: record.operationId,
      tool: record.tool,
      state: record.state,
      ...(record.errorCode === undefined ? {} : { errorCode: record.errorCode }),
      createdAt: new Date(record.createdAt).toISOString(),
      ...(record.settledAt === undefined ? {} : { settledAt: new Date(record.settledAt).toISOString() }),
    };
  }

  // ---------------------------------------------------------------------------------------------
  // activity

  #trace(principal: Principal, phase: ActivityPhase, kind: ActivityKind = "call"): CallTrace {
    return {
      principal,
      kind,
      phase,
      started: performance.now(),
      providerId: undefined,
      tool: undefined,
      toolName: undefined,
      version: undefined,
      confirmationId: undefined,
      seam: undefined,
      recorded: false,
    };
  }

  #event(
    trace: CallTrace,
    outcome: ActivityRecord["outcome"],
    extra: Partial<Pick<ActivityRecord, "operationId" | "errorCode" | "errorClass" | "targetId">>,
  ): ActivityRecord {
    const { principal, tool } = trace;
    const now = this.#context.clock();
    const event: Record<string, unknown> = {
      id: uuidv7(now),
      tenantId: principal.tenantId,
      at: now,
      kind: trace.kind,
      actorUserId: principal.actor.userId,
      callerPluginId: principal.callerPluginId,
      phase: trace.phase,
      outcome,
      durationMs: Math.round((performance.now() - trace.started) * 1000) / 1000,
      ...extra,
    };
    if (trace.providerId !== undefined) event.providerPluginId = trace.providerId;
    if (tool !== undefined) {
      event.tool = tool.fullName;
      event.version = tool.declaration.version;
      event.effect = tool.declaration.effect;
    } else if (trace.providerId !== undefined && trace.toolName !== undefined) {
      event.tool = trace.version === undefined ? `${trace.providerId}:${trace.toolName}` : toolFullName(trace.providerId, trace.toolName, trace.version);
      if (trace.version !== undefined) event.version = trace.version;
    }
    if (trace.confirmationId !== undefined) event.confirmationId = trace.confirmationId;
    if (trace.seam !== undefined) event.seam = trace.seam;
    if (principal.correlationId !== undefined) event.correlationId = principal.correlationId;
    return event as unknown as ActivityRecord;
  }

  /** Writes a call's event outside the step-12 commit; a failed write is logged and counted, never thrown. */
  async #record(
    trace: CallTrace,
    outcome: ActivityRecord["outcome"],
    extra: Partial<Pick<ActivityRecord, "operationId" | "errorCode" | "errorClass">>,
  ): Promise<void> {
    trace.recorded = true;
    try {
      await this.#context.store.appendActivity(this.#event(trace, outcome, extra));
    } catch (error) {
      this.#onActivityWriteFailure();
      this.#context.logger.error({ event: "activity_write_failed", errorClass: errorClassOf(error) });
    }
  }

  /** Records a refused or failed call (once) and returns the error the caller gets. */
  async #refused(trace: CallTrace, error: unknown): Promise<unknown> {
    if (trace.recorded) return error;
    if (isToolpactError(error)) {
      await this.#record(trace, outcomeOf(error.code), {
        errorCode: error.code,
        ...(error.data.operationId === undefined ? {} : { operationId: error.data.operationId }),
        ...(error.data.errorClass === undefined ? {} : { errorClass: error.data.errorClass }),
      });
      return error;
    }
    await this.#record(trace, "failed", { errorClass: errorClassOf(error) });
    return error;
  }
}

function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

function providerFailed(tool: string, what: "preview" | "authorize", error: unknown): ToolpactError {
  if (error === TIMED_OUT) {
    return new ToolpactError("PROVIDER_FAILED", `the provider's ${what} of ${tool} timed out`, {
      tool,
      errorClass: "TimeoutError",
    });
  }
  return new ToolpactError("PROVIDER_FAILED", `the provider's ${what} of ${tool} failed; its message is not forwarded`, {
    tool,
    errorClass: errorClassOf(error),
  });
}

function outcomeError(
  code: ToolpactErrorCode,
  tool: string,
  operationId: string,
  errorClass: string | undefined,
): ToolpactError {
  const data = errorClass === undefined ? { tool, operationId } : { tool, operationId, errorClass };
  switch (code) {
    case "OUTPUT_INVALID":
      return new ToolpactError(
        "OUTPUT_INVALID",
        `${tool} ran (operation ${operationId}) but its result does not match its outputSchema: the result is withheld`,
        data,
      );
    case "OUTCOME_UNKNOWN":
      return new ToolpactError(
        "OUTCOME_UNKNOWN",
        `${tool} did not answer in time; its effect may or may not have happened (operation ${operationId}): ` +
          "read the operation before retrying",
        data,
      );
    case "PROVIDER_FAILED":
      return new ToolpactError(
        "PROVIDER_FAILED",
        `the provider of ${tool} failed (operation ${operationId}); its message is not forwarded`,
        data,
      );
    case "GUARD_REJECTED":
      return new ToolpactError(
        "GUARD_REJECTED",
        `${tool} ran (operation ${operationId}) but a guard withheld its output: the effect happened, the result is not shown`,
        data,
      );
    default:
      return new ToolpactError(code, `${tool} ended with ${code} (operation ${operationId})`, data);
  }
}

function isKnownCode(code: string): code is ToolpactErrorCode {
  return code === "OUTPUT_INVALID" || code === "OUTCOME_UNKNOWN" || code === "PROVIDER_FAILED" || code === "GUARD_REJECTED";
}

function targetIdOf(result: unknown): string | undefined {
  if (typeof result !== "object" || result === null) return undefined;
  const target = (result as { targetId?: unknown }).targetId;
  return typeof target === "string" && target.length > 0 ? target.slice(0, TARGET_ID_MAX) : undefined;
}

function resultAad(tenantId: string, operationId: string): string {
  return `toolpact:idempotency-result:${tenantId}:${operationId}`;
}

function inputAad(tenantId: string, operationId: string): string {
  return `toolpact:operation-input:${tenantId}:${operationId}`;
}

function outboxAad(tenantId: string, id: string): string {
  return `toolpact:outbox:${tenantId}:${id}`;
}

/** A gate's answer as one of the four decisions, or undefined when it is none of them. */
function gateDecisionOf(answer: unknown): GateDecision | undefined {
  if (typeof answer !== "object" || answer === null) return undefined;
  const { decision, reason, value } = answer as { decision?: unknown; reason?: unknown; value?: unknown };
  switch (decision) {
    case "allow":
      return { decision: "allow" };
    case "block":
      return {
        decision: "block",
        reason: typeof reason === "string" && reason.length > 0 ? reason.slice(0, REASON_MAX) : "the gate gave no reason",
      };
    case "requireConfirmation":
      return typeof reason === "string" ? { decision: "requireConfirmation", reason: reason.slice(0, REASON_MAX) } : { decision: "requireConfirmation" };
    case "result": {
      if (!("value" in (answer as object))) return undefined;
      let copy: unknown;
      try {
        copy = outputOf(value);
      } catch {
        return undefined; // not JSON: no valid decision (fail closed)
      }
      return { decision: "result", value: copy };
    }
    default:
      return undefined;
  }
}

/**
 * What a provider, gate or guard handed back, as the frozen JSON copy the pipeline works on from then on
 * (undefined, a provider that answers nothing, stays undefined).
 * @throws ToolpactError OUTPUT_INVALID when it is not JSON.
 */
function outputOf(value: unknown): unknown {
  return value === undefined ? undefined : prepareOutput(value);
}

/** A preview answer as plain data (summary cut to SUMMARY_MAX, details a frozen JSON copy), or what is wrong with it. */
function previewOf(answer: unknown): { summary: string; details: unknown } | string {
  if (typeof answer !== "object" || answer === null) return "returned no summary string";
  const { summary, details } = answer as { summary?: unknown; details?: unknown };
  if (typeof summary !== "string") return "returned no summary string";
  let copy: unknown = null;
  if (details !== undefined) {
    try {
      copy = prepareOutput(details);
    } catch {
      return "has details that are not JSON";
    }
  }
  return { summary: summary.length > SUMMARY_MAX ? summary.slice(0, SUMMARY_MAX) : summary, details: copy };
}

/** A guard's answer, read once; a replacement already copied. */
type GuardAnswer =
  | { readonly kind: "pass" | "withhold" | "not-json" | "invalid" }
  | { readonly kind: "replace"; readonly output: unknown };

function guardAnswerOf(answer: unknown): GuardAnswer {
  if (typeof answer !== "object" || answer === null) return { kind: "invalid" };
  const decision = (answer as { decision?: unknown }).decision;
  if (decision === "pass" || decision === "withhold") return { kind: decision };
  if (decision !== "replace" || !("output" in answer)) return { kind: "invalid" };
  const output = (answer as { output: unknown }).output;
  try {
    return { kind: "replace", output: outputOf(output) };
  } catch {
    return { kind: "not-json" };
  }
}

/** The guards acting on a call, in order: kept with an idempotency record, compared on replay. */
function guardSetOf(seams: ResolvedSeams): string {
  return seams.guards.map((guard) => guard.key).join("\n");
}

/** A hook's answer as checked reactions with their payload JSON, or the reason it is not one. */
function reactionsOf(answer: unknown): { reactions: readonly CheckedReaction[] } | { failure: string } {
  if (!Array.isArray(answer) || answer.length > MAX_REACTIONS) return { failure: "InvalidReactions" };
  const reactions: CheckedReaction[] = [];
  for (const item of answer as unknown[]) {
    const kind = (item as { kind?: unknown } | null)?.kind;
    if (typeof kind !== "string" || !REACTION_KIND.test(kind)) return { failure: "InvalidReactions" };
    let json: string | undefined;
    try {
      json = JSON.stringify((item as { payload?: unknown }).payload ?? null);
    } catch {
      return { failure: "InvalidReactions" };
    }
    if (json === undefined || Buffer.byteLength(json, "utf8") > MAX_REACTION_BYTES) return { failure: "InvalidReactions" };
    reactions.push({ kind, json });
  }
  return { reactions };
}
