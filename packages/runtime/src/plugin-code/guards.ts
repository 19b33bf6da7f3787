import type { Principal } from "../api.js";
import type { RegisteredTool } from "../registry.js";
import type { GuardCall, ResolvedSeams } from "../seams.js";
import { failureClassOf, guardAnswerOf } from "./answers.js";
import type { PluginCodeRunner } from "./plugin-code-runner.js";

/** What guards see of a call whose operation ran. */
export interface GuardedOutput {
  readonly principal: Principal;
  readonly tool: RegisteredTool;
  readonly input: unknown;
  readonly seams: ResolvedSeams;
  readonly operationId: string;
  /** The output so far: a frozen JSON copy. */
  readonly output: unknown;
}

/** The guards' verdict: the output the caller gets, or why it gets none (and which guard said so). */
export type GuardVerdict =
  | { readonly ok: true; readonly output: unknown }
  | { readonly ok: false; readonly errorCode: "GUARD_REJECTED" | "OUTPUT_INVALID"; readonly errorClass?: string; readonly seam: string };

/**
 * Runs each guard acting on the call, in order: it may pass, replace (validated against outputSchema
 * again) or withhold the output. A guard that throws, times out, answers nonsense or has no function
 * withholds (fail closed).
 */
export async function runGuards(runner: PluginCodeRunner, guarded: GuardedOutput): Promise<GuardVerdict> {
  const { principal, tool, operationId } = guarded;
  const about = { principal, tool: tool.fullName, phase: "execute" as const, operationId };
  let current = guarded.output;
  for (const guard of guarded.seams.guards) {
    const handler = guard.handler;
    if (handler === undefined) return { ok: false, errorCode: "GUARD_REJECTED", errorClass: "HandlerMissing", seam: guard.key };
    const guardCall: GuardCall = Object.freeze({
      tenantId: principal.tenantId,
      tool: tool.fullName,
      providerId: tool.providerId,
      effect: tool.declaration.effect,
      input: guarded.input,
      output: current,
      operationId,
      callerPluginId: principal.callerPluginId,
      actor: principal.actor,
    });
    let answer: ReturnType<typeof guardAnswerOf>;
    try {
      // Read (and a replacement copied) inside the guarded block: a getter that throws is the guard failing.
      answer = guardAnswerOf(await runner.runSeam(guard, about, (ctx) => handler(guardCall, ctx)));
    } catch (error) {
      return { ok: false, errorCode: "GUARD_REJECTED", errorClass: failureClassOf(error), seam: guard.key };
    }
    switch (answer.kind) {
      case "pass":
        continue;
      case "withhold":
        return { ok: false, errorCode: "GUARD_REJECTED", seam: guard.key };
      case "replace":
        // The replacement is a frozen copy too: no later guard, hook or caller can change it in place.
        current = answer.output;
        if (tool.validateOutput !== undefined && tool.validateOutput(current).length > 0) {
          return { ok: false, errorCode: "OUTPUT_INVALID", errorClass: "InvalidReplacement", seam: guard.key };
        }
        continue;
      case "not-json":
        return { ok: false, errorCode: "OUTPUT_INVALID", errorClass: "InvalidReplacement", seam: guard.key };
      default:
        return { ok: false, errorCode: "GUARD_REJECTED", errorClass: "InvalidGuardDecision", seam: guard.key };
    }
  }
  return { ok: true, output: current };
}
