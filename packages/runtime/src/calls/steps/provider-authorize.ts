import { ToolpactError, type ToolCallContext } from "@toolpact/contract";
import { isAllowed, providerFailed } from "../../plugin-code/answers.js";
import type { Call } from "../call.js";
import type { Next } from "../compose.js";

/** Step 6: the provider's own `authorize`, when it has one, allows the call (it can only narrow). */
export function providerAuthorize<T>(call: Call, next: Next<T>): Promise<T> {
  const authorize = call.handler.authorize;
  return authorize === undefined ? next() : authorizeThen(call, authorize, next);
}

async function authorizeThen<T>(call: Call, authorize: NonNullable<Call["handler"]["authorize"]>, next: Next<T>): Promise<T> {
  const { principal, tool, handler, input } = call;
  const abort = call.abort;
  const ctx: ToolCallContext = Object.freeze({
    tenantId: principal.tenantId,
    actor: principal.actor,
    callerPluginId: principal.callerPluginId,
    tool: tool.fullName,
    effect: tool.declaration.effect,
    phase: call.phase,
    get signal() {
      return abort.signal;
    },
  });
  // The answer is read inside the guarded block: a getter that throws is the provider failing.
  let allowed: boolean;
  try {
    const invocation = { owner: call.providerScope, timeoutMs: tool.declaration.timeoutMs, abort };
    allowed = isAllowed(await call.parts.pluginCode.run(invocation, () => authorize.call(handler, input, ctx)));
  } catch (error) {
    throw providerFailed(tool.fullName, "authorize", error);
  }
  if (!allowed) {
    throw new ToolpactError("PERMISSION_DENIED", `the provider of ${tool.fullName} refused this call for this user`, {
      tool: tool.fullName,
    });
  }
  return next();
}
