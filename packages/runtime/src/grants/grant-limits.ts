/** A policy rule's `grants` field: its checks, and how the limits of several matching rules combine. */
import type { ValidationIssue } from "@toolpact/contract";
import type { GrantLimits } from "../api.js";
import { GRANT_MAX_CALLS, GRANT_MAX_SECONDS } from "./grant-bounds.js";

/** The tighter of two rules' grant limits: each bound is the smaller one, a bound either names is kept. */
export function tighterGrantLimits(current: GrantLimits | undefined, next: GrantLimits): GrantLimits {
  if (current === undefined) return next;
  const maxCalls = Math.min(current.maxCalls ?? Number.POSITIVE_INFINITY, next.maxCalls ?? Number.POSITIVE_INFINITY);
  const maxSeconds = Math.min(current.maxSeconds ?? Number.POSITIVE_INFINITY, next.maxSeconds ?? Number.POSITIVE_INFINITY);
  return {
    ...(Number.isFinite(maxCalls) ? { maxCalls } : {}),
    ...(Number.isFinite(maxSeconds) ? { maxSeconds } : {}),
  };
}

/** Every problem of a rule's `grants` at `path`, pushed onto `issues`. */
export function grantLimitIssues(grants: unknown, path: string, issues: ValidationIssue[]): void {
  if (typeof grants !== "object" || grants === null || Array.isArray(grants)) {
    issues.push({ path, message: "grants is an object { maxCalls?, maxSeconds? } with at least one of them" });
    return;
  }
  const { maxCalls, maxSeconds, ...rest } = grants as Record<string, unknown>;
  for (const key of Object.keys(rest)) issues.push({ path: `${path}/${key}`, message: "unknown grants field: use maxCalls or maxSeconds" });
  if (maxCalls === undefined && maxSeconds === undefined) {
    issues.push({ path, message: "grants needs maxCalls, maxSeconds or both: a grant is always bounded" });
  }
  if (maxCalls !== undefined && !isIntegerIn(maxCalls, 1, GRANT_MAX_CALLS)) {
    issues.push({ path: `${path}/maxCalls`, message: `maxCalls is an integer from 1 to ${GRANT_MAX_CALLS}` });
  }
  if (maxSeconds !== undefined && !isIntegerIn(maxSeconds, 1, GRANT_MAX_SECONDS)) {
    issues.push({ path: `${path}/maxSeconds`, message: `maxSeconds is an integer from 1 to ${GRANT_MAX_SECONDS} (30 days)` });
  }
}

function isIntegerIn(value: unknown, min: number, max: number): boolean {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max;
}
