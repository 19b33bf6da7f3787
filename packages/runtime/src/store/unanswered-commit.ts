/**
 * A write whose answer was lost: it reached the database, and then the connection broke or timed out
 * before the answer came back, so it may or may not have committed. The store throws this only after it
 * made sure the write can no longer commit later (PostgreSQL: the server session that ran it is ended),
 * so reading the rows it would have written tells which. Callers that cannot read it back see
 * STORE_UNAVAILABLE, as for any store failure.
 */
import { ToolpactError } from "@toolpact/contract";

/** The message a caller sees when nothing resolved the lost answer. */
const MESSAGE = "the store did not answer whether this change was saved; read it back before retrying";

/** A write that reached the database whose answer was lost (see the module comment). */
export class UnansweredCommit extends ToolpactError {
  /** False when the store could not make sure the write will not commit later: reading it back proves nothing then. */
  readonly settled: boolean;

  constructor(settled: boolean, options?: ErrorOptions) {
    super("STORE_UNAVAILABLE", MESSAGE, {}, options);
    this.settled = settled;
  }
}

/** True for a write whose answer was lost. */
export function isUnansweredCommit(error: unknown): error is UnansweredCommit {
  return error instanceof UnansweredCommit;
}
