import { ToolpactError, isToolpactError, isToolpactErrorCode, type ToolpactErrorCode, type ToolpactErrorData, type ValidationIssue } from "./errors.js";

/**
 * How a ToolpactError travels: the tRPC error's `data` carries these two fields next to tRPC's own
 * (`code`, `httpStatus`, `path`); the tRPC error's `message` is the ToolpactError's message.
 */
export interface ToolpactErrorWire {
  readonly toolpactCode: ToolpactErrorCode;
  readonly toolpactData?: ToolpactErrorData;
}

/**
 * Turns anything a transport threw into a ToolpactError: a ToolpactError stays as it is; a tRPC
 * client error whose `data.toolpactCode` is a known code keeps that code, its message and the
 * known fields of `data.toolpactData`; anything else (a network failure, a server without toolpact
 * codes) becomes `fallbackCode`, by default OUTCOME_UNKNOWN, with the original as `cause`.
 */
export function toToolpactError(error: unknown, fallbackCode: ToolpactErrorCode = "OUTCOME_UNKNOWN"): ToolpactError {
  if (isToolpactError(error)) return error;
  const wire = wireOf(error);
  if (wire) return new ToolpactError(wire.toolpactCode, messageOf(error), wire.toolpactData ?? {}, { cause: error });
  const reason = messageOf(error);
  const message =
    fallbackCode === "OUTCOME_UNKNOWN"
      ? `the call failed before toolpact answered (${reason}); whether it took effect is unknown: ` +
        "look the operation up, or retry with the same idempotencyKey"
      : `the call failed before toolpact answered (${reason})`;
  return new ToolpactError(fallbackCode, message, {}, { cause: error });
}

/** The toolpact fields of a tRPC client error (`error.data`, or `error.shape.data`), checked field by field. */
function wireOf(error: unknown): ToolpactErrorWire | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const holder = error as { data?: unknown; shape?: { data?: unknown } };
  const data = (isRecord(holder.data) ? holder.data : isRecord(holder.shape) ? holder.shape.data : undefined) as
    | { toolpactCode?: unknown; toolpactData?: unknown }
    | undefined;
  if (!isRecord(data) || !isToolpactErrorCode(data.toolpactCode)) return undefined;
  return { toolpactCode: data.toolpactCode, toolpactData: errorDataOf(data.toolpactData) };
}

/** Keeps only the fields ToolpactErrorData defines, each with its declared type. */
function errorDataOf(value: unknown): ToolpactErrorData {
  if (!isRecord(value)) return {};
  const data: {
    tool?: string;
    operationId?: string;
    issues?: readonly ValidationIssue[];
    errorClass?: string;
    retryAfterMs?: number;
    requestId?: string;
  } = {};
  if (typeof value.tool === "string") data.tool = value.tool;
  if (typeof value.operationId === "string") data.operationId = value.operationId;
  if (typeof value.errorClass === "string") data.errorClass = value.errorClass;
  if (typeof value.requestId === "string") data.requestId = value.requestId;
  if (typeof value.retryAfterMs === "number" && Number.isFinite(value.retryAfterMs)) data.retryAfterMs = value.retryAfterMs;
  if (Array.isArray(value.issues)) {
    data.issues = value.issues
      .filter((issue): issue is { path: string; message: string } => isRecord(issue) && typeof issue.path === "string" && typeof issue.message === "string")
      .map((issue) => ({ path: issue.path, message: issue.message }));
  }
  return data;
}

function messageOf(error: unknown): string {
  if (error instanceof Error && error.message) return error.message;
  if (typeof error === "string" && error) return error;
  return "no message";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
