import { ToolpactError, type PreviewResult } from "@toolpact/contract";
import { previewOf, providerFailed } from "../../plugin-code/answers.js";
import type { LastStep } from "../chain.js";

/**
 * The end of a preview: the provider's summary and details of what the call would do. Nobody approves
 * blind: a provider without a preview of its own shows the validated input when the call needs confirmation.
 */
export const previewSummary: LastStep<PreviewResult, "provider" | "tool" | "handler" | "input" | "decision"> = async function previewSummary(call) {
  const { tool, handler } = call;
  const { declaration, fullName } = tool;
  const preview = handler.preview;
  if (preview === undefined) {
    return {
      summary: `${declaration.title ?? declaration.name} (${fullName})`,
      details: call.decision.confirm ? call.input : null,
      confirmation: { required: false },
    };
  }
  // The answer is read and copied inside the guarded block: a getter that throws is the provider failing.
  let shown: { summary: string; details: unknown } | string;
  try {
    shown = previewOf(await call.parts.pluginCode.runProvider(call, (ctx) => preview.call(handler, call.input, ctx)));
  } catch (error) {
    throw providerFailed(fullName, "preview", error);
  }
  if (typeof shown === "string") {
    throw new ToolpactError("PROVIDER_FAILED", `the provider's preview of ${fullName} ${shown}`, {
      tool: fullName,
      errorClass: "InvalidPreview",
    });
  }
  return { summary: shown.summary, details: shown.details, confirmation: { required: false } };
};
