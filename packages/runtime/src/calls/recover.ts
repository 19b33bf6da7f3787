import { isToolpactError, parseToolFullName, type ActorInfo } from "@toolpact/contract";
import { errorClassOf } from "../activity/error-class.js";
import type { CallTrace } from "../activity/call-trace.js";
import type { Principal } from "../api.js";
import type { RecoveryInput } from "../sealed/sealed-payloads.js";
import type { OperationRecord } from "../store/store.js";
import { startCall, type CallParts, type RunningOperation } from "./call.js";
import { authorized } from "./authorization.js";
import { chain } from "./chain.js";
import { runEffect } from "./effect.js";
import type { ExecuteAnswer } from "./outcome.js";
import { resumedLedger } from "./steps/ledger.js";

/**
 * Re-invoking an operation whose lease expired (its operation set from the start): the authorization
 * steps again, then the same effect under the taken-over lease.
 */
const recoverSteps = authorized(chain<ExecuteAnswer, "operation">()).around(resumedLedger, runEffect);

/** A resumed operation settles whichever idempotency record names it: recovery does not know the key. */
const ANY_RECORD: RunningOperation["settles"] = Object.freeze({});

/** After start-up, recovery waits this long for a handler it may re-invoke to be provided. */
const STARTUP_GRACE_MS = 60_000;

/**
 * Settles operations whose lease expired (their instance crashed or stalled). The lease is taken over
 * first (new owner, next epoch), so only one instance acts. A tool declaring `recovery: "idempotent"`
 * whose tenant's pinned policy allows it is re-invoked with the same operation id after the authorization
 * steps run again; anything else becomes `unknown`, and the activity log says so.
 */
export class OperationRecovery {
  readonly #parts: CallParts;
  readonly #startedAt = performance.now();

  constructor(parts: CallParts) {
    this.#parts = parts;
  }

  /** Settles one expired operation; false when it left it alone (another instance took it, or its plugin is not loaded here). */
  async recover(expired: OperationRecord): Promise<boolean> {
    const { context, registry, tenants, leases } = this.#parts;
    const parsed = parseToolFullName(expired.tool);
    const provider = parsed === undefined ? undefined : registry.get(parsed.pluginId);
    if (parsed === undefined || provider === undefined) {
      context.logger.warn({ event: "recovery_skipped", operationId: expired.operationId, tool: expired.tool, reason: "plugin not loaded here" });
      return false;
    }
    const tool = provider.tools.get(parsed.tool)?.byVersion.get(parsed.version);
    if (tool?.declaration.recovery === "idempotent" && tool.handler === undefined && this.#inStartupGrace()) {
      // The host may still be activating its plugins: do not decide without the handler it may re-invoke.
      return false;
    }
    const now = context.clock();
    const taken = await context.store.takeLease({
      tenantId: expired.tenantId,
      operationId: expired.operationId,
      leaseEpoch: expired.leaseEpoch,
      owner: context.instanceId,
      now,
      expiresAt: leases.expiry(now),
    });
    if (taken === undefined) return false;
    tenants.invalidate(taken.tenantId);
    const tenantState = tenants.get(taken.tenantId);
    const tenant = tenantState instanceof Promise ? await tenantState : tenantState;
    const decision = tool === undefined ? undefined : tenant.recovery.decide(tool);
    const attempts = taken.recoveryAttempts ?? 1;
    const minimal: Principal = {
      tenantId: taken.tenantId,
      callerPluginId: taken.callerPluginId,
      actor: { userId: taken.actorUserId, verificationLevel: 0, roles: [] },
    };
    if (decision?.reinvoke === true && attempts <= decision.maxAttempts && taken.sealedInput !== undefined) {
      const kept = this.#openInput(taken);
      if (kept !== undefined) {
        await this.#reinvoke(taken, { ...parsed, kept });
        return true;
      }
    }
    const trace = this.#parts.activity.trace(minimal, "settle", "recovery");
    trace.namedProvider(parsed.pluginId);
    trace.namedTool(parsed.tool);
    trace.namedVersion(parsed.version);
    if (tool !== undefined) trace.resolved(tool);
    await this.#settleUnknown(taken, trace, "OUTCOME_UNKNOWN");
    return true;
  }

  #openInput(taken: OperationRecord): RecoveryInput | undefined {
    try {
      return this.#parts.sealed.openRecoveryInput(taken.tenantId, taken.operationId, taken.sealedInput!);
    } catch (error) {
      this.#parts.context.logger.error({ event: "recovery_input_unreadable", operationId: taken.operationId, errorClass: errorClassOf(error) });
      return undefined;
    }
  }

  /** Runs the authorization steps again as the actor the operation was for, then the effect under the taken-over lease. */
  async #reinvoke(
    taken: OperationRecord,
    what: { readonly pluginId: string; readonly tool: string; readonly version: number; readonly kept: RecoveryInput },
  ): Promise<void> {
    const { kept } = what;
    const actor: ActorInfo = Object.freeze({
      userId: taken.actorUserId,
      verificationLevel: kept.actor.verificationLevel,
      roles: Object.freeze([...kept.actor.roles]),
    });
    const principal: Principal = { tenantId: taken.tenantId, callerPluginId: taken.callerPluginId, actor };
    const trace = this.#parts.activity.trace(principal, "settle", "recovery");
    const call = startCall(this.#parts, trace, {
      ref: { providerId: what.pluginId, tool: what.tool, version: what.version },
      input: kept.input,
      phase: "execute",
      runId: kept.runId,
      options: {},
    }).began({ operationId: taken.operationId, leaseEpoch: taken.leaseEpoch, settles: ANY_RECORD });
    try {
      await recoverSteps(call);
    } catch (error) {
      if (!trace.recorded) {
        // The authorization steps refused the call again (or its settle failed): the first attempt's effect stays unknown.
        await this.#settleUnknown(taken, trace, isToolpactError(error) ? error.code : "OUTCOME_UNKNOWN");
      }
    }
  }

  #inStartupGrace(): boolean {
    return performance.now() - this.#startedAt < STARTUP_GRACE_MS;
  }

  async #settleUnknown(taken: OperationRecord, trace: CallTrace, reason: string): Promise<void> {
    const { context } = this.#parts;
    let settled: "settled" | "lease-lost" | "failed";
    try {
      settled = await context.store.settleOperation({
        tenantId: taken.tenantId,
        operationId: taken.operationId,
        leaseOwner: context.instanceId,
        leaseEpoch: taken.leaseEpoch,
        state: "unknown",
        errorCode: "OUTCOME_UNKNOWN",
        settledAt: context.clock(),
        activity: trace.event("unknown", { operationId: taken.operationId, errorCode: reason }),
        idempotency: {},
      });
    } catch (error) {
      // Settled meanwhile by whoever holds a newer lease, or the store failed: the next pass looks again.
      context.logger.warn({ event: "recovery_settle_failed", operationId: taken.operationId, errorClass: errorClassOf(error) });
      settled = "failed";
    }
    if (settled === "settled") trace.committed();
    context.logger.warn({ event: "operation_settled_unknown", operationId: taken.operationId, tool: taken.tool, reason, settled });
  }
}
