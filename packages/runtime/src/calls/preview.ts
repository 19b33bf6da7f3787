import type { PreviewOptions, PreviewResult, ToolRef } from "@toolpact/contract";
import type { Principal } from "../api.js";
import { factsSoFar, startCall, type CallParts } from "./call.js";
import { authorized } from "./authorization.js";
import { chain } from "./chain.js";
import { limitPreviews } from "./steps/limit-previews.js";
import { previewSummary } from "./steps/preview-summary.js";
import { requestConfirmation } from "./steps/request-confirmation.js";
import { tracedAround } from "../telemetry/step-spans.js";

/** `tools.preview`, top to bottom: the rate limit, the authorization steps, then the confirmation around the summary. */
const previewSteps = authorized(chain<PreviewResult>().step(limitPreviews)).step(tracedAround(requestConfirmation)).last(previewSummary);

/** A preview request, its principal authenticated. */
export interface PreviewRequest {
  readonly principal: Principal;
  readonly ref: ToolRef;
  readonly input: unknown;
  readonly options: PreviewOptions | undefined;
}

/** Runs a preview through its steps and records it; a refusal is recorded (once) and rethrown. */
export async function runPreview(parts: CallParts, request: PreviewRequest): Promise<PreviewResult> {
  const trace = parts.activity.trace(request.principal, "preview");
  const observed = parts.telemetry.observe(request.principal, "preview", request.ref);
  const call = startCall(parts, trace, {
    ref: request.ref,
    input: request.input,
    phase: "preview",
    runId: request.options?.runId,
    options: {},
    span: observed?.span,
  });
  try {
    const result = await previewSteps(call);
    await trace.record("previewed");
    observed?.end(factsSoFar(call), "preview");
    return result;
  } catch (error) {
    observed?.end(factsSoFar(call), "preview", error);
    throw await trace.refused(error);
  }
}
