import { ToolpactError, type ToolDeclaration } from "@toolpact/contract";
import { bindingOf, type CallAt, type CallDecision } from "../call.js";
import type { Step } from "../chain.js";

/**
 * verify-confirmation: a call that needs confirmation carries a token bound to exactly this call, checked
 * in order (alg/typ/kid, signature, expiry, binding); that it is unused is checked by the ledger's begin.
 * Without a token, a live user grant that covers the call stands in for it, where the policy still allows
 * grants for it and no gate asked for this confirmation; its use is counted by the begin.
 */
export const verifyConfirmation: Step<"tool" | "input" | "permission" | "decision", "consumes"> = async function verifyConfirmation(call, next) {
  const { decision, tool } = call;
  if (!decision.confirm) return next(call.confirmed(undefined));
  const token = call.options.confirmationToken;
  if (token === undefined) {
    const grant = await grantFor(call);
    if (grant !== undefined) return next(call.confirmed({ grant }));
    throw new ToolpactError(
      "CONFIRMATION_REQUIRED",
      `${tool.fullName} requires confirmation: ${askedBy(tool.declaration, decision)}call preview first and pass its confirmationToken`,
      { tool: tool.fullName },
    );
  }
  const now = call.parts.context.clock();
  return call.parts.tokens.verify(token, bindingOf(call), tool.fullName).then((verified) => {
    const confirmed = call.confirmed({ tokenId: verified.tokenId, consumedAt: now, expiresAt: verified.expiresAt });
    // The token is bound to the actor (its `sub`): the user who approved is the call's actor, in either mode.
    const how = verified.mode === "token" ? "token" : call.principal.via === "mcp" ? "mcp-approval" : "platform-page";
    confirmed.trace.confirmedThrough({ how, by: call.principal.actor.userId });
    return next(confirmed);
  });
};

/** The live grant covering this call, when the policy allows grants for it and no gate asked to confirm. */
function grantFor(call: CallAt<"tool" | "input" | "permission" | "decision">) {
  const { principal, tool, permission, decision } = call;
  if (permission.grants === undefined || decision.confirmGate !== undefined) return Promise.resolve(undefined);
  const binding = {
    tenantId: principal.tenantId,
    actorUserId: principal.actor.userId,
    callerPluginId: principal.callerPluginId,
    tool: `${tool.providerId}:${tool.declaration.name}`,
    version: tool.declaration.version,
    schemaHash: tool.schemaHash,
  };
  return call.parts.grants.find(binding, call.input, call.parts.context.clock());
}

/** Who asked for confirmation, when not the tool's own declaration: the policy rule, or the gate. */
function askedBy(declaration: ToolDeclaration, decision: CallDecision): string {
  if (declaration.requiresConfirmation) return "";
  const rule = decision.confirmRule;
  if (rule !== undefined) return `the tenant policy's confirm rule /rules/${rule.index} (tools "${rule.tools}") asks for it; `;
  return decision.confirmGate === undefined ? "" : `gate ${decision.confirmGate} asks for it; `;
}
