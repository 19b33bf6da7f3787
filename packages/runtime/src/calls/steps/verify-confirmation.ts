import { ToolpactError } from "@toolpact/contract";
import type { Call } from "../call.js";
import type { Next } from "../compose.js";

/**
 * Step 8, second half: a call that needs confirmation carries a token bound to exactly this call, checked
 * in order (alg/typ/kid, signature, expiry, binding); that it is unused is checked by the step-9 transaction.
 */
export function verifyConfirmation<T>(call: Call, next: Next<T>): Promise<T> {
  if (!call.permission.confirm) return next();
  const { tool } = call;
  const token = call.options.confirmationToken;
  if (token === undefined) {
    throw new ToolpactError("CONFIRMATION_REQUIRED", `${tool.fullName} requires confirmation: call preview first and pass its confirmationToken`, {
      tool: tool.fullName,
    });
  }
  const now = call.parts.context.clock();
  return call.parts.tokens.verify(token, call.binding(), tool.fullName).then((verified) => {
    call.confirmed({ tokenId: verified.tokenId, consumedAt: now, expiresAt: verified.expiresAt });
    return next();
  });
}
