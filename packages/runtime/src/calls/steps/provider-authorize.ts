import { ToolpactError, type ToolHandler } from "@toolpact/contract";
import { isAllowed, providerFailed } from "../../plugin-code/answers.js";
import type { CallAt } from "../call.js";
import type { Next, Step } from "../chain.js";

type Reads = "provider" | "tool" | "handler" | "input";

/**
 * provider-authorize: the provider's own `authorize`, when it has one, allows the call (it can only narrow).
 * A provider at capacity (ProviderBusy) refuses with RATE_LIMITED here, before any operation exists.
 */
export const providerAuthorize: Step<Reads> = function providerAuthorize(call, next) {
  const authorize = call.handler.authorize;
  return authorize === undefined ? next(call) : authorizeThen(call, authorize, next);
};

async function authorizeThen<T>(call: CallAt<Reads>, authorize: NonNullable<ToolHandler["authorize"]>, next: Next<CallAt<Reads>, T>): Promise<T> {
  const { tool, handler, input } = call;
  // The answer is read inside the guarded block: a getter that throws is the provider failing.
  let allowed: boolean;
  try {
    allowed = isAllowed(await call.parts.pluginCode.runProvider(call, (ctx) => authorize.call(handler, input, ctx)));
  } catch (error) {
    throw providerFailed(tool.fullName, "authorize", error);
  }
  if (!allowed) {
    throw new ToolpactError("PERMISSION_DENIED", `the provider of ${tool.fullName} refused this call for this user`, {
      tool: tool.fullName,
    });
  }
  return next(call);
}
