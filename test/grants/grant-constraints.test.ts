/**
 * A grant's argument limits: the JSON Schema subset they accept, how a call's input matches them at the
 * edges (absent property, wrong type, bounds inclusive, extra properties), and the plain words the page shows.
 */
import { describe, expect, it } from "vitest";
import {
  type GrantConstraints,
  describeGrantConstraints,
  grantConstraintIssues,
  matchesGrantConstraints,
} from "../../packages/runtime/src/grants/grant-constraints.js";

const opsUpTo100: GrantConstraints = { properties: { project: { const: "ops" }, amount: { maximum: 100 } } };

describe("grant constraints", () => {
  it("match only inputs inside every limit", () => {
    expect(matchesGrantConstraints(opsUpTo100, { project: "ops", amount: 100, title: "any" })).toBe(true);
    expect(matchesGrantConstraints(opsUpTo100, { project: "ops", amount: -5 })).toBe(true);
    expect(matchesGrantConstraints(opsUpTo100, { project: "ops", amount: 100.0001 })).toBe(false);
    expect(matchesGrantConstraints(opsUpTo100, { project: "dev", amount: 1 })).toBe(false);
    expect(matchesGrantConstraints(opsUpTo100, { project: "OPS", amount: 1 })).toBe(false);
    expect(matchesGrantConstraints(opsUpTo100, { project: "ops ", amount: 1 })).toBe(false);
  });

  it("do not match an absent property, a value of another type, or input that is not an object", () => {
    expect(matchesGrantConstraints(opsUpTo100, { project: "ops" })).toBe(false);
    expect(matchesGrantConstraints(opsUpTo100, { project: "ops", amount: "50" })).toBe(false);
    expect(matchesGrantConstraints(opsUpTo100, { project: ["ops"], amount: 1 })).toBe(false);
    expect(matchesGrantConstraints(opsUpTo100, { project: "ops", amount: null })).toBe(false);
    expect(matchesGrantConstraints(opsUpTo100, null)).toBe(false);
    expect(matchesGrantConstraints(opsUpTo100, ["ops", 1])).toBe(false);
    expect(matchesGrantConstraints(opsUpTo100, Object.create({ project: "ops", amount: 1 }))).toBe(false);
  });

  it("with enum and both bounds, bounds inclusive", () => {
    const limits: GrantConstraints = { properties: { env: { enum: ["a", "b"] }, n: { minimum: 1, maximum: 3 } } };
    expect(matchesGrantConstraints(limits, { env: "b", n: 1 })).toBe(true);
    expect(matchesGrantConstraints(limits, { env: "b", n: 3 })).toBe(true);
    expect(matchesGrantConstraints(limits, { env: "b", n: 0.999 })).toBe(false);
    expect(matchesGrantConstraints(limits, { env: "c", n: 2 })).toBe(false);
  });

  it("without limits, match every input of the bound tool", () => {
    expect(matchesGrantConstraints(undefined, { anything: 1 })).toBe(true);
    expect(matchesGrantConstraints({ properties: {} }, "x")).toBe(true);
  });

  it("read in plain words", () => {
    expect(describeGrantConstraints(opsUpTo100)).toEqual(["only project `ops`", "amount at most 100"]);
    expect(describeGrantConstraints({ properties: { env: { enum: ["a", "b"] }, n: { minimum: 1, maximum: 3 }, m: { minimum: 2 } } })).toEqual([
      "env only `a` or `b`",
      "n from 1 to 3",
      "m at least 2",
    ]);
  });

  it("refuse what is outside the subset", () => {
    expect(grantConstraintIssues(opsUpTo100)).toEqual([]);
    const problem = (limit: unknown) => grantConstraintIssues({ properties: { p: limit } }).map((issue) => issue.message);
    expect(problem({ const: 5 })).toEqual(["const is a string of at most 256 characters"]);
    expect(problem({ enum: [] })).toEqual(["enum is a list of 1 to 16 strings"]);
    expect(problem({ pattern: ".*" })[0]).toMatch(/exactly one of/);
    expect(problem({ const: "a", maximum: 3 })[0]).toMatch(/exactly one of/);
    expect(problem({})[0]).toMatch(/exactly one of/);
    expect(problem({ minimum: 5, maximum: 1 })).toEqual(["minimum is above maximum: no call could match"]);
    expect(problem({ maximum: "100" })).toEqual(["minimum and maximum are finite numbers"]);
    expect(grantConstraintIssues({ properties: { "a/b": { const: "x" } } })[0]!.path).toBe("/properties/a~1b");
    expect(grantConstraintIssues({ type: "object", properties: {} })).toHaveLength(1);
    expect(grantConstraintIssues([])).toHaveLength(1);
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`p${i}`, { const: "x" }]));
    expect(grantConstraintIssues({ properties: many })[0]!.message).toMatch(/at most 16 properties/);
  });
});
