/**
 * Reading what plugin code answered: each answer is read once, inside the caller's guarded block (a getter
 * that throws is the plugin failing), and what is kept is a frozen JSON copy.
 */
import { ToolpactError, prepareOutput } from "@toolpact/contract";
import { errorClassOf } from "../activity/error-class.js";
import { SHOWN_SUMMARY_MAX_CHARS } from "../confirmation/shown-preview.js";
import type { GateDecision, StagedReaction } from "../seams.js";
import { TIMED_OUT } from "./plugin-code-runner.js";
import { ProviderBusy, ProviderRefusal, busyRetryAfterMs, signalMessage } from "@toolpact/contract";

const REASON_MAX = 500;
/** Reactions one hook may stage per call, and the largest payload (JSON bytes). */
const MAX_REACTIONS = 100;
const MAX_REACTION_BYTES = 64 * 1024;
const REACTION_KIND = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
/** The longest `targetId` a result may name (the activity log keeps it whole). */
export const TARGET_ID_MAX_LENGTH = 256;
/** Control characters (NUL among them: PostgreSQL's text cannot hold it), which no targetId may carry. */
const CONTROL_CHARACTER = /\p{Cc}/u;
/** How a failure to read a result shows in the activity log when it is the result's `targetId`. */
export const INVALID_TARGET_ID = "InvalidTargetId";

/**
 * What a provider, gate or guard handed back, as the frozen JSON copy the runtime works on from then on
 * (undefined, a provider that answers nothing, stays undefined). A string `targetId` it names is checked
 * here, where it enters: the activity log keeps it whole, so one it cannot keep is the answer's fault.
 * @throws ToolpactError OUTPUT_INVALID when it is not JSON (`NotJson`) or names a bad targetId (`InvalidTargetId`).
 */
export function outputOf(value: unknown): unknown {
  if (value === undefined) return undefined;
  const copy = prepareOutput(value);
  // A lone surrogate never gets here: prepareOutput refuses it as not JSON.
  const problem = targetIdProblem(copy);
  if (problem !== undefined) {
    throw new ToolpactError("OUTPUT_INVALID", `the result's targetId ${problem}`, { errorClass: INVALID_TARGET_ID });
  }
  return copy;
}

/** The activity class of an `outputOf` failure: `InvalidTargetId`, or `NotJson` for anything else. */
export function outputFailureClassOf(error: unknown): string {
  return (error as { data?: { errorClass?: unknown } } | null)?.data?.errorClass === INVALID_TARGET_ID ? INVALID_TARGET_ID : "NotJson";
}

/** What is wrong with the string `targetId` a result names, if anything (a result naming none, or a non-string one, is fine). */
function targetIdProblem(result: unknown): string | undefined {
  if (typeof result !== "object" || result === null) return undefined;
  const target = (result as { targetId?: unknown }).targetId;
  if (typeof target !== "string") return undefined;
  if (target.length > TARGET_ID_MAX_LENGTH) return `has ${target.length} characters, more than the ${TARGET_ID_MAX_LENGTH} the activity log keeps`;
  if (CONTROL_CHARACTER.test(target)) return "contains a control character (NUL, a line break, ...)";
  return undefined;
}

/** A provider's `authorize` answer: true, or `{ allowed: true }`, allows; anything else refuses. */
export function isAllowed(answer: unknown): boolean {
  return answer === true || (typeof answer === "object" && answer !== null && (answer as { allowed?: unknown }).allowed === true);
}

/** A preview answer as plain data (details a frozen JSON copy), or what is wrong with it: nothing is cut. */
export function previewOf(answer: unknown): { summary: string; details: unknown } | string {
  if (typeof answer !== "object" || answer === null) return "returned no summary string";
  const { summary, details } = answer as { summary?: unknown; details?: unknown };
  if (typeof summary !== "string") return "returned no summary string";
  if (summary.length > SHOWN_SUMMARY_MAX_CHARS) {
    return `has a summary of ${summary.length} characters, more than the ${SHOWN_SUMMARY_MAX_CHARS} a summary may have (it is shown whole, never cut)`;
  }
  let copy: unknown = null;
  if (details !== undefined) {
    try {
      copy = prepareOutput(details);
    } catch {
      return "has details that are not JSON";
    }
  }
  return { summary, details: copy };
}

/** A gate's answer as one of the four decisions, or undefined when it is none of them. */
export function gateDecisionOf(answer: unknown): GateDecision | undefined {
  if (typeof answer !== "object" || answer === null) return undefined;
  const { decision, reason, value } = answer as { decision?: unknown; reason?: unknown; value?: unknown };
  switch (decision) {
    case "allow":
      return { decision: "allow" };
    case "block":
      return {
        decision: "block",
        reason: typeof reason === "string" && reason.length > 0 ? reason.slice(0, REASON_MAX) : "the gate gave no reason",
      };
    case "requireConfirmation":
      return typeof reason === "string" ? { decision: "requireConfirmation", reason: reason.slice(0, REASON_MAX) } : { decision: "requireConfirmation" };
    case "result": {
      if (!("value" in (answer as object))) return undefined;
      let copy: unknown;
      try {
        copy = outputOf(value);
      } catch {
        return undefined; // not JSON: no valid decision (fail closed)
      }
      return { decision: "result", value: copy };
    }
    default:
      return undefined;
  }
}

/** A guard's answer, read once; a replacement already copied. */
export type GuardAnswer = { readonly kind: "pass" | "withhold" | "not-json" | "invalid" } | { readonly kind: "replace"; readonly output: unknown };

/** A guard's answer as one of its decisions (a replacement copied), or invalid. */
export function guardAnswerOf(answer: unknown): GuardAnswer {
  if (typeof answer !== "object" || answer === null) return { kind: "invalid" };
  const decision = (answer as { decision?: unknown }).decision;
  if (decision === "pass" || decision === "withhold") return { kind: decision };
  if (decision !== "replace" || !("output" in answer)) return { kind: "invalid" };
  const output = (answer as { output: unknown }).output;
  try {
    return { kind: "replace", output: outputOf(output) };
  } catch {
    return { kind: "not-json" };
  }
}

/** A staged reaction that passed the checks, with its payload as JSON. */
export interface CheckedReaction {
  readonly kind: StagedReaction["kind"];
  readonly json: string;
}

/** A hook's answer as checked reactions with their payload JSON, or the reason it is not one. */
export function reactionsOf(answer: unknown): { reactions: readonly CheckedReaction[] } | { failure: string } {
  if (!Array.isArray(answer) || answer.length > MAX_REACTIONS) return { failure: "InvalidReactions" };
  const reactions: CheckedReaction[] = [];
  for (const item of answer as unknown[]) {
    const kind = (item as { kind?: unknown } | null)?.kind;
    if (typeof kind !== "string" || !REACTION_KIND.test(kind)) return { failure: "InvalidReactions" };
    let json: string | undefined;
    try {
      json = JSON.stringify((item as { payload?: unknown }).payload ?? null);
    } catch {
      return { failure: "InvalidReactions" };
    }
    if (json === undefined || Buffer.byteLength(json, "utf8") > MAX_REACTION_BYTES) return { failure: "InvalidReactions" };
    reactions.push({ kind, json });
  }
  return { reactions };
}

/** The resource a result names (`targetId`), for the activity log: its shape was checked by `outputOf`. */
export function targetIdOf(result: unknown): string | undefined {
  if (typeof result !== "object" || result === null) return undefined;
  const target = (result as { targetId?: unknown }).targetId;
  return typeof target === "string" && target.length > 0 ? target : undefined;
}

/** How a failure of plugin code shows in the activity log: its class, or TimeoutError. */
export function failureClassOf(error: unknown): string {
  return error === TIMED_OUT ? "TimeoutError" : errorClassOf(error);
}

/**
 * PROVIDER_FAILED for a provider's preview or authorize that threw or timed out; its message is never forwarded,
 * unless it refused with one (ProviderRefusal). A provider at capacity (ProviderBusy) is RATE_LIMITED: nothing ran.
 */
export function providerFailed(tool: string, what: "preview" | "authorize", error: unknown): ToolpactError {
  if (error === TIMED_OUT) {
    return new ToolpactError("PROVIDER_FAILED", `the provider's ${what} of ${tool} timed out`, {
      tool,
      errorClass: "TimeoutError",
    });
  }
  if (error instanceof ProviderBusy) {
    return new ToolpactError("RATE_LIMITED", `the provider of ${tool} is at capacity and ran nothing: ${signalMessage(error)}`, {
      tool,
      retryAfterMs: busyRetryAfterMs(error),
    });
  }
  if (error instanceof ProviderRefusal) {
    return new ToolpactError("PROVIDER_FAILED", `the provider's ${what} of ${tool} refused: ${signalMessage(error)}`, {
      tool,
      errorClass: errorClassOf(error),
    });
  }
  return new ToolpactError("PROVIDER_FAILED", `the provider's ${what} of ${tool} failed; its message is not forwarded`, {
    tool,
    errorClass: errorClassOf(error),
  });
}
