/**
 * Grants in the tenant policy: off by default, opened by a rule's `grants` limits, never by a wildcard
 * rule for a tool whose declaration requires confirmation, the tightest limits winning, and every bad
 * shape refused by the one policy validation (`normalizePolicy`).
 */
import type { ToolDeclaration } from "@toolpact/contract";
import { describe, expect, it } from "vitest";
import { PermissionPolicy, normalizePolicy, policyIssues } from "../../packages/runtime/src/permission-policy.js";
import type { RegisteredTool } from "../../packages/runtime/src/registry.js";

function registered(name: string, requiresConfirmation: boolean): RegisteredTool {
  const declaration: ToolDeclaration = {
    name,
    version: 1,
    effect: "write",
    requiresConfirmation,
    minVerificationLevel: 0,
    recovery: "none",
    timeoutMs: 1000,
    inputSchema: { type: "object" },
  };
  return {
    providerId: "com.example.tickets",
    declaration,
    fullName: `com.example.tickets:${name}@1`,
    schemaHash: "h",
    validateInput: () => [],
    validateOutput: undefined,
    handler: undefined,
  };
}

const alice = { userId: "alice", verificationLevel: 1, roles: ["member"] };
const declared = registered("file", true);
const plain = registered("note", false);

function grantsOf(policy: PermissionPolicy, tool: RegisteredTool): unknown {
  const decision = policy.decide(tool, "com.example.agent", alice);
  return decision.kind === "allow" ? decision.grants : "denied";
}

describe("grants in the policy", () => {
  it("are off by default: a confirm rule without grants offers none", () => {
    const policy = new PermissionPolicy(normalizePolicy({ rules: [{ tools: "*", decision: "confirm" }] }));
    expect(grantsOf(policy, declared)).toBeUndefined();
    expect(grantsOf(policy, plain)).toBeUndefined();
  });

  it("are never opened by a wildcard rule for a tool that declares confirmation, only by a rule naming it", () => {
    const wildcard = new PermissionPolicy(normalizePolicy({ rules: [{ tools: "com.example.tickets:*", decision: "confirm", grants: { maxCalls: 10 } }] }));
    expect(grantsOf(wildcard, declared)).toBeUndefined();
    expect(grantsOf(wildcard, plain)).toEqual({ maxCalls: 10 });
    const named = new PermissionPolicy(
      normalizePolicy({ rules: [{ tools: "com.example.tickets:file", decision: "confirm", grants: { maxCalls: 10, maxSeconds: 3600 } }] }),
    );
    expect(grantsOf(named, declared)).toEqual({ maxCalls: 10, maxSeconds: 3600 });
  });

  it("are offered only where a confirmation is asked: an allowed call needs no grant", () => {
    const policy = new PermissionPolicy(normalizePolicy({ rules: [{ tools: "*", decision: "allow", grants: { maxCalls: 5 } }] }));
    expect(grantsOf(policy, plain)).toBeUndefined();
  });

  it("take the tightest bound of every matching rule", () => {
    const policy = new PermissionPolicy(
      normalizePolicy({
        rules: [
          { tools: "com.example.tickets:note", decision: "confirm", grants: { maxCalls: 50, maxSeconds: 600 } },
          { tools: "*", decision: "allow", grants: { maxCalls: 20 } },
        ],
      }),
    );
    expect(grantsOf(policy, plain)).toEqual({ maxCalls: 20, maxSeconds: 600 });
  });

  it("never survive a deny", () => {
    const policy = new PermissionPolicy(
      normalizePolicy({
        rules: [
          { tools: "com.example.tickets:note", decision: "confirm", grants: { maxCalls: 5 } },
          { tools: "*", decision: "deny", users: ["alice"] },
        ],
      }),
    );
    expect(grantsOf(policy, plain)).toBe("denied");
  });

  it("refuses every bad shape, with the path", () => {
    const paths = (grants: unknown) => policyIssues({ rules: [{ tools: "*", decision: "confirm", grants }] }).map((issue) => `${issue.path}: ${issue.message}`);
    expect(paths({})).toEqual(["/rules/0/grants: grants needs maxCalls, maxSeconds or both: a grant is always bounded"]);
    expect(paths(true)[0]).toMatch(/^\/rules\/0\/grants: grants is an object/);
    expect(paths({ maxCalls: 0 })[0]).toMatch(/^\/rules\/0\/grants\/maxCalls: maxCalls is an integer from 1 to 10000/);
    expect(paths({ maxCalls: 1.5 })[0]).toMatch(/maxCalls is an integer/);
    expect(paths({ maxCalls: 10_001 })[0]).toMatch(/maxCalls is an integer/);
    expect(paths({ maxSeconds: 30 * 86_400 + 1 })[0]).toMatch(/^\/rules\/0\/grants\/maxSeconds: maxSeconds is an integer from 1 to 2592000/);
    expect(paths({ maxCalls: 3, forever: true })).toEqual(["/rules/0/grants/forever: unknown grants field: use maxCalls or maxSeconds"]);
    expect(() => normalizePolicy({ rules: [{ tools: "*", decision: "confirm", grants: {} }] })).toThrow(/the policy is not valid at \/rules\/0\/grants/);
  });

  it("keeps only the known limits in the normalized copy, frozen", () => {
    const policy = normalizePolicy({ rules: [{ tools: "*", decision: "confirm", grants: { maxSeconds: 60 } }] });
    expect(policy.rules[0]!.grants).toEqual({ maxSeconds: 60 });
    expect(Object.isFrozen(policy.rules[0]!.grants)).toBe(true);
  });
});
