import type { PreviewOptions, PreviewResult, ToolRef } from "@toolpact/contract";
import type { Principal } from "../api.js";
import { Call, type CallParts } from "./call.js";
import { authorizationSteps } from "./authorization.js";
import { compose } from "./compose.js";
import { limitPreviews } from "./steps/limit-previews.js";
import { previewSummary } from "./steps/preview-summary.js";
import { requestConfirmation } from "./steps/request-confirmation.js";

/** `tools.preview`, top to bottom: the rate limit, steps 2 to 7, then the confirmation around the summary. */
const previewSteps = compose<Call, PreviewResult>([limitPreviews, ...authorizationSteps, requestConfirmation, previewSummary]);

/** A preview request after step 1. */
export interface PreviewRequest {
  readonly principal: Principal;
  readonly ref: ToolRef;
  readonly input: unknown;
  readonly options: PreviewOptions | undefined;
}

/** Runs a preview through its steps and records it; a refusal is recorded (once) and rethrown. */
export async function runPreview(parts: CallParts, request: PreviewRequest): Promise<PreviewResult> {
  const trace = parts.activity.trace(request.principal, "preview");
  const call = new Call(parts, trace, { ref: request.ref, input: request.input, phase: "preview", runId: request.options?.runId, options: {} });
  try {
    const result = await previewSteps(call);
    await trace.record("previewed");
    return result;
  } catch (error) {
    throw await trace.refused(error);
  }
}
