import { describe, expect, it } from "vitest";
import type { ToolDeclaration } from "@toolpact/contract";
import { PermissionPolicy, normalizePolicy } from "./permission-policy.js";
import type { RegisteredTool } from "./registry.js";

function registered(declaration: Partial<ToolDeclaration> & Pick<ToolDeclaration, "name" | "effect">, providerId = "com.example.notes"): RegisteredTool {
  const full: ToolDeclaration = {
    version: 1,
    requiresConfirmation: declaration.effect !== "read",
    minVerificationLevel: 0,
    recovery: "none",
    timeoutMs: 1000,
    inputSchema: { type: "object" },
    ...declaration,
  };
  return {
    providerId,
    declaration: full,
    fullName: `${providerId}:${full.name}@${full.version}`,
    schemaHash: "h",
    manifestVersion: "1.0.0",
    validateInput: () => [],
    validateOutput: undefined,
    handler: undefined,
  };
}

const alice = { userId: "alice", verificationLevel: 1, roles: ["member"] };
const read = registered({ name: "search", effect: "read" });
const write = registered({ name: "create", effect: "write" });

describe("PermissionPolicy", () => {
  it("denies when nothing matches (an empty policy denies everything)", () => {
    expect(new PermissionPolicy().decide(read, "c", alice).kind).toBe("deny");
    expect(new PermissionPolicy({ rules: [{ tools: "com.example.other:*", decision: "allow" }] }).decide(read, "c", alice).kind).toBe("deny");
  });

  it("ranks deny over confirm over allow", () => {
    const policy = new PermissionPolicy({
      rules: [
        { tools: "*", decision: "allow" },
        { tools: "com.example.notes:search", decision: "confirm" },
        { tools: "com.example.notes:search@1", decision: "deny", users: ["alice"] },
      ],
      trustedConfirmationUis: ["c"],
    });
    expect(policy.decide(read, "c", alice).kind).toBe("deny");
    expect(policy.decide(read, "c", { ...alice, userId: "bob" })).toMatchObject({ kind: "allow", confirm: true, mode: "token" });
    expect(policy.decide(registered({ name: "other", effect: "read" }), "c", alice)).toMatchObject({ kind: "allow", confirm: false });
  });

  it("keeps a declared confirmation and picks the mode from trust and rules", () => {
    const open = new PermissionPolicy({ rules: [{ tools: "*", decision: "allow" }], trustedConfirmationUis: ["ui"] });
    expect(open.decide(write, "ui", alice)).toMatchObject({ kind: "allow", confirm: true, mode: "token" });
    expect(open.decide(write, "other", alice)).toMatchObject({ kind: "allow", confirm: true, mode: "platform" });
    const platform = new PermissionPolicy({ rules: [{ tools: "*", decision: "allow", mode: "platform" }], trustedConfirmationUis: ["ui"] });
    expect(platform.decide(write, "ui", alice)).toMatchObject({ mode: "platform" });
  });

  it("matches callers by id or prefix, roles by any, effects by list, and raises the verification level", () => {
    const policy = new PermissionPolicy({
      rules: [
        { tools: "com.example.*", decision: "allow", callers: ["com.acme.*"], roles: ["admin", "member"], effects: ["read"] },
        { tools: "*", decision: "allow", callers: ["com.acme.bot"], minVerificationLevel: 2 },
      ],
    });
    expect(policy.decide(read, "com.acme.ui", alice)).toMatchObject({ kind: "allow", minVerificationLevel: 0 });
    expect(policy.decide(read, "com.other.ui", alice).kind).toBe("deny");
    expect(policy.decide(read, "com.acme.ui", { ...alice, roles: [] }).kind).toBe("deny");
    expect(policy.decide(write, "com.acme.ui", alice).kind).toBe("deny");
    expect(policy.decide(read, "com.acme.bot", alice)).toMatchObject({ kind: "allow", minVerificationLevel: 2 });
  });

  it("normalizes a valid policy into a frozen copy and lists every problem of an invalid one", () => {
    const source = { rules: [{ tools: "*", decision: "allow" as const, users: ["alice"] }], trustedConfirmationUis: ["ui"] };
    const normalized = normalizePolicy(source);
    expect(normalized).toEqual(source);
    expect(Object.isFrozen(normalized.rules[0])).toBe(true);
    source.rules[0]!.users.push("mallory");
    expect(normalized.rules[0]!.users).toEqual(["alice"]);
    try {
      normalizePolicy({ rules: [{ tools: "*", decision: "allow", extra: 1 } as never, { tools: "", decision: "allow", minVerificationLevel: 7 }] });
      throw new Error("expected a refusal");
    } catch (error) {
      expect((error as { code?: string }).code).toBe("INPUT_INVALID");
      expect((error as { data: { issues: { path: string }[] } }).data.issues.map((issue) => issue.path)).toEqual([
        "/rules/0/extra",
        "/rules/1/tools",
        "/rules/1/minVerificationLevel",
      ]);
    }
  });

  it("raises the verification level per effect class, never lowers what a tool declares", () => {
    const verified = registered({ name: "verified", effect: "read", minVerificationLevel: 3 });
    const policy = new PermissionPolicy({
      rules: [{ tools: "*", decision: "allow" }],
      minVerificationLevel: { write: 2, external: 1, read: 0 },
    });
    expect(policy.decide(write, "c", alice)).toMatchObject({ kind: "allow", minVerificationLevel: 2 });
    expect(policy.decide(read, "c", alice)).toMatchObject({ kind: "allow", minVerificationLevel: 0 });
    expect(policy.decide(verified, "c", alice)).toMatchObject({ kind: "allow", minVerificationLevel: 3 });
    expect(policy.decide(registered({ name: "mail", effect: "external" }), "c", alice)).toMatchObject({ minVerificationLevel: 1 });
  });

  it("never lets a rule remove a declared confirmation, whatever its decision or mode", () => {
    for (const rule of [
      { tools: "*", decision: "allow" as const },
      { tools: "*", decision: "allow" as const, mode: "token" as const },
      { tools: "com.example.notes:create", decision: "allow" as const, effects: ["write" as const] },
    ]) {
      expect(new PermissionPolicy({ rules: [rule], trustedConfirmationUis: ["c"] }).decide(write, "c", alice)).toMatchObject({
        kind: "allow",
        confirm: true,
      });
    }
  });

  it("matches roles from the actor token and denies over a role's allow", () => {
    const policy = new PermissionPolicy({
      rules: [
        { tools: "*", decision: "allow", roles: ["member"] },
        { tools: "*", decision: "deny", roles: ["suspended"] },
        { tools: "*", decision: "confirm", users: ["carol"] },
      ],
    });
    expect(policy.decide(read, "c", alice).kind).toBe("allow");
    expect(policy.decide(read, "c", { ...alice, roles: ["member", "suspended"] }).kind).toBe("deny");
    expect(policy.decide(read, "c", { ...alice, roles: [] }).kind).toBe("deny");
    expect(policy.decide(read, "c", { ...alice, userId: "carol" })).toMatchObject({ kind: "allow", confirm: true, mode: "platform" });
  });

  it("keeps narrowing and effect levels, and lists their problems", () => {
    const normalized = normalizePolicy({
      rules: [],
      minVerificationLevel: { write: 2 },
      narrow: { "com.example.gates:hours": ["com.example.notes:*"] },
    });
    expect(new PermissionPolicy(normalized).narrowing("com.example.gates:hours")).toEqual(["com.example.notes:*"]);
    expect(new PermissionPolicy(normalized).narrowing("com.example.gates:other")).toBeUndefined();
    try {
      normalizePolicy({
        rules: [],
        minVerificationLevel: { write: 4, admin: 1 } as never,
        narrow: { "no-colon": ["*"], "com.example.gates:hours": ["BAD PATTERN"] },
      });
      throw new Error("expected a refusal");
    } catch (error) {
      expect((error as { data: { issues: { path: string }[] } }).data.issues.map((issue) => issue.path)).toEqual([
        "/minVerificationLevel/write",
        "/minVerificationLevel/admin",
        "/narrow/no-colon",
        "/narrow/com.example.gates:hours",
      ]);
    }
  });
});

describe("explainPolicyDecision (through PermissionPolicy.explain)", () => {
  const policy = new PermissionPolicy(
    normalizePolicy({
      trustedConfirmationUis: ["ui"],
      rules: [
        { tools: "com.example.notes:*", decision: "allow" },
        { tools: "com.example.notes:create", decision: "confirm" },
        { tools: "com.example.notes:delete", decision: "deny" },
        { tools: "com.example.notes:search", roles: ["auditor"], decision: "allow", minVerificationLevel: 2 },
      ],
    }),
  );
  const pick = (explained: ReturnType<PermissionPolicy["explain"]>) => ({
    decision: explained.decision,
    decidedBy: explained.decidedBy,
    ...(explained.decision === "deny" ? { code: explained.code } : {}),
    ...(explained.decision === "confirm" ? { mode: explained.mode } : {}),
  });

  it("names the rule that decided: the first matching rule, a confirm rule over it, a deny rule, or none", () => {
    expect(pick(policy.explain(read, "c", alice))).toEqual({ decision: "allow", decidedBy: "rules[0]" });
    expect(pick(policy.explain(registered({ name: "create", effect: "write", requiresConfirmation: false }), "ui", alice))).toEqual({
      decision: "confirm",
      decidedBy: "rules[1]",
      mode: "token",
    });
    expect(pick(policy.explain(registered({ name: "delete", effect: "write" }), "c", alice))).toEqual({
      decision: "deny",
      decidedBy: "rules[2]",
      code: "PERMISSION_DENIED",
    });
    expect(pick(policy.explain(registered({ name: "x", effect: "read" }, "com.example.other"), "c", alice))).toEqual({
      decision: "deny",
      decidedBy: "no rule",
      code: "PERMISSION_DENIED",
    });
  });

  it("names the declaration when the tool itself asks for confirmation, and the verification level when it refuses", () => {
    expect(pick(policy.explain(registered({ name: "update", effect: "write" }), "c", alice))).toEqual({
      decision: "confirm",
      decidedBy: "declaration",
      mode: "platform",
    });
    const auditor = { userId: "bo", verificationLevel: 1, roles: ["auditor"] };
    expect(pick(policy.explain(read, "c", auditor))).toEqual({ decision: "deny", decidedBy: "verification level", code: "VERIFICATION_REQUIRED" });
    expect(pick(policy.explain(read, "c", { ...auditor, verificationLevel: 2 }))).toEqual({ decision: "allow", decidedBy: "rules[0]" });
  });
});
