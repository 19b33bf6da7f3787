/**
 * The activity hash chain: each event's link hash covers the previous link and the event's canonical
 * content, so changing, removing, adding or reordering an event changes every link after it.
 */
import { hash } from "node:crypto";
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

/** The positions in CHAINED_FIELDS of the fields events hold as numbers; every other one is text. */
const NUMERIC = new Set(["at", "version", "durationMs"].map((field) => CHAINED_FIELDS.indexOf(field as (typeof CHAINED_FIELDS)[number])));

/**
 * The canonical content of an event read as a row of its chained columns' values, in CHAINED_FIELDS
 * order, as either driver answers them (PostgreSQL's bigint as text): the same string as
 * `canonicalEvent` of the event the row maps to, without building the event.
 */
export function canonicalValues(values: readonly unknown[]): string {
  return JSON.stringify(values.map((value, index) => (value === null || value === undefined ? null : NUMERIC.has(index) ? Number(value) : String(value))));
}

/** The link before a tenant's first event. */
export function chainGenesis(tenantId: string): string {
  return sha256Hex(`toolpact-activity-chain v1\n${tenantId}`);
}

/** The link of `event` after the link `previous` (lowercase hex SHA-256). */
export function linkHash(previous: string, event: ActivityRecord): string {
  return contentLinkHash(previous, canonicalEvent(event));
}

/** The link of an event whose canonical content is `content`, after the link `previous`. */
export function contentLinkHash(previous: string, content: string): string {
  return sha256Hex(`${previous}\n${content}`);
}

/** Lowercase hex SHA-256 of `text` (UTF-8), one shot: a third of a Hash object's cost per link. */
function sha256Hex(text: string): string {
  return hash("sha256", text, "hex");
}
