/**
 * The shape of ids a caller hands back (operation, confirmation request, run) and of idempotency keys,
 * checked before any store query: a malformed one is INPUT_INVALID naming the field, never a store error
 * (PostgreSQL refuses a NUL in text, for one).
 */
import { ID_MAX_LENGTH, IDEMPOTENCY_KEY_MAX_LENGTH, ToolpactError } from "@toolpact/contract";

/** Ids the runtime issues (UUIDs) fit this; so do the short names tests and older hosts used. */
const ID = new RegExp(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,${ID_MAX_LENGTH - 1}}$`);
/** A caller chooses its idempotency keys: visible ASCII, no spaces or control characters. */
const IDEMPOTENCY_KEY = new RegExp(`^[\\x21-\\x7E]{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}$`);

/** The request fields that carry an id a caller supplies. */
export type CallerIdField = "operationId" | "requestId" | "runId" | "idempotencyKey" | "keyId" | "taskId" | "grantId";

/** True for an id of the shape the runtime issues (operation, confirmation request, run). */
export function isIssuedId(value: unknown): value is string {
  return typeof value === "string" && ID.test(value);
}

/** @throws ToolpactError INPUT_INVALID naming `field` when `value` is not an id of its shape. */
export function checkCallerId(field: CallerIdField, value: unknown): asserts value is string {
  const key = field === "idempotencyKey";
  if (typeof value === "string" && (key ? IDEMPOTENCY_KEY : ID).test(value)) return;
  const shape = key
    ? `1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters (no spaces or control characters)`
    : `an id as this server issued it: 1 to ${ID_MAX_LENGTH} letters, digits, '.', '_', ':' or '-'`;
  throw new ToolpactError("INPUT_INVALID", `${field} is malformed: it must be ${shape}`, { issues: [{ path: `/${field}`, message: `must be ${shape}` }] });
}

/** Checks the ids in a preview's or execute's options, when given. */
export function checkCallOptions(options: { readonly runId?: unknown; readonly idempotencyKey?: unknown } | undefined): void {
  if (options?.runId !== undefined) checkCallerId("runId", options.runId);
  if (options?.idempotencyKey !== undefined) checkCallerId("idempotencyKey", options.idempotencyKey);
}
