/**
 * Runs: a caller and actor bound to a list of tool patterns for a while. Calls passing a run's id may use
 * only the tools it allows (checked by check-caller), until the run closes or expires.
 */
import { randomUUID } from "node:crypto";
import { ID_MAX_LENGTH, RUN_ALLOW_MAX, RUN_TTL_MAX_SECONDS, ToolpactError, matchesToolPattern } from "@toolpact/contract";
import type { Principal, RunHandle, RunOptions } from "./api.js";
import type { RuntimeContext } from "./options.js";
import { isToolPattern } from "./permission-policy.js";
import type { RegisteredTool } from "./registry.js";

/** Opens a run bound to the principal's (tenant, caller, actor). @throws INPUT_INVALID listing every problem. */
export async function openRun(context: RuntimeContext, principal: Principal, options: RunOptions): Promise<RunHandle> {
  const issues: { path: string; message: string }[] = [];
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new ToolpactError("INPUT_INVALID", "the run cannot be opened: its options are an object { allow, ttlSeconds }", {
      issues: [{ path: "", message: "an object { allow, ttlSeconds }" }],
    });
  }
  const { allow, ttlSeconds, ...rest } = options as unknown as Record<string, unknown>;
  for (const key of Object.keys(rest)) issues.push({ path: `/${key}`, message: "unknown run option: a run takes allow and ttlSeconds" });
  if (!Array.isArray(allow) || allow.length === 0 || allow.length > RUN_ALLOW_MAX) {
    issues.push({ path: "/allow", message: `allow is a list of 1 to ${RUN_ALLOW_MAX} tool patterns` });
  } else {
    allow.forEach((pattern, index) => {
      if (!isToolPattern(pattern)) {
        issues.push({ path: `/allow/${index}`, message: 'a tool pattern: "*", "<pluginId>:*", "<pluginId>:<tool>" or "<pluginId>:<tool>@<version>"' });
      }
    });
  }
  if (typeof ttlSeconds !== "number" || !Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > RUN_TTL_MAX_SECONDS) {
    issues.push({ path: "/ttlSeconds", message: `ttlSeconds is an integer from 1 to ${RUN_TTL_MAX_SECONDS}` });
  }
  if (issues.length > 0) {
    throw new ToolpactError("INPUT_INVALID", `the run cannot be opened: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`, {
      issues,
    });
  }
  const now = context.clock();
  const runId = randomUUID();
  const expiresAt = now + (ttlSeconds as number) * 1000;
  await context.store.insertRun({
    tenantId: principal.tenantId,
    runId,
    callerPluginId: principal.callerPluginId,
    actorUserId: principal.actor.userId,
    allow: Object.freeze([...(allow as readonly string[])]),
    createdAt: now,
    expiresAt,
  });
  return { runId, expiresAt: new Date(expiresAt).toISOString() };
}

/** Closes the principal's own run; calls with its id are then RUN_DENIED. */
export async function closeRun(context: RuntimeContext, principal: Principal, runId: string): Promise<void> {
  const run = typeof runId === "string" && runId.length <= ID_MAX_LENGTH ? await context.store.getRun(principal.tenantId, runId) : undefined;
  if (run === undefined || run.callerPluginId !== principal.callerPluginId || run.actorUserId !== principal.actor.userId) {
    throw new ToolpactError(
      "RUN_DENIED",
      `run "${String(runId).slice(0, ID_MAX_LENGTH)}" is not a run of this caller and user: only the caller and user that opened a run close it`,
    );
  }
  if (run.closedAt === undefined) await context.store.closeRun(principal.tenantId, runId, context.clock());
}

/** A call made in a run. */
export interface CallInRun {
  readonly principal: Principal;
  readonly tool: RegisteredTool;
  readonly runId: string;
}

/** check-caller for a call in a run: the run is the caller's and actor's, open, unexpired, and allows the tool. */
export async function checkRun(context: RuntimeContext, call: CallInRun): Promise<void> {
  const { principal, tool, runId } = call;
  const shown = String(runId).slice(0, ID_MAX_LENGTH);
  const run =
    typeof runId === "string" && runId.length > 0 && runId.length <= ID_MAX_LENGTH ? await context.store.getRun(principal.tenantId, runId) : undefined;
  const denied = (why: string) => new ToolpactError("RUN_DENIED", `run "${shown}" ${why}`, { tool: tool.fullName });
  if (run === undefined || run.callerPluginId !== principal.callerPluginId || run.actorUserId !== principal.actor.userId) {
    throw denied("is not a run of this caller and user: open one with runs.open and pass its runId");
  }
  if (run.closedAt !== undefined) throw denied("was closed: open a new run");
  if (run.expiresAt <= context.clock()) throw denied("has expired: open a new run");
  const { providerId, declaration } = tool;
  if (!run.allow.some((pattern) => matchesToolPattern(pattern, providerId, declaration.name, declaration.version))) {
    throw denied(`does not allow ${tool.fullName}: its allow list is ${run.allow.map((p) => `"${p}"`).join(", ")}`);
  }
}
