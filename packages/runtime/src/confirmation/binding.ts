import { parseToolFullName, type Effect } from "@toolpact/contract";
import type { ConfirmationRecord } from "../store/store.js";

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

/** The bound call of a stored platform request; undefined when its tool name does not parse. */
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
