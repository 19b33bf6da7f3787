import {
  EFFECTS,
  MAX_VERIFICATION_LEVEL,
  POLICY_LIST_MAX,
  POLICY_NAME_MAX_LENGTH,
  SEAM_KEY_PATTERN,
  TOOL_PATTERN,
  TOOL_PATTERN_MAX_LENGTH,
  ToolpactError,
  matchesToolPattern,
  type ActorInfo,
  type ValidationIssue,
} from "@toolpact/contract";
import type { EffectVerificationLevels, GrantLimits, PolicyRule, TenantPolicy } from "./api.js";
import { grantLimitIssues, tighterGrantLimits } from "./grants/grant-limits.js";
import type { RegisteredTool } from "./registry.js";

/** A rule of a policy, named by its index in `rules` and its pattern. */
export interface PolicyRuleRef {
  readonly index: number;
  readonly tools: string;
}

/** What a policy decision reads of a tool: its provider, full name and declaration (a RegisteredTool is one). */
export interface PolicyTool {
  readonly providerId: string;
  readonly fullName: string;
  readonly declaration: Pick<RegisteredTool["declaration"], "name" | "version" | "effect" | "requiresConfirmation" | "minVerificationLevel">;
}

/** The outcome of decide-permission for one call. */
export type PermissionDecision =
  | {
      readonly kind: "deny";
      readonly reason: string;
      /** The deny rule that matched; absent when no rule matched at all. */
      readonly rule?: PolicyRuleRef;
    }
  | {
      readonly kind: "allow";
      /** The rule that decided: the first matching `confirm` rule, else the first matching rule. */
      readonly rule: PolicyRuleRef;
      /** The tool's declaration or a matching `confirm` rule requires confirmation. */
      readonly confirm: boolean;
      /** How confirmation happens, when `confirm`. */
      readonly mode: "token" | "platform";
      /** The first matching `confirm` rule, when one asks for confirmation: its index in `rules` and its pattern. */
      readonly confirmRule?: PolicyRuleRef;
      /** The verification level the actor needs (tool declaration, raised by matching rules). */
      readonly minVerificationLevel: number;
      /** The tightest grant limits of the matching rules that allow grants (the page may offer one); absent: none does. */
      readonly grants?: GrantLimits;
    };

interface CompiledRule {
  readonly rule: PolicyRule;
  /** Where it stands in the policy's `rules`. */
  readonly index: number;
  readonly users: ReadonlySet<string> | undefined;
  readonly roles: readonly string[] | undefined;
}

/** The rules that match one (caller, tool) pair, before the actor is known. */
interface RuleSubset {
  readonly rules: readonly CompiledRule[];
  /** When no rule looks at the actor, the decision is the same for everyone: computed once. */
  readonly fixed: PermissionDecision | undefined;
}

const EMPTY_POLICY: TenantPolicy = Object.freeze({ rules: Object.freeze([]) });

/**
 * A tenant policy ready to decide: rules matching each (caller, tool) pair are found once and
 * remembered, so a call only checks the actor's id and roles.
 * deny > confirm > allow; no matching rule = deny; a rule never removes a confirmation the tool declares.
 */
export class PermissionPolicy {
  readonly policy: TenantPolicy;
  /** The shadow policy tried beside this one (never enforced), when the tenant set one. */
  readonly shadow: PermissionPolicy | undefined;
  readonly #rules: readonly CompiledRule[];
  readonly #trusted: ReadonlySet<string>;
  readonly #subsets = new Map<string, RuleSubset>();
  readonly #levels: EffectVerificationLevels;
  readonly #narrow: ReadonlyMap<string, readonly string[]>;

  constructor(policy: TenantPolicy = EMPTY_POLICY) {
    this.policy = policy;
    this.#levels = policy.minVerificationLevel ?? {};
    this.#narrow = new Map(Object.entries(policy.narrow ?? {}));
    this.#rules = policy.rules.map((rule, index) => ({
      rule,
      index,
      users: rule.users === undefined ? undefined : new Set(rule.users),
      roles: rule.roles,
    }));
    this.#trusted = new Set(policy.trustedConfirmationUis ?? []);
    this.shadow = policy.shadow === undefined ? undefined : new PermissionPolicy(policy.shadow);
  }

  /** Decides one call. */
  decide(tool: PolicyTool, callerPluginId: string, actor: ActorInfo): PermissionDecision {
    const key = callerPluginId + "\u0000" + tool.fullName;
    let subset = this.#subsets.get(key);
    if (subset === undefined) {
      subset = this.#subset(tool, callerPluginId);
      this.#subsets.set(key, subset);
    }
    return subset.fixed ?? this.#combine(subset.rules, tool, { callerPluginId, actor });
  }

  /** Decides one call and explains it for the actor's verification level: what the call path enforces. */
  explain(tool: PolicyTool, callerPluginId: string, actor: ActorInfo): PolicyExplanation {
    return explainPolicyDecision(this.decide(tool, callerPluginId, actor), tool, actor.verificationLevel);
  }

  /** The policy's narrowing of a gate, hook or guard (`<pluginId>:<name>`), if any. */
  narrowing(seamKey: string): readonly string[] | undefined {
    return this.#narrow.get(seamKey);
  }

  /** True when the tenant names `callerPluginId` a trusted confirmation UI (token mode). */
  trustsConfirmationUi(callerPluginId: string): boolean {
    return this.#trusted.has(callerPluginId);
  }

  #subset(tool: PolicyTool, callerPluginId: string): RuleSubset {
    const { providerId, declaration } = tool;
    const rules = this.#rules.filter(
      ({ rule }) =>
        matchesToolPattern(rule.tools, providerId, declaration.name, declaration.version) &&
        (rule.callers === undefined || rule.callers.some((pattern) => globMatch(pattern, callerPluginId))) &&
        (rule.effects === undefined || rule.effects.includes(declaration.effect)),
    );
    const actorFree = rules.every((rule) => rule.users === undefined && rule.roles === undefined);
    return {
      rules,
      fixed: actorFree ? this.#combine(rules, tool, { callerPluginId, actor: undefined }) : undefined,
    };
  }

  /** The decision of `rules` for the caller, and for the actor (undefined when no rule looks at the actor). */
  #combine(
    rules: readonly CompiledRule[],
    tool: PolicyTool,
    who: { readonly callerPluginId: string; readonly actor: ActorInfo | undefined },
  ): PermissionDecision {
    const { callerPluginId, actor } = who;
    let first: CompiledRule | undefined;
    let confirmRule: CompiledRule | undefined;
    let platform = false;
    let level = Math.max(tool.declaration.minVerificationLevel, this.#levels[tool.declaration.effect] ?? 0);
    let grants: GrantLimits | undefined;
    for (const compiled of rules) {
      if (actor !== undefined) {
        if (compiled.users !== undefined && !compiled.users.has(actor.userId)) continue;
        if (compiled.roles !== undefined && !compiled.roles.some((role) => actor.roles.includes(role))) continue;
      }
      const { rule } = compiled;
      if (rule.decision === "deny") {
        return {
          kind: "deny",
          reason: `a deny rule of the tenant policy ("${rule.tools}") matches this call`,
          rule: { index: compiled.index, tools: rule.tools },
        };
      }
      first ??= compiled;
      if (rule.decision === "confirm") confirmRule ??= compiled;
      if (rule.mode === "platform") platform = true;
      if (rule.minVerificationLevel !== undefined && rule.minVerificationLevel > level) level = rule.minVerificationLevel;
      // A wildcard rule never opens grants for a tool whose own declaration asks for confirmation.
      if (rule.grants !== undefined && (!tool.declaration.requiresConfirmation || !rule.tools.includes("*"))) {
        grants = tighterGrantLimits(grants, rule.grants);
      }
    }
    if (first === undefined) {
      return {
        kind: "deny",
        reason: "no rule of the tenant policy allows it: the tenant admin must add an allow or confirm rule for this tool and caller",
      };
    }
    const confirm = tool.declaration.requiresConfirmation || confirmRule !== undefined;
    const mode = platform || !this.#trusted.has(callerPluginId) ? "platform" : "token";
    const decider = confirmRule ?? first;
    const rule = { index: decider.index, tools: decider.rule.tools };
    const grantable = confirm && grants !== undefined ? { grants } : {};
    return { kind: "allow", rule, confirm, mode, minVerificationLevel: level, ...(confirmRule === undefined ? {} : { confirmRule: rule }), ...grantable };
  }
}

/** A policy decision as people read it: what happens to the call, and what decided it. */
export type PolicyExplanation =
  | {
      readonly decision: "deny";
      /** The error the call gets. */
      readonly code: "PERMISSION_DENIED" | "VERIFICATION_REQUIRED";
      /** `rules[<i>]`, `no rule` or `verification level`. */
      readonly decidedBy: string;
      readonly reason: string;
    }
  | { readonly decision: "allow"; readonly decidedBy: string; readonly permission: AllowDecision }
  | {
      readonly decision: "confirm";
      readonly mode: "token" | "platform";
      /** `rules[<i>]` for a `confirm` rule, `declaration` when the tool itself requires confirmation. */
      readonly decidedBy: string;
      readonly permission: AllowDecision;
    };

/** A decision that lets the call go on (confirmed or not). */
export type AllowDecision = Extract<PermissionDecision, { kind: "allow" }>;

/**
 * What `decision` means for an actor at `verificationLevel`: allow, confirm (in which mode) or deny, and the
 * rule that decided. Pure; the call path (decide-permission) and `toolpact policy test` both read decisions
 * through it, so the rule explained is the rule applied.
 */
export function explainPolicyDecision(decision: PermissionDecision, tool: PolicyTool, verificationLevel: number): PolicyExplanation {
  if (decision.kind === "deny") {
    return {
      decision: "deny",
      code: "PERMISSION_DENIED",
      decidedBy: decision.rule === undefined ? "no rule" : `rules[${decision.rule.index}]`,
      reason: `${tool.fullName} is not permitted for this caller and user: ${decision.reason}`,
    };
  }
  if (verificationLevel < decision.minVerificationLevel) {
    return {
      decision: "deny",
      code: "VERIFICATION_REQUIRED",
      decidedBy: "verification level",
      reason:
        `${tool.fullName} needs verification level ${decision.minVerificationLevel}; the user is at ${verificationLevel}: ` + "the user must verify further",
    };
  }
  const ruleName = `rules[${decision.rule.index}]`;
  if (!decision.confirm) return { decision: "allow", decidedBy: ruleName, permission: decision };
  const decidedBy = decision.confirmRule === undefined ? "declaration" : ruleName;
  return { decision: "confirm", mode: decision.mode, decidedBy, permission: decision };
}

/** Every problem of a policy, at once. */
export function policyIssues(policy: unknown): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (typeof policy !== "object" || policy === null || Array.isArray(policy)) {
    return [{ path: "", message: "a policy is an object { rules, trustedConfirmationUis? }" }];
  }
  const { rules, trustedConfirmationUis, minVerificationLevel, narrow, shadow, ...rest } = policy as Record<string, unknown>;
  for (const key of Object.keys(rest)) issues.push({ path: `/${key}`, message: "unknown policy field" });
  if (shadow !== undefined) {
    if (typeof shadow === "object" && shadow !== null && "shadow" in shadow) {
      issues.push({ path: "/shadow/shadow", message: "a shadow policy has no shadow of its own" });
    } else {
      for (const issue of policyIssues(shadow)) issues.push({ path: `/shadow${issue.path}`, message: issue.message });
    }
  }
  if (minVerificationLevel !== undefined) {
    if (typeof minVerificationLevel !== "object" || minVerificationLevel === null || Array.isArray(minVerificationLevel)) {
      issues.push({ path: "/minVerificationLevel", message: "minVerificationLevel is an object { read?, write?, external? }" });
    } else {
      for (const [effect, level] of Object.entries(minVerificationLevel)) {
        if (!(EFFECTS as readonly string[]).includes(effect)) {
          issues.push({ path: `/minVerificationLevel/${effect}`, message: `not an effect class: use ${EFFECTS.join(", ")}` });
        } else if (!isLevel(level)) {
          issues.push({ path: `/minVerificationLevel/${effect}`, message: `a verification level is an integer from 0 to ${MAX_VERIFICATION_LEVEL}` });
        }
      }
    }
  }
  if (narrow !== undefined) {
    if (typeof narrow !== "object" || narrow === null || Array.isArray(narrow)) {
      issues.push({ path: "/narrow", message: 'narrow is an object { "<pluginId>:<name>": [tool patterns] }' });
    } else {
      for (const [key, patterns] of Object.entries(narrow)) {
        const path = `/narrow/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
        if (!SEAM_KEY_PATTERN.test(key)) issues.push({ path, message: 'a key names a gate, hook or guard as "<pluginId>:<name>"' });
        if (!Array.isArray(patterns) || patterns.length > POLICY_LIST_MAX || patterns.some((pattern) => !isToolPattern(pattern))) {
          issues.push({ path, message: 'the value is a list of tool patterns: "*", "<pluginId>:*", "<pluginId>:<tool>"...' });
        }
      }
    }
  }
  if (!Array.isArray(rules) || rules.length > POLICY_LIST_MAX) {
    issues.push({ path: "/rules", message: `rules must be an array of at most ${POLICY_LIST_MAX} rules` });
  } else {
    for (const [index, rule] of rules.entries()) issues.push(...ruleIssues(rule, `/rules/${index}`));
  }
  if (trustedConfirmationUis !== undefined) stringList(trustedConfirmationUis, "/trustedConfirmationUis", issues);
  return issues;
}

function isLevel(level: unknown): boolean {
  return typeof level === "number" && Number.isInteger(level) && level >= 0 && level <= MAX_VERIFICATION_LEVEL;
}

const RULE_KEYS = new Set(["tools", "callers", "users", "roles", "effects", "decision", "mode", "minVerificationLevel", "grants"]);
/** A tool pattern as rules, runs, `narrow` and recovery rules take it (its one home is @toolpact/contract). */
export { TOOL_PATTERN };

/** True for a tool pattern of at most TOOL_PATTERN_MAX_LENGTH characters: the one check rules, runs, `narrow` and recovery rules use. */
export function isToolPattern(value: unknown): value is string {
  return typeof value === "string" && value.length <= TOOL_PATTERN_MAX_LENGTH && TOOL_PATTERN.test(value);
}

function ruleIssues(rule: unknown, path: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (typeof rule !== "object" || rule === null || Array.isArray(rule)) return [{ path, message: "a rule is an object" }];
  const record = rule as Record<string, unknown>;
  for (const key of Object.keys(record)) if (!RULE_KEYS.has(key)) issues.push({ path: `${path}/${key}`, message: "unknown rule field" });
  if (!isToolPattern(record.tools)) {
    issues.push({
      path: `${path}/tools`,
      message: 'tools is a pattern: "*", "<pluginId>:*", "<pluginId>:<tool>" or "<pluginId>:<tool>@<version>"',
    });
  }
  for (const key of ["callers", "users", "roles"] as const) {
    if (record[key] !== undefined) stringList(record[key], `${path}/${key}`, issues);
  }
  if (record.effects !== undefined) {
    if (!Array.isArray(record.effects) || record.effects.some((effect) => !(EFFECTS as readonly unknown[]).includes(effect))) {
      issues.push({ path: `${path}/effects`, message: `effects is a list of ${EFFECTS.join(", ")}` });
    }
  }
  if (record.decision !== "allow" && record.decision !== "deny" && record.decision !== "confirm") {
    issues.push({ path: `${path}/decision`, message: 'decision is "allow", "deny" or "confirm"' });
  }
  if (record.mode !== undefined && record.mode !== "token" && record.mode !== "platform") {
    issues.push({ path: `${path}/mode`, message: 'mode is "token" or "platform"' });
  }
  const level = record.minVerificationLevel;
  if (level !== undefined && !isLevel(level)) {
    issues.push({ path: `${path}/minVerificationLevel`, message: `minVerificationLevel is an integer from 0 to ${MAX_VERIFICATION_LEVEL}` });
  }
  if (record.grants !== undefined) grantLimitIssues(record.grants, `${path}/grants`, issues);
  return issues;
}

function stringList(value: unknown, path: string, issues: ValidationIssue[]): void {
  if (
    !Array.isArray(value) ||
    value.length > POLICY_LIST_MAX ||
    value.some((item) => typeof item !== "string" || item.length === 0 || item.length > POLICY_NAME_MAX_LENGTH)
  ) {
    issues.push({ path, message: `must be a list of at most ${POLICY_LIST_MAX} strings of 1 to ${POLICY_NAME_MAX_LENGTH} characters` });
  }
}

/** Validates a policy and returns a frozen copy holding only known fields. */
export function normalizePolicy(policy: TenantPolicy): TenantPolicy {
  const issues = policyIssues(policy);
  if (issues.length > 0) {
    const first = issues[0]!;
    throw new ToolpactError(
      "INPUT_INVALID",
      `the policy is not valid at ${first.path || "/"}: ${first.message}` + (issues.length > 1 ? ` (and ${issues.length - 1} more)` : ""),
      { issues },
    );
  }
  const rules = policy.rules.map((rule) => {
    const copy: Record<string, unknown> = { tools: rule.tools, decision: rule.decision };
    if (rule.callers !== undefined) copy.callers = Object.freeze([...rule.callers]);
    if (rule.users !== undefined) copy.users = Object.freeze([...rule.users]);
    if (rule.roles !== undefined) copy.roles = Object.freeze([...rule.roles]);
    if (rule.effects !== undefined) copy.effects = Object.freeze([...rule.effects]);
    if (rule.mode !== undefined) copy.mode = rule.mode;
    if (rule.minVerificationLevel !== undefined) copy.minVerificationLevel = rule.minVerificationLevel;
    if (rule.grants !== undefined) copy.grants = Object.freeze(tighterGrantLimits({}, rule.grants));
    return Object.freeze(copy) as unknown as PolicyRule;
  });
  const out: {
    rules: readonly PolicyRule[];
    trustedConfirmationUis?: readonly string[];
    minVerificationLevel?: EffectVerificationLevels;
    narrow?: Readonly<Record<string, readonly string[]>>;
    shadow?: TenantPolicy;
  } = { rules: Object.freeze(rules) };
  if (policy.trustedConfirmationUis !== undefined) out.trustedConfirmationUis = Object.freeze([...policy.trustedConfirmationUis]);
  if (policy.minVerificationLevel !== undefined) {
    const levels: Record<string, number> = {};
    for (const effect of EFFECTS) {
      const level = policy.minVerificationLevel[effect];
      if (level !== undefined) levels[effect] = level;
    }
    out.minVerificationLevel = Object.freeze(levels);
  }
  if (policy.narrow !== undefined) {
    out.narrow = Object.freeze(Object.fromEntries(Object.entries(policy.narrow).map(([key, patterns]) => [key, Object.freeze([...patterns])])));
  }
  if (policy.shadow !== undefined) out.shadow = normalizePolicy(policy.shadow);
  return Object.freeze(out);
}

/** Caller patterns: an exact plugin id, `*`, or a prefix such as `com.example.*`. */
function globMatch(pattern: string, value: string): boolean {
  if (pattern === "*") return true;
  if (pattern.endsWith(".*")) return value.startsWith(pattern.slice(0, -1));
  return pattern === value;
}
