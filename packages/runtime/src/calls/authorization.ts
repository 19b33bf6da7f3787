import type { Call } from "./call.js";
import type { Next } from "./compose.js";
import { applyGates } from "./steps/apply-gates.js";
import { checkCaller } from "./steps/check-caller.js";
import { decidePermission } from "./steps/decide-permission.js";
import { providerAuthorize } from "./steps/provider-authorize.js";
import { resolveTool } from "./steps/resolve-tool.js";
import { validateInput } from "./steps/validate-input.js";

/** A step that lets any chain through, whatever the chain answers. */
type AnyChainStep = <T>(call: Call, next: Next<T>) => Promise<T>;

/**
 * Steps 2 to 7, in order: what every preview and execute passes, and what recovery runs again before it
 * re-invokes a provider. Each only refuses or narrows; none has an effect.
 */
export const authorizationSteps: readonly AnyChainStep[] = [
  resolveTool,
  checkCaller,
  validateInput,
  decidePermission,
  providerAuthorize,
  applyGates,
];
