/**
 * A grant as the signed-in user chose it on the confirmation page, checked against the limits the tenant's
 * policy allowed when the request was made: at most `maxCalls` calls, for at most `maxSeconds`, limited to
 * values the request's own input has (`only project "ops"`). Anything else is refused, never widened.
 */
import { randomUUID } from "node:crypto";
import { ToolpactError, parseToolFullName, type ValidationIssue } from "@toolpact/contract";
import type { GrantLimits } from "../api.js";
import type { ConfirmationRecord, GrantRecord } from "../store/store.js";
import { GRANT_DEFAULT_SECONDS, GRANT_MAX_CALLS, GRANT_MAX_SECONDS } from "./grant-bounds.js";
import { grantConstraintIssues, type GrantConstraints } from "./grant-constraints.js";

/** What the user picks when approving as a grant. */
export interface GrantChoice {
  /** How many calls the grant covers (this one not counted); required when the policy bounds calls. */
  readonly maxCalls?: number;
  /** For how long, in seconds from now; default the policy's bound, or one day. */
  readonly seconds?: number;
  /** Names of the input's top-level string properties the grant is limited to, at this request's values. */
  readonly limitTo?: readonly string[];
}

/** The grant a choice makes for a pending request, or INPUT_INVALID naming every problem; `limits` absent: grants are not allowed. */
export function grantFromRequest(record: ConfirmationRecord, input: unknown, limits: GrantLimits | undefined, choice: GrantChoice, now: number): GrantRecord {
  if (limits === undefined) {
    throw new ToolpactError("PERMISSION_DENIED", `the tenant's policy does not allow grants for ${record.tool}: approve this call alone`, {
      tool: record.tool,
    });
  }
  const issues: ValidationIssue[] = [];
  const callCap = Math.min(limits.maxCalls ?? GRANT_MAX_CALLS, GRANT_MAX_CALLS);
  const secondsCap = Math.min(limits.maxSeconds ?? GRANT_MAX_SECONDS, GRANT_MAX_SECONDS);
  const { maxCalls, seconds = Math.min(secondsCap, GRANT_DEFAULT_SECONDS), limitTo = [] } = choice;
  if (maxCalls === undefined ? limits.maxCalls !== undefined : !isCount(maxCalls, callCap)) {
    issues.push({ path: "/maxCalls", message: `a whole number of calls from 1 to ${callCap}` });
  }
  if (!isCount(seconds, secondsCap)) issues.push({ path: "/seconds", message: `a whole number of seconds from 1 to ${secondsCap}` });
  const properties: Record<string, { const: string }> = {};
  const values = typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
  for (const name of limitTo) {
    const value = Object.hasOwn(values, name) ? values[name] : undefined;
    if (typeof value === "string") properties[name] = { const: value };
    else issues.push({ path: `/limitTo/${name}`, message: "not a text property of this request's input" });
  }
  const constraints: GrantConstraints | undefined = limitTo.length === 0 ? undefined : { properties };
  if (constraints !== undefined) issues.push(...grantConstraintIssues(constraints).map((issue) => ({ ...issue, path: `/limitTo${issue.path}` })));
  if (issues.length > 0) throw new ToolpactError("INPUT_INVALID", `this grant is outside what the tenant's policy allows for ${record.tool}`, { issues });
  const parsed = parseToolFullName(record.tool);
  if (parsed === undefined) throw new ToolpactError("INPUT_INVALID", `the request names no tool version: ${record.tool}`);
  return {
    tenantId: record.tenantId,
    grantId: randomUUID(),
    actorUserId: record.actorUserId,
    callerPluginId: record.callerPluginId,
    tool: `${parsed.pluginId}:${parsed.tool}`,
    version: parsed.version,
    schemaHash: record.schemaHash,
    ...(constraints === undefined ? {} : { constraintsJson: JSON.stringify(constraints) }),
    ...(maxCalls === undefined ? {} : { maxCalls }),
    uses: 0,
    expiresAt: now + seconds * 1000,
    createdBy: record.actorUserId,
    createdAt: now,
  };
}

function isCount(value: unknown, cap: number): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= cap;
}
