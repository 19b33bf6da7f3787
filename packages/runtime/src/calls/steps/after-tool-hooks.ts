import { uuidv7 } from "../../ids.js";
import { failureClassOf, reactionsOf, type CheckedReaction } from "../../plugin-code/answers.js";
import type { HookCall } from "../../seams.js";
import type { ActivityRecord, OutboxRecord } from "../../store/store.js";
import type { CallAt } from "../call.js";
import type { EffectStep } from "../chain.js";
import type { EffectOutcome, StagedReactions } from "../outcome.js";

type Reads = "tool" | "input" | "seams" | "operation";

/**
 * after-tool-hooks, the effect's last step: every AfterTool hook acting on the call sees the outcome the caller gets, all at once, each
 * under its timeout. Staged reactions become outbox rows (payload sealed), committed with the settle; a
 * hook that fails becomes an activity event of kind `hook`, and the outcome is kept.
 */
export const afterToolHooks: EffectStep<Reads> = function afterToolHooks(call, outcome) {
  if (call.seams.hooks.length === 0) return outcome;
  return runHooks(call, outcome).then((staged) => ({ ...outcome, staged }));
};

async function runHooks(call: CallAt<Reads>, outcome: EffectOutcome): Promise<StagedReactions> {
  const { principal, tool, parts, trace } = call;
  const { operationId } = call.operation;
  const hooks = call.seams.hooks;
  const hookCall: HookCall = Object.freeze({
    tenantId: principal.tenantId,
    tool: tool.fullName,
    providerId: tool.providerId,
    effect: tool.declaration.effect,
    input: call.input,
    output: outcome.answered ? outcome.result : undefined,
    outcome: outcome.state,
    ...(outcome.answered ? {} : { errorCode: outcome.errorCode }),
    operationId,
    callerPluginId: principal.callerPluginId,
    actor: principal.actor,
  });
  const about = { principal, tool: tool.fullName, phase: "execute" as const, operationId };
  const answers = await Promise.all(
    hooks.map(async (hook): Promise<{ reactions: readonly CheckedReaction[] } | { failure: string }> => {
      const handler = hook.handler;
      if (handler === undefined) return { failure: "HandlerMissing" };
      try {
        return reactionsOf((await parts.pluginCode.runSeam(hook, about, (ctx) => handler(hookCall, ctx))) ?? []);
      } catch (error) {
        return { failure: failureClassOf(error) };
      }
    }),
  );
  const outbox: OutboxRecord[] = [];
  const events: ActivityRecord[] = [];
  const now = parts.context.clock();
  answers.forEach((answer, index) => {
    const hook = hooks[index]!;
    if ("failure" in answer) {
      parts.context.logger.warn({ event: "hook_failed", hook: hook.key, tool: tool.fullName, operationId, errorClass: answer.failure });
      events.push(trace.hookFailed(hook.key, operationId, answer.failure));
      return;
    }
    for (const reaction of answer.reactions) {
      const id = uuidv7(now);
      outbox.push({
        tenantId: principal.tenantId,
        id,
        operationId,
        tool: tool.fullName,
        hook: hook.key,
        kind: reaction.kind,
        sealedPayload: parts.sealed.sealOutboxPayload(principal.tenantId, id, reaction.json),
        createdAt: now,
        attempts: 0,
      });
    }
  });
  return { outbox, events };
}
