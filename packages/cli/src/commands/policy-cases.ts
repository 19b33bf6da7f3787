import { EFFECTS, parseToolFullName } from "@toolpact/contract";

/** What a case expects: a decision, or a confirmation in a given mode. */
export type ExpectedDecision = "allow" | "deny" | "confirm" | { readonly decision: "confirm"; readonly mode: "token" | "platform" };

/** One case of `toolpact policy test`: a call, and the decision it should get. */
export interface PolicyCase {
  readonly name: string;
  /** `<pluginId>:<tool>@<version>` (version 1 when left out). */
  readonly tool: string;
  readonly providerId: string;
  readonly toolName: string;
  readonly version: number;
  readonly caller: string;
  readonly user: string;
  readonly roles: readonly string[];
  readonly effect: (typeof EFFECTS)[number];
  /** The tool declaration's own `requiresConfirmation`. */
  readonly requiresConfirmation: boolean;
  /** The tool declaration's own `minVerificationLevel`. */
  readonly toolVerificationLevel: number;
  /** The actor's verification level. */
  readonly verificationLevel: number;
  readonly expect: ExpectedDecision;
}

const CASE_KEYS = new Set([
  "name",
  "tool",
  "caller",
  "user",
  "roles",
  "effect",
  "requiresConfirmation",
  "toolVerificationLevel",
  "verificationLevel",
  "expect",
]);

/** Reads a cases file's JSON (an array of cases, or `{ "cases": [...] }`); every problem at once, as `cases[i].field: message`. */
export function parsePolicyCases(json: unknown): { cases: PolicyCase[]; problems: string[] } {
  const list = Array.isArray(json) ? json : (json as { cases?: unknown } | null)?.cases;
  if (!Array.isArray(list)) return { cases: [], problems: ['a cases file is a JSON array of cases, or { "cases": [...] }'] };
  const cases: PolicyCase[] = [];
  const problems: string[] = [];
  for (const [index, item] of list.entries()) {
    const where = `cases[${index}]`;
    if (typeof item !== "object" || item === null || Array.isArray(item)) {
      problems.push(`${where}: a case is an object { tool, caller, user, expect, ... }`);
      continue;
    }
    const record = item as Record<string, unknown>;
    const before = problems.length;
    const problem = (field: string, message: string) => problems.push(`${where}.${field}: ${message}`);
    for (const key of Object.keys(record)) if (!CASE_KEYS.has(key)) problem(key, `unknown field (known: ${[...CASE_KEYS].join(", ")})`);
    const toolText = typeof record.tool === "string" && !/@\d+$/.test(record.tool) ? `${record.tool}@1` : record.tool;
    const tool = typeof toolText === "string" ? parseToolFullName(toolText) : undefined;
    if (tool === undefined) problem("tool", 'a tool is "<pluginId>:<tool>" or "<pluginId>:<tool>@<version>"');
    for (const field of ["caller", "user"] as const) {
      if (typeof record[field] !== "string" || record[field] === "") problem(field, "must be a non-empty string");
    }
    if (record.roles !== undefined && (!Array.isArray(record.roles) || record.roles.some((role) => typeof role !== "string"))) {
      problem("roles", "roles is a list of strings");
    }
    if (record.effect !== undefined && !(EFFECTS as readonly unknown[]).includes(record.effect)) {
      problem("effect", `effect is one of ${EFFECTS.join(", ")}`);
    }
    if (record.requiresConfirmation !== undefined && typeof record.requiresConfirmation !== "boolean") {
      problem("requiresConfirmation", "true or false");
    }
    for (const field of ["verificationLevel", "toolVerificationLevel"] as const) {
      const level = record[field];
      if (level !== undefined && !(typeof level === "number" && Number.isInteger(level) && level >= 0 && level <= 3)) {
        problem(field, "an integer from 0 to 3");
      }
    }
    const expect = expectedDecision(record.expect);
    if (expect === undefined) problem("expect", 'expect is "allow", "deny", "confirm" or { "decision": "confirm", "mode": "token" | "platform" }');
    if (problems.length > before || tool === undefined || expect === undefined) continue;
    cases.push({
      name: typeof record.name === "string" ? record.name : where,
      tool: `${tool.pluginId}:${tool.tool}@${tool.version}`,
      providerId: tool.pluginId,
      toolName: tool.tool,
      version: tool.version,
      caller: record.caller as string,
      user: record.user as string,
      roles: (record.roles as string[] | undefined) ?? [],
      effect: (record.effect as PolicyCase["effect"] | undefined) ?? "write",
      requiresConfirmation: (record.requiresConfirmation as boolean | undefined) ?? false,
      toolVerificationLevel: (record.toolVerificationLevel as number | undefined) ?? 0,
      verificationLevel: (record.verificationLevel as number | undefined) ?? 0,
      expect,
    });
  }
  return { cases, problems };
}

function expectedDecision(value: unknown): ExpectedDecision | undefined {
  if (value === "allow" || value === "deny" || value === "confirm") return value;
  if (typeof value !== "object" || value === null) return undefined;
  const { decision, mode, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || decision !== "confirm" || (mode !== "token" && mode !== "platform")) return undefined;
  return { decision, mode };
}
