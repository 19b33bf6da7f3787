/**
 * The activity hash chain: each event's link hash covers the previous link and the event's canonical
 * content, so changing, removing, adding or reordering an event changes every link after it.
 */
import { createHash } from "node:crypto";
import type { ActivityRecord } from "../store/store.js";

/** The event fields a link covers, in this order; a field added to events is added here (at the end). */
export const CHAINED_FIELDS = [
  "tenantId",
  "id",
  "at",
  "kind",
  "actorUserId",
  "callerPluginId",
  "providerPluginId",
  "tool",
  "version",
  "effect",
  "phase",
  "outcome",
  "errorCode",
  "errorClass",
  "operationId",
  "confirmationId",
  "targetId",
  "durationMs",
  "correlationId",
  "seam",
  "via",
  "authenticatedBy",
  "confirmation",
  "confirmedBy",
  "manifestVersion",
  "schemaHash",
  "policyDecision",
  "idempotencyKeyHash",
  "grantId",
] as const satisfies readonly (keyof ActivityRecord)[];

/** An event's canonical content: its chained fields as a JSON array, absent ones as null. */
export function canonicalEvent(event: ActivityRecord): string {
  return JSON.stringify(CHAINED_FIELDS.map((field) => event[field] ?? null));
}

/** The link before a tenant's first event. */
export function chainGenesis(tenantId: string): string {
  return createHash("sha256").update(`toolpact-activity-chain v1\n${tenantId}`).digest("hex");
}

/** The link of `event` after the link `previous` (lowercase hex SHA-256). */
export function linkHash(previous: string, event: ActivityRecord): string {
  return createHash("sha256").update(previous).update("\n").update(canonicalEvent(event)).digest("hex");
}
