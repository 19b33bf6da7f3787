/**
 * The host's handler for one tool of an isolated provider: each function the child has (execute, and
 * preview or authorize when it has them) sends the call to the child with its context, and reads the answer
 * as untrusted. A call the child may have run and never answered (it died, or answered nonsense) is
 * `OUTCOME_UNKNOWN` for an execute with an effect; a read, or a call never sent, simply failed.
 */
import { isToolpactErrorCode, ToolpactError, type Manifest, type ToolCallContext, type ToolHandler } from "@toolpact/contract";
import { ChildCallError, type ChildSupervisor } from "./child-supervisor.js";
import { CALL_META_KEY, THROWN_META_KEY, type HandlerPhase, type HandlerShape, type ThrownOnWire, type ToolCallContextOnWire } from "./wire.js";

/** What an isolated handler sends through. */
export interface IsolatedTool {
  readonly supervisor: ChildSupervisor;
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
  const send = (phase: HandlerPhase) => (input: unknown, ctx: ToolCallContext) => callChild(tool, phase, input, ctx, timeoutMs);
  return {
    execute: send("execute"),
    ...(tool.shape.preview ? { preview: send("preview") as NonNullable<ToolHandler["preview"]> } : {}),
    ...(tool.shape.authorize ? { authorize: send("authorize") as NonNullable<ToolHandler["authorize"]> } : {}),
  };
}

async function callChild(tool: IsolatedTool, phase: HandlerPhase, input: unknown, ctx: ToolCallContext, timeoutMs: number): Promise<never> {
  const about: ToolCallContextOnWire = {
    phase,
    tenantId: ctx.tenantId,
    actor: ctx.actor,
    callerPluginId: ctx.callerPluginId,
    tool: ctx.tool,
    effect: ctx.effect,
    ...("operationId" in ctx && typeof ctx.operationId === "string" ? { operationId: ctx.operationId } : {}),
    ...(ctx.traceparent === undefined ? {} : { traceparent: ctx.traceparent }),
    ...(ctx.tracestate === undefined ? {} : { tracestate: ctx.tracestate }),
  };
  const mayHaveEffect = phase === "execute" && ctx.effect !== "read";
  let result: Awaited<ReturnType<ChildSupervisor["call"]>>;
  try {
    result = await tool.supervisor.call({ name: tool.spec, arguments: { input }, _meta: { [CALL_META_KEY]: about } }, ctx.signal, timeoutMs);
  } catch (error) {
    if (error instanceof ChildCallError && error.failure === "lost" && mayHaveEffect) throw outcomeUnknown(ctx.tool, error.message);
    throw error;
  }
  return answerOf(result, ctx.tool, mayHaveEffect) as never;
}

/** The handler's answer in a child's result, or what it threw, thrown again; anything else is a failure of the child. */
function answerOf(result: unknown, toolName: string, mayHaveEffect: boolean): unknown {
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
  const message = `the isolated process answered ${toolName} with something that is not an answer`;
  if (mayHaveEffect) throw outcomeUnknown(toolName, message);
  throw new ChildCallError("lost", message);
}

function outcomeUnknown(toolName: string, why: string): ToolpactError {
  return new ToolpactError("OUTCOME_UNKNOWN", `${why}: ${toolName} may have run; its outcome is unknown`, { tool: toolName });
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
