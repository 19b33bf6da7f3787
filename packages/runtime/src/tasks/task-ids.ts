import { randomBytes } from "node:crypto";

/** Bytes of randomness in a task id: 192 bits, so an id cannot be guessed (and it is checked against its owner anyway). */
const TASK_ID_BYTES = 24;

/** A new task id: 48 lowercase hex characters, the shape `checkCallerId` accepts. */
export function newTaskId(): string {
  return randomBytes(TASK_ID_BYTES).toString("hex");
}
