import type { PolicyExplanation } from "@toolpact/server";
import type { CliIo } from "../io.js";
import { parsePolicyCases, type ExpectedDecision, type PolicyCase } from "./policy-cases.js";
import { readJsonFile, readPolicyFile } from "./policy-file.js";

/** A decision in words: `allow`, `deny (PERMISSION_DENIED)`, `confirm (platform)`, with the rule that decided. */
export function describeExplanation(explained: PolicyExplanation): string {
  if (explained.decision === "deny") return `deny (${explained.code}) by ${explained.decidedBy}`;
  if (explained.decision === "confirm") return `confirm (${explained.mode}) by ${explained.decidedBy}`;
  return `allow by ${explained.decidedBy}`;
}

function matches(expect: ExpectedDecision, explained: PolicyExplanation): boolean {
  if (typeof expect === "string") return expect === explained.decision;
  return explained.decision === "confirm" && explained.mode === expect.mode;
}

function describeExpected(expect: ExpectedDecision): string {
  return typeof expect === "string" ? expect : `confirm (${expect.mode})`;
}

/**
 * `toolpact policy test <policy.json> <cases.json>`: each case's decision under the policy, as the runtime
 * decides it; 0 when every case gets what it expects, 1 on a mismatch, 2 when a file is not usable.
 */
export async function policyTest(files: readonly string[], io: CliIo): Promise<number> {
  const [policyFile, casesFile] = files;
  const policy = await readPolicyFile(io.cwd, policyFile!);
  const { cases, problems } = parsePolicyCases(await readJsonFile(io.cwd, casesFile!, "cases file"));
  if (problems.length > 0) {
    io.stderr(`toolpact policy test: the cases file ${casesFile} has ${problems.length} problem${problems.length === 1 ? "" : "s"}:`);
    for (const problem of problems) io.stderr(`  ${problem}`);
    return 2;
  }
  let mismatches = 0;
  for (const item of cases) {
    const explained = explainCase(policy, item);
    const ok = matches(item.expect, explained);
    if (!ok) mismatches++;
    const call = `${item.tool} from ${item.caller} for ${item.user}`;
    const expected = ok ? "" : `; expected ${describeExpected(item.expect)}`;
    io.stdout(`${ok ? "ok  " : "FAIL"}  ${item.name}: ${call} -> ${describeExplanation(explained)}${expected}`);
  }
  const summary = `${cases.length} case${cases.length === 1 ? "" : "s"}, ${mismatches} mismatch${mismatches === 1 ? "" : "es"}`;
  (mismatches === 0 ? io.stdout : io.stderr)(`toolpact policy test: ${summary}`);
  return mismatches === 0 ? 0 : 1;
}

function explainCase(policy: Awaited<ReturnType<typeof readPolicyFile>>, item: PolicyCase): PolicyExplanation {
  const tool = {
    providerId: item.providerId,
    fullName: item.tool,
    declaration: {
      name: item.toolName,
      version: item.version,
      effect: item.effect,
      requiresConfirmation: item.requiresConfirmation,
      minVerificationLevel: item.toolVerificationLevel,
    },
  };
  return policy.explain(tool, item.caller, { userId: item.user, roles: item.roles, verificationLevel: item.verificationLevel });
}
