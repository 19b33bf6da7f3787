import { ToolpactError, type ExecuteOptions, type ExecuteResult, type ToolRef } from "@toolpact/contract";
import type { Principal } from "../api.js";
import { startCall, type CallAt, type CallParts } from "./call.js";
import { authorized } from "./authorization.js";
import { chain, type Boundary } from "./chain.js";
import { runEffect } from "./effect.js";
import { isRetry, type EffectOutcome, type ExecuteAnswer } from "./outcome.js";
import { ledger } from "./steps/ledger.js";
import { recordRead, recordsOnce } from "./steps/record-read.js";
import { replayIdempotent } from "./steps/replay-idempotent.js";
import { verifyConfirmation } from "./steps/verify-confirmation.js";
import { tracedAround } from "../telemetry/step-spans.js";
import { factsSoFar } from "./call.js";

const tracedRecordRead = tracedAround(recordRead);
const tracedLedger = tracedAround(ledger);

/**
 * Around the effect: a read with no token to consume nor key to reserve is recorded once, settled, after
 * it ran (`record-read`); every other call begins its operation first and settles it after (`ledger`).
 */
const recordOperation: Boundary<ExecuteAnswer, EffectOutcome, "tenant" | "tool" | "input" | "keying" | "consumes", "operation"> = function recordOperation(
  call,
  next,
) {
  return recordsOnce(call) ? tracedRecordRead(call, next) : tracedLedger(call, next);
};

/** `tools.execute`, top to bottom: the authorization steps, replay and confirmation, then the ledger around the effect. */
const executeSteps = authorized(chain<ExecuteAnswer>()).step(replayIdempotent).step(verifyConfirmation).around(recordOperation, runEffect);

/** How often the begin may find the tenant config changed under a call before the call gives up. */
const CONFIG_RETRIES = 3;
const NO_OPTIONS: ExecuteOptions = Object.freeze({});

/** An execute request, its principal authenticated. */
export interface ExecuteRequest {
  readonly principal: Principal;
  readonly ref: ToolRef;
  readonly input: unknown;
  readonly options: ExecuteOptions | undefined;
}

/**
 * Runs an execute through its steps. When another instance changed the tenant's config after the
 * authorization steps read it, the call is decided again (nothing ran); a refusal is recorded (once) and rethrown.
 */
export async function runExecute(parts: CallParts, request: ExecuteRequest): Promise<ExecuteResult> {
  const { principal } = request;
  const options = request.options ?? NO_OPTIONS;
  const trace = parts.activity.trace(principal, "execute");
  const observed = parts.telemetry.observe(principal, "execute", request.ref);
  const span = observed?.span;
  let call: CallAt<never> | undefined;
  try {
    for (let attempt = 1; ; attempt++) {
      call = startCall(parts, trace, { ref: request.ref, input: request.input, phase: "execute", runId: options.runId, options, span });
      const answer = await executeSteps(call);
      if (!isRetry(answer)) {
        observed?.end(factsSoFar(call), "execute");
        return answer;
      }
      parts.tenants.invalidate(principal.tenantId);
      if (attempt >= CONFIG_RETRIES) {
        throw new ToolpactError("CONCURRENT_CHANGE", "the tenant's configuration kept changing while this call was authorized; nothing ran: retry");
      }
    }
  } catch (error) {
    observed?.end(call === undefined ? {} : factsSoFar(call), "execute", error);
    throw await trace.refused(error);
  }
}
