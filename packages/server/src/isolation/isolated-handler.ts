/**
 * The host's handler for one tool of an isolated provider: each function the child has (execute, and
 * preview or authorize when it has them) sends the call to the child with its context, and reads the answer
 * as untrusted. A call the child may have run and never answered (it died, or answered nonsense) is
 * ProviderOutcomeUnknown: OUTCOME_UNKNOWN for an execute with an effect, a failure for a read.
 */
import { isToolpactErrorCode, ToolpactError, type Manifest, type ToolCallContext, type ToolHandler } from "@toolpact/contract";
import { ProviderOutcomeUnknown } from "@toolpact/runtime";
import type { UpstreamSupervisor } from "../upstream/upstream-supervisor.js";
import type { ChildWatchdog } from "./child-watchdog.js";
import { CALL_META_KEY, THROWN_META_KEY, type HandlerFunction, type HandlerShape, type ThrownOnWire, type ToolCallContextOnWire } from "./wire.js";

/** What an isolated handler sends through. */
export interface IsolatedTool {
  readonly supervisor: Pick<UpstreamSupervisor, "call">;
  readonly watchdog: Pick<ChildWatchdog, "check">;
  /** The tool as the plugin named it when it provided it: `"name"` or `"name@version"`. */
  readonly spec: string;
  readonly shape: HandlerShape;
  readonly manifest: Manifest;
}

/** Stands for an answer that was not JSON in the child: the host's own checks refuse it as they would in process. */
const NOT_JSON: unique symbol = Symbol("the isolated provider's answer was not JSON");
const CLASS_NAME = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/;
/** The longest message of a ToolpactError the child threw that is kept. */
const MESSAGE_MAX = 2000;
/** Time beyond the tool's own timeout for its answer to come back (the runtime's timeout fires first). */
const ANSWER_GRACE_MS = 5000;

/** The handler the host registers for one tool of an isolated provider. */
export function isolatedHandler(tool: IsolatedTool): ToolHandler {
  const timeoutMs = toolTimeoutMs(tool) + ANSWER_GRACE_MS;
  const send = (run: HandlerFunction) => (input: unknown, ctx: ToolCallContext) => callChild(tool, run, input, ctx, timeoutMs);
  return {
    execute: send("execute"),
    ...(tool.shape.preview ? { preview: send("preview") as NonNullable<ToolHandler["preview"]> } : {}),
    ...(tool.shape.authorize ? { authorize: send("authorize") as NonNullable<ToolHandler["authorize"]> } : {}),
  };
}

async function callChild(tool: IsolatedTool, run: HandlerFunction, input: unknown, ctx: ToolCallContext, timeoutMs: number): Promise<never> {
  const about: ToolCallContextOnWire = {
    run,
    phase: ctx.phase,
    tenantId: ctx.tenantId,
    actor: ctx.actor,
    callerPluginId: ctx.callerPluginId,
    tool: ctx.tool,
    effect: ctx.effect,
    ...("operationId" in ctx && typeof ctx.operationId === "string" ? { operationId: ctx.operationId } : {}),
    ...(ctx.traceparent === undefined ? {} : { traceparent: ctx.traceparent }),
    ...(ctx.tracestate === undefined ? {} : { tracestate: ctx.tracestate }),
  };
  const { signal } = ctx;
  // A call cancelled (its timeout, or the host closing): a child that then does not answer is spinning.
  const onAbort = () => tool.watchdog.check();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    const result = await tool.supervisor.call(tool.spec, { input }, { timeoutMs, signal, meta: { [CALL_META_KEY]: about } });
    return answerOf(result, ctx.tool) as never;
  } catch (error) {
    if (error instanceof ProviderOutcomeUnknown && !signal.aborted) tool.watchdog.check();
    throw error;
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** The handler's answer in a child's result, or what it threw, thrown again; anything else may have run and went unanswered. */
function answerOf(result: unknown, toolName: string): unknown {
  const { isError, structuredContent, _meta } = (typeof result === "object" && result !== null ? result : {}) as Record<string, unknown>;
  if (isError === true) {
    const thrown = (_meta as Record<string, unknown> | undefined)?.[THROWN_META_KEY] as Partial<ThrownOnWire> | undefined;
    if (isToolpactErrorCode(thrown?.code) && typeof thrown.message === "string") {
      throw new ToolpactError(thrown.code, thrown.message.slice(0, MESSAGE_MAX));
    }
    throw namedError(typeof thrown?.errorClass === "string" ? thrown.errorClass : "Error");
  }
  if (typeof structuredContent === "object" && structuredContent !== null && !Array.isArray(structuredContent)) {
    const content = structuredContent as { answer?: unknown; notJson?: unknown };
    return content.notJson === true ? NOT_JSON : content.answer;
  }
  throw new ProviderOutcomeUnknown(`the isolated process answered ${toolName} with something that is not an answer: it may have run`);
}

/** An error whose class name is the one the child reported, so the activity log records what it would in process. */
function namedError(name: string): Error {
  const safe = CLASS_NAME.test(name) ? name : "Error";
  const Named = { [safe]: class extends Error {} }[safe]!;
  return new Named("the isolated provider threw; its message is not forwarded");
}

/** The longest timeout among the declared versions of the tool a spec names. */
function toolTimeoutMs({ manifest, spec }: IsolatedTool): number {
  const at = spec.lastIndexOf("@");
  const name = at < 0 ? spec : spec.slice(0, at);
  return Math.max(0, ...manifest.tools.filter((tool) => tool.name === name).map((tool) => tool.timeoutMs));
}
