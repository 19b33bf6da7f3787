/**
 * What an operation's effect came to, as the effect steps hand it back to the ledger: values, never
 * thrown, so the ledger settles every operation that began, and the caller's error after an effect is
 * always made here, with the operation's id.
 */
import { ToolpactError, type ExecuteResult } from "@toolpact/contract";
import type { OperationState } from "../api.js";
import { INVALID_TARGET_ID, TARGET_ID_MAX_LENGTH } from "../plugin-code/answers.js";
import type { ActivityRecord, IdempotencyRecord, OutboxRecord } from "../store/store.js";

/** The codes an operation that began can end with: recorded with it, replayed by its idempotency key. */
export type OperationErrorCode = "OUTPUT_INVALID" | "OUTCOME_UNKNOWN" | "PROVIDER_FAILED" | "GUARD_REJECTED";

/** True for a code an operation can end with (what a stored idempotency record may carry). */
export function isOperationErrorCode(code: string): code is OperationErrorCode {
  return code === "OUTPUT_INVALID" || code === "OUTCOME_UNKNOWN" || code === "PROVIDER_FAILED" || code === "GUARD_REJECTED";
}

/** What AfterTool hooks staged: outbox rows and the events of hooks that failed, committed with the settle. */
export interface StagedReactions {
  readonly outbox: readonly OutboxRecord[];
  readonly events: readonly ActivityRecord[];
}

/** A result kept for the operation's idempotency record: sealed, with the guards that passed it. */
export interface KeptResult {
  readonly sealedResult: Uint8Array;
  readonly guardSet: string;
}

/** The provider (or a gate) answered, and the answer passed every check: the caller gets `result`. */
export interface Answered {
  readonly answered: true;
  readonly state: "succeeded";
  /** A frozen JSON copy. */
  readonly result: unknown;
  readonly kept?: KeptResult;
  readonly staged?: StagedReactions;
}

/** The caller gets no result: the provider failed or timed out, or its output is invalid or withheld. */
export interface Unanswered {
  readonly answered: false;
  /** `succeeded` when the provider ran to the end and only its output is withheld. */
  readonly state: Exclude<OperationState, "running">;
  readonly errorCode: OperationErrorCode;
  readonly errorClass?: string;
  /** The provider's own message for the caller (a ProviderRefusal), made visible and bounded; never stored. */
  readonly shown?: string;
  readonly staged?: StagedReactions;
}

/** What an operation's effect came to. */
export type EffectOutcome = Answered | Unanswered;

/** An answer for the caller. */
export function answered(result: unknown): Answered {
  return { answered: true, state: "succeeded", result };
}

/** No answer for the caller, and why. */
export function unanswered(state: Unanswered["state"], errorCode: OperationErrorCode, errorClass?: string): Unanswered {
  return errorClass === undefined ? { answered: false, state, errorCode } : { answered: false, state, errorCode, errorClass };
}

/** The execute chain's answer: the caller's result, or why the call goes round again. */
export type ExecuteAnswer = ExecuteResult | ExecuteRetry;

/**
 * The tenant's config changed after the authorization steps read it (decide again), or an idempotency record appeared
 * for the key in the meantime (replay it).
 */
export type ExecuteRetry = { readonly retry: "config-changed" } | { readonly retry: "replay"; readonly record: IdempotencyRecord };

/** True when `answer` sends the call round again. */
export function isRetry(answer: ExecuteAnswer): answer is ExecuteRetry {
  return "retry" in answer;
}

/** What an operation's error names. */
export interface OperationError {
  readonly code: OperationErrorCode;
  /** The tool's full name. */
  readonly tool: string;
  readonly operationId: string;
  readonly errorClass: string | undefined;
  /** The provider's own message for the caller, when it refused with one. */
  readonly shown?: string | undefined;
}

/** The error a caller gets for an operation that began and gave no result: always with its operation id. */
export function outcomeError(failure: OperationError): ToolpactError {
  const { code, tool, operationId, errorClass, shown } = failure;
  const data = errorClass === undefined ? { tool, operationId } : { tool, operationId, errorClass };
  switch (code) {
    case "OUTPUT_INVALID":
      return new ToolpactError(
        "OUTPUT_INVALID",
        errorClass === INVALID_TARGET_ID
          ? `${tool} ran (operation ${operationId}) but its result names a targetId the activity log cannot keep ` +
              `(at most ${TARGET_ID_MAX_LENGTH} characters, no control characters): the result is withheld; fix the provider`
          : `${tool} ran (operation ${operationId}) but its result does not match its outputSchema: the result is withheld`,
        data,
      );
    case "OUTCOME_UNKNOWN":
      return new ToolpactError(
        "OUTCOME_UNKNOWN",
        `${tool} ${errorClass === "ProviderOutcomeUnknown" ? "lost its answer" : "did not answer in time"}; ` +
          `its effect may or may not have happened (operation ${operationId}): read the operation before retrying`,
        data,
      );
    case "PROVIDER_FAILED":
      return new ToolpactError(
        "PROVIDER_FAILED",
        shown === undefined
          ? `the provider of ${tool} failed (operation ${operationId}); its message is not forwarded`
          : `the provider of ${tool} failed (operation ${operationId}) and says: ${shown}`,
        data,
      );
    case "GUARD_REJECTED":
      return new ToolpactError(
        "GUARD_REJECTED",
        `${tool} ran (operation ${operationId}) but a guard withheld its output: the effect happened, the result is not shown`,
        data,
      );
  }
}
