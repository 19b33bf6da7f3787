import type { ConfirmationInfo, PreviewResult } from "@toolpact/contract";
import { checkShownWhole } from "../../confirmation/shown-preview.js";
import { bindingOf } from "../call.js";
import type { StepOf } from "../chain.js";

/**
 * request-confirmation, around a preview's summary: a call that needs confirmation gets it asked for, in the mode policy decided. In
 * platform mode the request (with the preview the page shows) is kept and the caller waits for the
 * user; in token mode the caller, a trusted confirmation UI, gets the token at once. What is confirmed is
 * shown whole (summary, details, the exact input) or refused here, before anything is kept or minted.
 */
export const requestConfirmation: StepOf<PreviewResult, "tool" | "input" | "permission" | "decision"> = async function requestConfirmation(call, next) {
  const shown = await next(call);
  const { decision, parts, trace } = call;
  if (!decision.confirm) return shown;
  checkShownWhole(call.tool.fullName, { details: shown.details, input: call.input });
  let confirmation: ConfirmationInfo;
  if (decision.mode === "platform") {
    // The grant limits the policy allows here go with the request, for the page to offer (never when a gate asked).
    const grants = decision.confirmGate === undefined ? call.permission.grants : undefined;
    const requested = await parts.confirmations.create(bindingOf(call), { ...shown, ...(grants === undefined ? {} : { grants }) });
    trace.confirmedBy(requested.requestId);
    confirmation = requested;
  } else {
    const minted = await parts.tokens.mint(bindingOf(call));
    trace.confirmedBy(minted.tokenId);
    confirmation = { required: true, mode: "token", token: minted.token, expiresAt: new Date(minted.expiresAt).toISOString() };
  }
  return { summary: shown.summary, details: shown.details, confirmation };
};
