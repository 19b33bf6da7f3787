import { ToolpactError, type PreviewResult, type ToolCallContext } from "@toolpact/contract";
import { previewOf, providerFailed } from "../../plugin-code/answers.js";
import type { Call } from "../call.js";

/**
 * The end of a preview: the provider's summary and details of what the call would do. Nobody approves
 * blind: a provider without a preview of its own shows the validated input when the call needs confirmation.
 */
export async function previewSummary(call: Call): Promise<PreviewResult> {
  const { tool, handler } = call;
  const { declaration, fullName } = tool;
  const preview = handler.preview;
  if (preview === undefined) {
    return {
      summary: `${declaration.title ?? declaration.name} (${fullName})`,
      details: call.permission.confirm ? call.input : null,
      confirmation: { required: false },
    };
  }
  const { principal, abort } = call;
  const ctx: ToolCallContext = Object.freeze({
    tenantId: principal.tenantId,
    actor: principal.actor,
    callerPluginId: principal.callerPluginId,
    tool: fullName,
    effect: declaration.effect,
    phase: "preview" as const,
    get signal() {
      return abort.signal;
    },
  });
  // The answer is read and copied inside the guarded block: a getter that throws is the provider failing.
  let shown: { summary: string; details: unknown } | string;
  try {
    const invocation = { owner: call.providerScope, timeoutMs: declaration.timeoutMs, abort };
    shown = previewOf(await call.parts.pluginCode.run(invocation, () => preview.call(handler, call.input, ctx)));
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
}
