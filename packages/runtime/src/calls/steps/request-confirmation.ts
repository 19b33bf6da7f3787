import type { ConfirmationInfo, PreviewResult } from "@toolpact/contract";
import { checkShownWhole } from "../../confirmation/shown-preview.js";
import type { Call } from "../call.js";
import type { Next } from "../compose.js";

/**
 * Step 8 of a preview: a call that needs confirmation gets it asked for, in the mode policy decided. In
 * platform mode the request (with the preview the page shows) is kept and the caller waits for the
 * user; in token mode the caller, a trusted confirmation UI, gets the token at once. What is confirmed is
 * shown whole (summary, details, the exact input) or refused here, before anything is kept or minted.
 */
export async function requestConfirmation(call: Call, next: Next<PreviewResult>): Promise<PreviewResult> {
  const shown = await next();
  const { permission, parts, trace } = call;
  if (!permission.confirm) return shown;
  checkShownWhole(call.tool.fullName, { details: shown.details, input: call.input });
  let confirmation: ConfirmationInfo;
  if (permission.mode === "platform") {
    const requested = await parts.confirmations.create(call.binding(), shown);
    trace.confirmedBy(requested.requestId);
    confirmation = requested;
  } else {
    const minted = await parts.tokens.mint(call.binding());
    trace.confirmedBy(minted.tokenId);
    confirmation = { required: true, mode: "token", token: minted.token, expiresAt: new Date(minted.expiresAt).toISOString() };
  }
  return { summary: shown.summary, details: shown.details, confirmation };
}
