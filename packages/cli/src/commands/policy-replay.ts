import path from "node:path";
import { loadManifest, parseToolFullName } from "@toolpact/contract";
import { loadHostConfig, openStore, type ActivityRecord, type PermissionPolicy, type PolicyTool } from "@toolpact/server";
import type { CliIo } from "../io.js";
import { PolicyFileError, readPolicyFile } from "./policy-file.js";
import { describeExplanation } from "./policy-test.js";

/** A decision as activity shows it. */
type Recorded = "allow" | "confirm" | "deny";

/**
 * Refusals of the steps before the policy decides (tool lookup, caller install, input validation) and
 * afterwards by the actor's verification level, which activity does not record: the policy's decision on
 * those calls is not known, so they are not replayed.
 */
const UNDECIDED_CODES = new Set([
  "TOOL_NOT_FOUND",
  "VERSION_UNSUPPORTED",
  "PROVIDER_NOT_FOUND",
  "PROVIDER_DISABLED",
  "CALLER_DISABLED",
  "HANDLER_MISSING",
  "INPUT_INVALID",
  "UNAUTHENTICATED",
  "RATE_LIMITED",
  "VERIFICATION_REQUIRED",
]);

/**
 * The decision a recorded call event shows: `deny` for PERMISSION_DENIED, `confirm` when the call made or
 * carried a confirmation (or was refused with CONFIRMATION_REQUIRED), `allow` when it went on without one
 * (whatever happened afterwards); undefined when the policy did not decide it (see UNDECIDED_CODES).
 */
export function recordedDecision(event: ActivityRecord): Recorded | undefined {
  if (event.kind !== "call" || event.tool === undefined || event.callerPluginId === undefined || event.actorUserId === undefined) return undefined;
  if (event.errorCode === "PERMISSION_DENIED") return "deny";
  if (event.errorCode !== undefined && UNDECIDED_CODES.has(event.errorCode)) return undefined;
  if (event.confirmationId !== undefined || event.errorCode === "CONFIRMATION_REQUIRED") return "confirm";
  return "allow";
}

/** `7d`, `24h`, `30m` or an ISO date: the earliest time replayed, in Unix ms. */
export function parseSince(text: string, now: number): number | undefined {
  const match = /^(\d{1,5})([dhm])$/.exec(text);
  if (match) return now - Number(match[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000 }[match[2] as "d" | "h" | "m"];
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : at;
}

const PAGE = 500;

/**
 * `toolpact policy replay`: every recorded call since `--since`, decided again under the proposed policy;
 * prints each call whose decision would change and a summary. Exit 0 (a report), 2 on unusable input.
 */
export async function policyReplay(
  policyFile: string,
  options: { readonly since: string; readonly tenant?: string; readonly config?: string },
  io: CliIo,
): Promise<number> {
  const since = parseSince(options.since, Date.now());
  if (since === undefined) throw new PolicyFileError(`--since "${options.since}" is not a duration (7d, 24h, 30m) or a date (2026-12-01)`);
  const policy = await readPolicyFile(io.cwd, policyFile);
  const config = await loadHostConfig({ cwd: io.cwd, env: io.env, ...(options.config === undefined ? {} : { file: options.config }) });
  const tools = await declaredTools(config.plugins);
  const store = await openStore(config, {});
  try {
    const tenants = options.tenant === undefined ? await store.listTenantIds(10_000) : [options.tenant];
    const counts = { replayed: 0, changed: 0, undecided: 0, unknownTool: 0 };
    for (const tenantId of tenants) {
      for await (const event of eventsSince(store, tenantId, since)) {
        const old = recordedDecision(event);
        if (old === undefined) {
          if (event.kind === "call") counts.undecided++;
          continue;
        }
        const tool = tools.get(event.tool!);
        if (tool === undefined) {
          counts.unknownTool++;
          continue;
        }
        counts.replayed++;
        const line = changedLine(policy, tool, event, old);
        if (line === undefined) continue;
        counts.changed++;
        io.stdout(`${tenantId}  ${line}`);
      }
    }
    io.stdout(
      `toolpact policy replay: ${counts.replayed} call${counts.replayed === 1 ? "" : "s"} since ${new Date(since).toISOString()} ` +
        `in ${tenants.length} tenant${tenants.length === 1 ? "" : "s"}, ${counts.changed} would change; not replayed: ` +
        `${counts.undecided} refused before the policy decided or by verification level, ${counts.unknownTool} of tools the config's plugins do not declare`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

/** The line for one event when the proposed policy decides otherwise than recorded; undefined when it agrees. */
function changedLine(policy: PermissionPolicy, tool: PolicyTool, event: ActivityRecord, old: Recorded): string | undefined {
  // Roles and verification levels are not in activity: the user is replayed with none and at the top level,
  // so role rules do not match and verification floors do not refuse.
  const explained = policy.explain(tool, event.callerPluginId!, { userId: event.actorUserId!, roles: [], verificationLevel: 3 });
  if (explained.decision === old) return undefined;
  const at = new Date(event.at).toISOString();
  const how = event.errorCode === undefined ? (old === "confirm" ? "confirmation" : "ran") : event.errorCode;
  return `${at} ${event.phase} ${event.tool} from ${event.callerPluginId} for ${event.actorUserId}: ${old} (recorded: ${how}) -> ${describeExplanation(explained)}`;
}

async function* eventsSince(store: Awaited<ReturnType<typeof openStore>>, tenantId: string, since: number): AsyncGenerator<ActivityRecord> {
  let beforeId: string | undefined;
  for (;;) {
    const page = await store.listActivity(tenantId, { limit: PAGE, ...(beforeId === undefined ? {} : { beforeId }) });
    for (const event of page) {
      if (event.at < since) return;
      yield event;
    }
    if (page.length < PAGE) return;
    beforeId = page[page.length - 1]!.id;
  }
}

/** Every tool the config's plugin folders declare, by full name, as the policy reads them. */
async function declaredTools(dirs: readonly string[]): Promise<Map<string, PolicyTool>> {
  const tools = new Map<string, PolicyTool>();
  for (const dir of dirs) {
    const result = await loadManifest(path.join(dir, "plugin.json"));
    if (!result.ok) throw new PolicyFileError(`the plugin manifest in ${dir} does not load: run toolpact validate ${path.join(dir, "plugin.json")}`);
    for (const declaration of result.manifest.tools ?? []) {
      const fullName = `${result.manifest.id}:${declaration.name}@${declaration.version}`;
      if (parseToolFullName(fullName) !== undefined) tools.set(fullName, { providerId: result.manifest.id, fullName, declaration });
    }
  }
  return tools;
}
