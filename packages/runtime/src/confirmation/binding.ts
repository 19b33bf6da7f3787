import { parseToolFullName, toolFullName, type Effect } from "@toolpact/contract";
import type { ConfirmationBindingQuery, ConfirmationRecord } from "../store/store.js";

/**
 * The call a confirmation is bound to, in either mode (a token-mode token, a platform request and the
 * token it yields): any change after preview invalidates the confirmation.
 */
export interface BoundCall {
  readonly tenantId: string;
  readonly actorUserId: string;
  readonly callerPluginId: string;
  readonly providerId: string;
  readonly tool: string;
  readonly version: number;
  /** schemaHash of the tool's input schema. */
  readonly schemaHash: string;
  readonly effect: Effect;
  readonly runId?: string;
}

/** A bound call with the mode policy decided and the validated, frozen input (digested into the token). */
export interface ConfirmationBinding extends BoundCall {
  readonly mode: "token" | "platform";
  readonly input: unknown;
}

/**
 * The claim of a confirmation token each field of a bound call travels in: the one mapping that minting
 * (`claimsOf`), checking (`firstMismatch`) and the required-claims check derive from.
 */
export const BOUND_CALL_CLAIMS = Object.freeze({
  tenantId: "tid",
  actorUserId: "sub",
  callerPluginId: "cpl",
  providerId: "prv",
  tool: "tol",
  version: "ver",
  schemaHash: "sch",
  effect: "eff",
  runId: "run",
} as const satisfies { readonly [TField in keyof Required<BoundCall>]: string });

/** What a platform request keeps of its binding (and `findOpenConfirmation` looks for): the call, its input digest and key. */
export type StoredBinding = Omit<ConfirmationBindingQuery, "now">;

/** The stored form of a binding: the tool by full name, the input as its digest made with key `digestKid`. */
export function storedBindingOf(binding: BoundCall, digest: { readonly digest: string; readonly kid: string }): StoredBinding {
  return {
    tenantId: binding.tenantId,
    callerPluginId: binding.callerPluginId,
    actorUserId: binding.actorUserId,
    tool: toolFullName(binding.providerId, binding.tool, binding.version),
    schemaHash: binding.schemaHash,
    digest: digest.digest,
    digestKid: digest.kid,
    runId: binding.runId,
  };
}

/** The bound call of a stored platform request (the inverse of `storedBindingOf`); undefined when its tool name does not parse. */
export function boundCallOf(record: ConfirmationRecord): BoundCall | undefined {
  const parsed = parseToolFullName(record.tool);
  if (parsed === undefined) return undefined;
  return {
    tenantId: record.tenantId,
    actorUserId: record.actorUserId,
    callerPluginId: record.callerPluginId,
    providerId: parsed.pluginId,
    tool: parsed.tool,
    version: parsed.version,
    schemaHash: record.schemaHash,
    effect: record.effect,
    ...(record.runId === undefined ? {} : { runId: record.runId }),
  };
}
