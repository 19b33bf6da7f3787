import type { ValidationIssue } from "@toolpact/contract";
import { GRANT_CONSTRAINTS_MAX } from "./grant-bounds.js";

/** A limit on one top-level input property: a string `const` or `enum`, or a number `minimum` and/or `maximum`. */
export type GrantPropertyConstraint =
  | { readonly const: string }
  | { readonly enum: readonly string[] }
  | { readonly minimum?: number; readonly maximum?: number };

/**
 * The argument limits of a grant, a small JSON Schema subset over the input's top-level properties:
 * `{ properties: { project: { const: "ops" }, amount: { maximum: 100 } } }`. A call matches only when
 * every named property is present and within its limit.
 */
export interface GrantConstraints {
  readonly properties: Readonly<Record<string, GrantPropertyConstraint>>;
}

const PROPERTY_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;
const STRING_MAX = 256;

/** Every problem of a grant's constraints, at once (empty when they are valid). */
export function grantConstraintIssues(constraints: unknown): ValidationIssue[] {
  if (!isObject(constraints) || !isObject(constraints.properties) || Object.keys(constraints).some((key) => key !== "properties")) {
    return [{ path: "", message: "constraints are { properties: { <name>: { const | enum | minimum | maximum } } }" }];
  }
  const entries = Object.entries(constraints.properties);
  if (entries.length > GRANT_CONSTRAINTS_MAX) {
    return [{ path: "/properties", message: `a grant constrains at most ${GRANT_CONSTRAINTS_MAX} properties` }];
  }
  const issues: ValidationIssue[] = [];
  for (const [name, limit] of entries) {
    const path = `/properties/${name.replaceAll("~", "~0").replaceAll("/", "~1")}`;
    if (!PROPERTY_NAME.test(name)) issues.push({ path, message: "a constrained property is a top-level input property name" });
    const message = propertyConstraintProblem(limit);
    if (message !== undefined) issues.push({ path, message });
  }
  return issues;
}

function propertyConstraintProblem(limit: unknown): string | undefined {
  if (!isObject(limit)) return "a property limit is { const }, { enum }, or { minimum?, maximum? }";
  const keys = Object.keys(limit).sort().join(",");
  if (keys === "const") return isShortString(limit.const) ? undefined : `const is a string of at most ${STRING_MAX} characters`;
  if (keys === "enum") {
    const values = limit.enum;
    return Array.isArray(values) && values.length >= 1 && values.length <= GRANT_CONSTRAINTS_MAX && values.every(isShortString)
      ? undefined
      : `enum is a list of 1 to ${GRANT_CONSTRAINTS_MAX} strings`;
  }
  if (keys === "maximum" || keys === "minimum" || keys === "maximum,minimum") {
    const { minimum, maximum } = limit;
    if (![minimum, maximum].every((bound) => bound === undefined || (typeof bound === "number" && Number.isFinite(bound)))) {
      return "minimum and maximum are finite numbers";
    }
    if (typeof minimum === "number" && typeof maximum === "number" && minimum > maximum) return "minimum is above maximum: no call could match";
    return undefined;
  }
  return "a property limit is exactly one of { const }, { enum }, or { minimum?, maximum? }";
}

/** True when `input` is within every limit: each named property is present, of the right type, and inside its bounds. */
export function matchesGrantConstraints(constraints: GrantConstraints | undefined, input: unknown): boolean {
  if (constraints === undefined) return true;
  const entries = Object.entries(constraints.properties);
  if (entries.length === 0) return true;
  if (!isObject(input)) return false;
  return entries.every(([name, limit]) => Object.hasOwn(input, name) && withinLimit(limit, input[name]));
}

function withinLimit(limit: GrantPropertyConstraint, value: unknown): boolean {
  if ("const" in limit) return value === limit.const;
  if ("enum" in limit) return typeof value === "string" && limit.enum.includes(value);
  if (typeof value !== "number" || !Number.isFinite(value)) return false;
  return (limit.minimum === undefined || value >= limit.minimum) && (limit.maximum === undefined || value <= limit.maximum);
}

/** The limits in plain words, one line each: "only project `ops`", "amount at most 100". */
export function describeGrantConstraints(constraints: GrantConstraints | undefined): string[] {
  if (constraints === undefined) return [];
  return Object.entries(constraints.properties).map(([name, limit]) => {
    if ("const" in limit) return `only ${name} \`${limit.const}\``;
    if ("enum" in limit) return `${name} only ${limit.enum.map((value) => `\`${value}\``).join(" or ")}`;
    if (limit.minimum !== undefined && limit.maximum !== undefined) return `${name} from ${limit.minimum} to ${limit.maximum}`;
    return limit.maximum !== undefined ? `${name} at most ${limit.maximum}` : `${name} at least ${limit.minimum}`;
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isShortString(value: unknown): value is string {
  return typeof value === "string" && value.length <= STRING_MAX;
}
