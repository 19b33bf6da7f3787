/**
 * DESIGN's lost-answer rule (the begin transaction's) at every commit: when the store lost the answer to a write (it may have
 * committed), the runtime reads back what that write would have written before it answers. Found: the
 * call goes on as if the answer had come. Absent: the write did not commit, and "nothing ran" is true.
 * When the store could not make sure the write will not commit later, or cannot be read, nobody can tell:
 * the caller gets OUTCOME_UNKNOWN with the operation's id, never STORE_UNAVAILABLE.
 */
import { ToolpactError } from "@toolpact/contract";
import type { ConfirmationRecord, OperationRecord, Store } from "../store/store.js";
import type { UnansweredCommit } from "../store/unanswered-commit.js";

/** Read-back attempts, and the pause between them (the connection that broke is being replaced). */
const ATTEMPTS = 3;
const PAUSE_MS = 50;

/** Which operation a lost write was about. */
export interface LostOperationWrite {
  readonly tenantId: string;
  readonly operationId: string;
  /** The tool's full name, for messages. */
  readonly tool: string;
}

/**
 * The operation as it stands after a write to it lost its answer, or undefined when it does not exist
 * (the write did not commit). @throws OUTCOME_UNKNOWN with the operation id when that cannot be told.
 */
export async function readBackOperation(store: Store, lost: LostOperationWrite, error: UnansweredCommit): Promise<OperationRecord | undefined> {
  const found = error.settled ? await readBack(() => store.getOperation(lost.tenantId, lost.operationId)) : unknown;
  if (found !== unknown) return found;
  throw new ToolpactError(
    "OUTCOME_UNKNOWN",
    `the store lost its answer while recording operation ${lost.operationId} of ${lost.tool}, and cannot tell yet whether it was ` +
      "recorded: read it with tools.operation before retrying (if it began, recovery settles it)",
    { tool: lost.tool, operationId: lost.operationId },
    { cause: error },
  );
}

/**
 * A confirmation request as it stands after a decision on it lost its answer; undefined when that cannot
 * be told (the decision may or may not have been saved).
 */
export async function readBackConfirmation(
  store: Store,
  request: { readonly tenantId: string; readonly requestId: string },
  error: UnansweredCommit,
): Promise<ConfirmationRecord | undefined> {
  const found = error.settled ? await readBack(() => store.getConfirmation(request.tenantId, request.requestId)) : unknown;
  return found === unknown ? undefined : found;
}

/** Marks a read-back that could not be done. */
const unknown: unique symbol = Symbol("unknown");

async function readBack<T>(read: () => Promise<T>): Promise<T | typeof unknown> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch {
      if (attempt >= ATTEMPTS) return unknown;
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS * attempt));
    }
  }
}
