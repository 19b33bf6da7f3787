import type { CliIo } from "../io.js";
import { parseCommandArgs } from "../command-args.js";
import { PolicyFileError } from "./policy-file.js";
import { policyTest } from "./policy-test.js";

const HELP = `usage: toolpact policy test <policy.json> <cases.json>

  test     decides each case of <cases.json> under the tenant policy <policy.json> (the JSON admin.setPolicy
           takes), exactly as the runtime does, and prints the decision and the rule that decided it:
           allow, confirm (token | platform) or deny. Exit 1 when a case does not get what it expects.

A case: { "name"?, "tool": "<pluginId>:<tool>[@<version>]", "caller": "<plugin id>", "user": "<id>",
          "roles"?: [...], "verificationLevel"?: 0..3 (the user's; default 0),
          "effect"?: "read" | "write" | "external" (the tool's; default "write"),
          "requiresConfirmation"?: boolean, "toolVerificationLevel"?: 0..3 (the tool declaration's),
          "expect": "allow" | "deny" | "confirm" | { "decision": "confirm", "mode": "token" | "platform" } }`;

/** `toolpact policy <test> ...`: 0 ok, 1 a case or call decided otherwise than expected, 2 usage or unusable files. */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs({ name: "policy", help: HELP }, io, {
    args: [...args],
    allowPositionals: true,
    options: { help: { type: "boolean", short: "h" } },
  });
  if (typeof parsed === "number") return parsed;
  const [sub, ...files] = parsed.positionals;
  if (sub !== "test" || files.length !== 2) {
    io.stderr(`toolpact policy: ${sub === "test" ? "test takes <policy.json> <cases.json>" : `unknown subcommand "${sub ?? ""}"`}\n\n${HELP}`);
    return 2;
  }
  try {
    return await policyTest(files, io);
  } catch (error) {
    if (!(error instanceof PolicyFileError)) throw error;
    io.stderr(`toolpact policy ${sub}: ${error.message}`);
    return 2;
  }
}
