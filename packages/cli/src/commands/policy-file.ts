import { readFile } from "node:fs/promises";
import path from "node:path";
import { normalizePolicy, PermissionPolicy, policyIssues } from "@toolpact/server";

/** A file that could not be used: what is wrong with it, already in words for people. */
export class PolicyFileError extends Error {}

/** Reads and parses one JSON file given on the command line, resolved against `cwd`. */
export async function readJsonFile(cwd: string, file: string, what: string): Promise<unknown> {
  const full = path.resolve(cwd, file);
  let text: string;
  try {
    text = await readFile(full, "utf8");
  } catch (error) {
    throw new PolicyFileError(`cannot read the ${what} ${full}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new PolicyFileError(`the ${what} ${full} is not JSON: ${(error as Error).message}`);
  }
}

/** Reads a policy file (the JSON `admin.setPolicy` takes) and compiles it as the runtime does; every problem when it is not valid. */
export async function readPolicyFile(cwd: string, file: string): Promise<PermissionPolicy> {
  const json = await readJsonFile(cwd, file, "policy file");
  const issues = policyIssues(json);
  if (issues.length > 0) {
    const lines = issues.map((issue) => `  ${issue.path || "/"}: ${issue.message}`);
    throw new PolicyFileError([`the policy file ${path.resolve(cwd, file)} is not a valid policy:`, ...lines].join("\n"));
  }
  return new PermissionPolicy(normalizePolicy(json as Parameters<typeof normalizePolicy>[0]));
}
