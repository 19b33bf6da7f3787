import { HostError } from "@toolpact/server";
import type { CliIo } from "../io.js";
import { parseCommandArgs } from "../command-args.js";
import { PolicyFileError } from "./policy-file.js";
import { policyReplay } from "./policy-replay.js";
import { policyTest } from "./policy-test.js";

const HELP = `usage: toolpact policy test <policy.json> <cases.json>
       toolpact policy replay <policy.json> --since 7d [--tenant <id>] [--config toolpact.config.json]

  test     decides each case of <cases.json> under the tenant policy <policy.json> (the JSON admin.setPolicy
           takes), exactly as the runtime does, and prints the decision and the rule that decided it:
           allow, confirm (token | platform) or deny. Exit 1 when a case does not get what it expects.
  replay   decides every call recorded in the activity of the config's database since --since (7d, 24h,
           30m or a date) again under <policy.json>, and prints each call whose decision would change
           (recorded -> proposed, with the rule), then a summary. The recorded decision is read from the
           event: PERMISSION_DENIED = deny, a confirmation made or carried (or CONFIRMATION_REQUIRED) =
           confirm, anything else after the policy = allow. Roles and verification levels are not in
           activity: calls are replayed with no roles, at the top verification level. Exit 0.

A case: { "name"?, "tool": "<pluginId>:<tool>[@<version>]", "caller": "<plugin id>", "user": "<id>",
          "roles"?: [...], "verificationLevel"?: 0..3 (the user's; default 0),
          "effect"?: "read" | "write" | "external" (the tool's; default "write"),
          "requiresConfirmation"?: boolean, "toolVerificationLevel"?: 0..3 (the tool declaration's),
          "expect": "allow" | "deny" | "confirm" | { "decision": "confirm", "mode": "token" | "platform" } }`;

/** `toolpact policy <test | replay> ...`: 0 ok, 1 a case or call decided otherwise than expected, 2 usage or unusable files. */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs({ name: "policy", help: HELP }, io, {
    args: [...args],
    allowPositionals: true,
    options: {
      since: { type: "string" },
      tenant: { type: "string" },
      config: { type: "string", short: "c" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (typeof parsed === "number") return parsed;
  const [sub, ...files] = parsed.positionals;
  const { since, tenant, config } = parsed.values;
  const usage = (problem: string) => {
    io.stderr(`toolpact policy: ${problem}\n\n${HELP}`);
    return 2;
  };
  try {
    if (sub === "test") return files.length === 2 ? await policyTest(files, io) : usage("test takes <policy.json> <cases.json>");
    if (sub !== "replay") return usage(`unknown subcommand "${sub ?? ""}": use test or replay`);
    if (files.length !== 1 || since === undefined) return usage("replay takes <policy.json> and --since");
    return await policyReplay(files[0]!, { since, ...(tenant === undefined ? {} : { tenant }), ...(config === undefined ? {} : { config }) }, io);
  } catch (error) {
    if (error instanceof HostError) {
      io.stderr(`toolpact policy ${sub}: ${error.message}`);
      for (const detail of error.details) io.stderr(`  ${detail}`);
      return 2;
    }
    if (!(error instanceof PolicyFileError)) throw error;
    io.stderr(`toolpact policy ${sub}: ${error.message}`);
    return 2;
  }
}
