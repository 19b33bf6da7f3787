import type { FactName } from "./call.js";
import type { ChainBuilder } from "./chain.js";
import { applyGates } from "./steps/apply-gates.js";
import { checkCaller } from "./steps/check-caller.js";
import { decidePermission } from "./steps/decide-permission.js";
import { providerAuthorize } from "./steps/provider-authorize.js";
import { resolveTool } from "./steps/resolve-tool.js";
import { validateInput } from "./steps/validate-input.js";

/**
 * The authorization steps, in order: what every preview and execute passes, and what recovery runs again
 * before it re-invokes a provider. Each only refuses or narrows; none has an effect.
 */
export function authorized<K0 extends FactName, K extends FactName, TOutcome>(chain: ChainBuilder<K0, K, TOutcome>) {
  return chain.step(resolveTool).step(checkCaller).step(validateInput).step(decidePermission).step(providerAuthorize).step(applyGates);
}
