/**
 * `toolpact policy test`, in process through main(argv, io): every case is decided by the runtime's own
 * PermissionPolicy, and a mismatch fails the command (exit 1) for CI.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { preloadCommands, runMain } from "../../packages/cli/src/cli-test-helpers.js";

beforeAll(() => preloadCommands("policy"), 180_000);

const work = mkdtempSync(path.join(tmpdir(), "toolpact-policy-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function file(name: string, json: unknown): string {
  writeFileSync(path.join(work, name), typeof json === "string" ? json : JSON.stringify(json));
  return name;
}

const POLICY = {
  trustedConfirmationUis: ["com.example.console"],
  rules: [
    { tools: "com.example.tickets:*", callers: ["com.example.assistant", "com.example.console"], decision: "allow" },
    { tools: "com.example.tickets:close", decision: "confirm" },
    { tools: "com.example.tickets:delete", decision: "deny" },
    { tools: "com.example.tickets:export", roles: ["auditor"], decision: "allow", minVerificationLevel: 2 },
  ],
};

const run = (args: string[]) => runMain(["policy", ...args], { cwd: work });

describe("toolpact policy test", () => {
  it("prints each decision with the rule that decided it, and exits 0 when every case matches", async () => {
    const policy = file("policy.json", POLICY);
    const cases = file("cases.json", [
      { name: "create", tool: "com.example.tickets:create", caller: "com.example.assistant", user: "ada", expect: "allow" },
      { name: "close", tool: "com.example.tickets:close@1", caller: "com.example.assistant", user: "ada", expect: { decision: "confirm", mode: "platform" } },
      {
        name: "close in console",
        tool: "com.example.tickets:close",
        caller: "com.example.console",
        user: "ada",
        expect: { decision: "confirm", mode: "token" },
      },
      { name: "declared", tool: "com.example.tickets:pay", caller: "com.example.assistant", user: "ada", requiresConfirmation: true, expect: "confirm" },
      { name: "delete", tool: "com.example.tickets:delete", caller: "com.example.assistant", user: "ada", expect: "deny" },
      { name: "stranger", tool: "com.example.tickets:create", caller: "com.example.stranger", user: "ada", expect: "deny" },
      { name: "export, unverified", tool: "com.example.tickets:export", caller: "com.example.other", user: "bo", roles: ["auditor"], expect: "deny" },
      {
        name: "export",
        tool: "com.example.tickets:export",
        caller: "com.example.other",
        user: "bo",
        roles: ["auditor"],
        verificationLevel: 2,
        expect: "allow",
      },
    ]);
    const result = await run(["test", policy, cases]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split("\n")).toEqual([
      "ok    create: com.example.tickets:create@1 from com.example.assistant for ada -> allow by rules[0]",
      "ok    close: com.example.tickets:close@1 from com.example.assistant for ada -> confirm (platform) by rules[1]",
      "ok    close in console: com.example.tickets:close@1 from com.example.console for ada -> confirm (token) by rules[1]",
      "ok    declared: com.example.tickets:pay@1 from com.example.assistant for ada -> confirm (platform) by declaration",
      "ok    delete: com.example.tickets:delete@1 from com.example.assistant for ada -> deny (PERMISSION_DENIED) by rules[2]",
      "ok    stranger: com.example.tickets:create@1 from com.example.stranger for ada -> deny (PERMISSION_DENIED) by no rule",
      "ok    export, unverified: com.example.tickets:export@1 from com.example.other for bo -> deny (VERIFICATION_REQUIRED) by verification level",
      "ok    export: com.example.tickets:export@1 from com.example.other for bo -> allow by rules[3]",
      "toolpact policy test: 8 cases, 0 mismatches",
    ]);
  });

  it("exits 1 on a mismatch, naming what was expected", async () => {
    const policy = file("policy.json", POLICY);
    const cases = file("mismatch.json", {
      cases: [
        { tool: "com.example.tickets:delete", caller: "com.example.assistant", user: "ada", expect: "allow" },
        { tool: "com.example.tickets:close", caller: "com.example.assistant", user: "ada", expect: { decision: "confirm", mode: "token" } },
        { tool: "com.example.tickets:create", caller: "com.example.assistant", user: "ada", expect: "allow" },
      ],
    });
    const result = await run(["test", policy, cases]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      "FAIL  cases[0]: com.example.tickets:delete@1 from com.example.assistant for ada -> deny (PERMISSION_DENIED) by rules[2]; expected allow",
    );
    expect(result.stdout).toContain("-> confirm (platform) by rules[1]; expected confirm (token)");
    expect(result.stdout).toContain("ok    cases[2]");
    expect(result.stderr).toContain("toolpact policy test: 3 cases, 2 mismatches");
  });

  it("refuses an invalid policy or cases file with every problem (exit 2), never deciding under it", async () => {
    const bad = file("bad-policy.json", { rules: [{ tools: "", decision: "maybe" }], extra: 1 });
    const cases = file("one.json", [{ tool: "com.example.tickets:create", caller: "c", user: "u", expect: "allow" }]);
    const badPolicy = await run(["test", bad, cases]);
    expect(badPolicy.code).toBe(2);
    expect(badPolicy.stdout).toBe("");
    expect(badPolicy.stderr).toContain("is not a valid policy:");
    expect(badPolicy.stderr).toContain("/rules/0/tools:");
    expect(badPolicy.stderr).toContain("/rules/0/decision:");
    expect(badPolicy.stderr).toContain("/extra: unknown policy field");

    const policy = file("policy.json", POLICY);
    const badCases = file("bad-cases.json", [{ tool: "nope", caller: "", user: "u", effect: "delete", expect: "maybe", extra: true }]);
    const result = await run(["test", policy, badCases]);
    expect(result.code).toBe(2);
    for (const field of ["tool", "caller", "effect", "expect", "extra"]) expect(result.stderr).toContain(`cases[0].${field}:`);

    expect((await run(["test", policy, file("not-json.json", "{")])).stderr).toContain("is not JSON");
    expect((await run(["test", "missing.json", cases])).stderr).toContain("ENOENT");
    expect((await run(["test", policy])).code).toBe(2);
    expect((await run(["frobnicate"])).code).toBe(2);
  });
});
