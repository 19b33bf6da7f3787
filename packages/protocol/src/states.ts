/**
 * The states an operation and a platform confirmation request go through: one home, from which the
 * runtime's types, its store refusals and (checked by a test) both stores' SQL CHECK lists derive.
 */
import type { ConfirmationStatus } from "./protocol.js";

/** An operation's states: it begins `running` and settles once, in one of the other three. */
export const OPERATION_STATES = Object.freeze(["running", "succeeded", "failed", "unknown"] as const);
/** The state of an operation. */
export type OperationState = (typeof OPERATION_STATES)[number];

/** The states an operation may settle in (from `running`, once). */
export const SETTLED_OPERATION_STATES = Object.freeze(["succeeded", "failed", "unknown"] as const satisfies readonly OperationState[]);
/** A settled operation's state. */
export type SettledOperationState = (typeof SETTLED_OPERATION_STATES)[number];

/** A platform confirmation request's states: it opens `pending` and is decided, expires or is cancelled once. */
export const CONFIRMATION_STATES = Object.freeze(["pending", "approved", "denied", "expired", "cancelled"] as const);
/** The state of a platform confirmation request. */
export type ConfirmationState = (typeof CONFIRMATION_STATES)[number];

/** True when `value` is one of `states` (narrowing a stored string to its state type). */
export function isStateOf<TState extends string>(states: readonly TState[], value: unknown): value is TState {
  return typeof value === "string" && (states as readonly string[]).includes(value);
}

// What the caller sees (`ConfirmationStatus`) names exactly these states: a state added here without its
// status there (or the other way round) does not compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const STATUS_NAMES_ARE_THE_STATES: Same<ConfirmationStatus["status"], ConfirmationState> = true;
void STATUS_NAMES_ARE_THE_STATES;
