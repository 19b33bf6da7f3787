import { ToolpactError, type ExecuteOptions, type ExecuteResult, type ToolRef } from "@toolpact/contract";
import type { Principal } from "../api.js";
import { Call, type CallParts } from "./call.js";
import { authorizationSteps } from "./authorization.js";
import { around, compose, type Next } from "./compose.js";
import { isRetry, type EffectOutcome, type ExecuteAnswer } from "./outcome.js";
import { afterToolHooks } from "./steps/after-tool-hooks.js";
import { applyGuards } from "./steps/apply-guards.js";
import { invokeProvider } from "./steps/invoke-provider.js";
import { keepResult } from "./steps/keep-result.js";
import { ledger } from "./steps/ledger.js";
import { recordRead, recordsOnce } from "./steps/record-read.js";
import { replayIdempotent } from "./steps/replay-idempotent.js";
import { validateOutput } from "./steps/validate-output.js";
import { verifyConfirmation } from "./steps/verify-confirmation.js";

/** What happens between an operation's begin and its settle: innermost the provider, then each step around it. */
export const effectSteps = compose<Call, EffectOutcome>([afterToolHooks, keepResult, applyGuards, validateOutput, invokeProvider]);

/**
 * Steps 9 and 12 around the effect: a read with no token to consume nor key to reserve is recorded once,
 * settled, after it ran (`record-read`); every other call begins its operation first and settles it after (`ledger`).
 */
function recordOperation(call: Call, next: Next<EffectOutcome>): Promise<ExecuteAnswer> {
  return recordsOnce(call) ? recordRead(call, next) : ledger(call, next);
}

/** `tools.execute`, top to bottom: steps 2 to 7, then step 8, then the ledger around the effect. */
const executeSteps = compose<Call, ExecuteAnswer>([
  ...authorizationSteps,
  replayIdempotent,
  verifyConfirmation,
  around(recordOperation, effectSteps),
]);

/** How often step 9 may find the tenant config changed under a call before the call gives up. */
const CONFIG_RETRIES = 3;
const NO_OPTIONS: ExecuteOptions = Object.freeze({});

/** An execute request after step 1. */
export interface ExecuteRequest {
  readonly principal: Principal;
  readonly ref: ToolRef;
  readonly input: unknown;
  readonly options: ExecuteOptions | undefined;
}

/**
 * Runs an execute through its steps. When another instance changed the tenant's config after steps 2-7
 * read it, the call is decided again (nothing ran); a refusal is recorded (once) and rethrown.
 */
export async function runExecute(parts: CallParts, request: ExecuteRequest): Promise<ExecuteResult> {
  const { principal } = request;
  const options = request.options ?? NO_OPTIONS;
  const trace = parts.activity.trace(principal, "execute");
  try {
    for (let attempt = 1; ; attempt++) {
      const call = new Call(parts, trace, { ref: request.ref, input: request.input, phase: "execute", runId: options.runId, options });
      const answer = await executeSteps(call);
      if (!isRetry(answer)) return answer;
      parts.tenants.invalidate(principal.tenantId);
      if (attempt >= CONFIG_RETRIES) {
        throw new ToolpactError("CONCURRENT_CHANGE", "the tenant's configuration kept changing while this call was authorized; nothing ran: retry");
      }
    }
  } catch (error) {
    throw await trace.refused(error);
  }
}
