/**
 * OAuth scopes that grant tool calls, one per effect: `tools:read`, `tools:write`, `tools:external`.
 * Each grants calls of tools of its own effect only (write does not imply read, nor external).
 */
import { EFFECTS, type Effect } from "@toolpact/protocol";
import type { Principal } from "./api.js";

/** The scope that grants calls of tools of `effect`. */
export function toolScopeOf(effect: Effect): string {
  return `tools:${effect}`;
}

/** Every tool scope, in effect order: what Protected Resource Metadata lists as supported. */
export const TOOL_SCOPES: readonly string[] = Object.freeze(EFFECTS.map(toolScopeOf));

/**
 * The scope a principal lacks to call a tool of `effect`; undefined when it may (always, for a
 * principal without `scopes`: plugin keys and in-process plugins are not limited by scope).
 */
export function missingToolScope(principal: Principal, effect: Effect): string | undefined {
  if (principal.scopes === undefined) return undefined;
  const scope = toolScopeOf(effect);
  return principal.scopes.includes(scope) ? undefined : scope;
}
