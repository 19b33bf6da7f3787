import { POLICY_LIST_MAX, RECOVERY_ATTEMPTS_MAX, ToolpactError, matchesToolPattern, type ValidationIssue } from "@toolpact/contract";
import type { RecoveryPolicy, RecoveryRule } from "./api.js";
import { isToolPattern } from "./permission-policy.js";
import type { RegisteredTool } from "./registry.js";

/** What recovery may do with an expired operation of one tool. */
export type RecoveryDecision = { readonly reinvoke: false } | { readonly reinvoke: true; readonly maxAttempts: number };

const NO_REINVOKE: RecoveryDecision = Object.freeze({ reinvoke: false });
const RULE_KEYS = new Set(["tools", "retry", "maxAttempts"]);

/**
 * A tenant's pinned recovery policy, ready to decide. A matching `none` rule wins over `reinvoke`
 * (rules narrow, never widen); no matching rule = none; a tool that does not declare
 * `recovery: "idempotent"` is never re-invoked, whatever the policy says.
 */
export class RecoveryRules {
  readonly #rules: readonly RecoveryRule[];

  constructor(policy: RecoveryPolicy = { rules: [] }) {
    this.#rules = policy.rules;
  }

  decide(tool: RegisteredTool): RecoveryDecision {
    if (tool.declaration.recovery !== "idempotent") return NO_REINVOKE;
    let attempts: number | undefined;
    const { providerId, declaration } = tool;
    for (const rule of this.#rules) {
      if (!matchesToolPattern(rule.tools, providerId, declaration.name, declaration.version)) continue;
      if (rule.retry === "none") return NO_REINVOKE;
      attempts = Math.min(attempts ?? RECOVERY_ATTEMPTS_MAX, rule.maxAttempts ?? 1);
    }
    return attempts === undefined ? NO_REINVOKE : { reinvoke: true, maxAttempts: attempts };
  }
}

/**
 * Validates a recovery policy against the tools this host knows and returns a frozen copy.
 * @throws ToolpactError INPUT_INVALID listing every problem at once: shape errors, and every rule that
 *   would re-invoke a tool whose manifest declares `recovery: "none"`.
 */
export function normalizeRecoveryPolicy(policy: RecoveryPolicy, tools: Iterable<RegisteredTool>): RecoveryPolicy {
  const issues: ValidationIssue[] = [];
  if (typeof policy !== "object" || policy === null || Array.isArray(policy)) {
    issues.push({ path: "", message: "a recovery policy is an object { rules }" });
  } else {
    const { rules, ...rest } = policy as unknown as Record<string, unknown>;
    for (const key of Object.keys(rest)) issues.push({ path: `/${key}`, message: "unknown recovery policy field" });
    if (!Array.isArray(rules) || rules.length > POLICY_LIST_MAX) {
      issues.push({ path: "/rules", message: `rules must be an array of at most ${POLICY_LIST_MAX} rules` });
    } else {
      const known = [...tools];
      for (const [index, rule] of (rules as unknown[]).entries()) issues.push(...ruleIssues(rule, `/rules/${index}`, known));
    }
  }
  if (issues.length > 0) {
    const mismatches = issues.filter((issue) => issue.message.includes('declares recovery "none"'));
    const headline =
      mismatches.length > 0
        ? `the recovery policy exceeds what ${mismatches.length === 1 ? "a tool declares" : "tools declare"}: ` +
          issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ")
        : `the recovery policy is not valid: ${issues.map((issue) => `${issue.path || "/"}: ${issue.message}`).join("; ")}`;
    throw new ToolpactError("INPUT_INVALID", headline, { issues });
  }
  return Object.freeze({
    rules: Object.freeze(
      policy.rules.map((rule) =>
        Object.freeze(
          rule.maxAttempts === undefined ? { tools: rule.tools, retry: rule.retry } : { tools: rule.tools, retry: rule.retry, maxAttempts: rule.maxAttempts },
        ),
      ),
    ),
  });
}

function ruleIssues(rule: unknown, path: string, tools: readonly RegisteredTool[]): ValidationIssue[] {
  if (typeof rule !== "object" || rule === null || Array.isArray(rule)) return [{ path, message: "a rule is an object" }];
  const issues: ValidationIssue[] = [];
  const record = rule as Record<string, unknown>;
  for (const key of Object.keys(record)) if (!RULE_KEYS.has(key)) issues.push({ path: `${path}/${key}`, message: "unknown rule field" });
  const pattern = record.tools;
  const patternOk = isToolPattern(pattern);
  if (!patternOk) {
    issues.push({
      path: `${path}/tools`,
      message: 'tools is a pattern: "*", "<pluginId>:*", "<pluginId>:<tool>" or "<pluginId>:<tool>@<version>"',
    });
  }
  if (record.retry !== "none" && record.retry !== "reinvoke") {
    issues.push({ path: `${path}/retry`, message: 'retry is "none" or "reinvoke"' });
  }
  const attempts = record.maxAttempts;
  if (attempts !== undefined && (typeof attempts !== "number" || !Number.isInteger(attempts) || attempts < 1 || attempts > RECOVERY_ATTEMPTS_MAX)) {
    issues.push({ path: `${path}/maxAttempts`, message: `maxAttempts is an integer from 1 to ${RECOVERY_ATTEMPTS_MAX}` });
  }
  if (patternOk && record.retry === "reinvoke") {
    for (const tool of tools) {
      const { providerId, declaration } = tool;
      if (declaration.recovery === "idempotent") continue;
      if (!matchesToolPattern(pattern as string, providerId, declaration.name, declaration.version)) continue;
      issues.push({
        path: `${path}/tools`,
        message: `"${pattern as string}" would re-invoke ${tool.fullName}, which declares recovery "none": narrow the pattern or use retry "none"`,
      });
    }
  }
  return issues;
}
