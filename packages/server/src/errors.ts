import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { TRPC_ERROR_CODES_BY_KEY, type TRPC_ERROR_CODE_KEY, type TRPC_ERROR_CODE_NUMBER } from "@trpc/server/rpc";
import { TOOLPACT_ERRORS, didYouMean, isToolpactError, type ToolpactErrorCode, type ToolpactErrorData, type ValidationIssue } from "@toolpact/contract";

/** What a caller may learn about a failure: the wire's tRPC code, message and toolpact code and data. */
export interface PublicError {
  /** The tRPC code the error travels as; the HTTP status follows it. */
  readonly trpcCode: TRPC_ERROR_CODE_KEY;
  readonly message: string;
  /** Every error has one; an internal error (a bug: the server log has it) is OUTCOME_UNKNOWN. */
  readonly toolpactCode?: ToolpactErrorCode;
  readonly toolpactData?: ToolpactErrorData;
  /** True when the error was unexpected: the caller gets a generic message, the server log the details. */
  readonly internal: boolean;
}

/** The generic message of an unexpected error; nothing about its cause reaches the caller. */
export const INTERNAL_ERROR_MESSAGE =
  "internal server error: the request failed unexpectedly, so whether it had an effect is unknown; the server log has the details. " +
  "Look the call up by its operation id (tools.operation) or retry with the same idempotency key";

/** What an internal error is on the wire: it may have happened after an effect, as the client assumes of any unknown failure. */
const INTERNAL_ERROR: PublicError = Object.freeze({
  trpcCode: "INTERNAL_SERVER_ERROR",
  message: INTERNAL_ERROR_MESSAGE,
  toolpactCode: "OUTCOME_UNKNOWN",
  toolpactData: Object.freeze({}),
  internal: true,
});

/** tRPC's own protocol-level failures that a body fixes: they travel as INPUT_INVALID with their own status. */
const BODY_PROTOCOL_CODES: ReadonlySet<TRPC_ERROR_CODE_KEY> = new Set(["PARSE_ERROR", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"]);

/** tRPC's own failures to route a request (no such procedure, wrong method): INPUT_INVALID with their own status. */
const ROUTING_PROTOCOL_CODES: ReadonlySet<TRPC_ERROR_CODE_KEY> = new Set(["NOT_FOUND", "METHOD_NOT_SUPPORTED", "CLIENT_CLOSED_REQUEST"]);

/** Where a failed request was going: the procedure path it named, and the paths the router has. */
export interface RequestRoute {
  readonly path: string | undefined;
  readonly procedures: () => Iterable<string>;
}

/**
 * The one mapping from anything thrown at the server boundary to what the caller sees.
 * A ToolpactError keeps its code, message and data; a request body that fails the procedure's
 * schema, is not JSON, or is too large becomes INPUT_INVALID; so does a request tRPC cannot route
 * (an unknown procedure, with "did you mean" when `route` names a close one, or a wrong method), with
 * tRPC's code and status; anything else is internal: OUTCOME_UNKNOWN with a generic message.
 */
export function toPublicError(error: unknown, route?: RequestRoute): PublicError {
  const toolpact = findToolpactError(error);
  if (toolpact) {
    return {
      trpcCode: TOOLPACT_ERRORS[toolpact.code],
      message: toolpact.message,
      toolpactCode: toolpact.code,
      toolpactData: toolpact.data,
      internal: false,
    };
  }
  if (error instanceof TRPCError) {
    if (error.code === "BAD_REQUEST") {
      const issues = issuesOf(error.cause);
      if (issues) {
        return {
          trpcCode: "BAD_REQUEST",
          message: `request body is invalid: ${issues.map((i) => `${i.path || "/"}: ${i.message}`).join("; ")}`,
          toolpactCode: "INPUT_INVALID",
          toolpactData: { issues },
          internal: false,
        };
      }
      return bodyError("BAD_REQUEST", "request is malformed: send a JSON body as tRPC's httpLink does");
    }
    if (BODY_PROTOCOL_CODES.has(error.code)) return bodyError(error.code, bodyMessage(error.code));
    if (ROUTING_PROTOCOL_CODES.has(error.code)) return bodyError(error.code, routingMessage(error.code, route));
  }
  return INTERNAL_ERROR;
}

/** The `data` of a toolpact error on the wire: tRPC's own fields plus `toolpactCode` and `toolpactData`. */
export interface ErrorShapeData {
  readonly code: TRPC_ERROR_CODE_KEY;
  readonly httpStatus: number;
  readonly path?: string;
  readonly toolpactCode?: ToolpactErrorCode;
  readonly toolpactData?: ToolpactErrorData;
}

/** A tRPC error shape as it travels in the response body's `error`. */
export interface ErrorShape {
  readonly message: string;
  readonly code: TRPC_ERROR_CODE_NUMBER;
  readonly data: ErrorShapeData;
}

const HTTP_STATUS = new Map<TRPC_ERROR_CODE_KEY, number>(
  (Object.keys(TRPC_ERROR_CODES_BY_KEY) as TRPC_ERROR_CODE_KEY[]).map((code) => [code, getHTTPStatusCodeFromError(new TRPCError({ code }))]),
);

/** The HTTP status a tRPC code travels with. */
export function httpStatusOf(code: TRPC_ERROR_CODE_KEY): number {
  return HTTP_STATUS.get(code) ?? 500;
}

/** The wire shape of a public error; tRPC's response status follows `data.httpStatus`. */
export function toErrorShape(error: PublicError, path?: string): ErrorShape {
  const data: ErrorShapeData = {
    code: error.trpcCode,
    httpStatus: httpStatusOf(error.trpcCode),
    ...(path === undefined ? {} : { path }),
    ...(error.toolpactCode === undefined ? {} : { toolpactCode: error.toolpactCode, toolpactData: error.toolpactData ?? {} }),
  };
  return { message: error.message, code: TRPC_ERROR_CODES_BY_KEY[error.trpcCode], data };
}

/** The class name and stack frames of an unexpected error, for the server log; never its message. */
export function describeInternalError(error: unknown): { errorClass: string; frames: string[] } {
  const cause = error instanceof TRPCError && error.cause ? error.cause : error;
  const errorClass = cause instanceof Error ? cause.constructor.name || cause.name : typeof cause;
  const stack = cause instanceof Error && typeof cause.stack === "string" ? cause.stack : "";
  const frames = stack
    .split("\n")
    .filter((line) => /^\s+at /.test(line))
    .map((line) => line.trim())
    .slice(0, 12);
  return { errorClass, frames };
}

function findToolpactError(error: unknown) {
  if (isToolpactError(error)) return error;
  if (error instanceof TRPCError && isToolpactError(error.cause)) return error.cause;
  return undefined;
}

/** INPUT_INVALID with tRPC's own code (and so its HTTP status), for a request that a caller must fix. */
function bodyError(trpcCode: TRPC_ERROR_CODE_KEY, message: string): PublicError {
  return {
    trpcCode,
    message,
    toolpactCode: "INPUT_INVALID",
    toolpactData: { issues: [{ path: "", message }] },
    internal: false,
  };
}

function bodyMessage(code: TRPC_ERROR_CODE_KEY): string {
  switch (code) {
    case "PAYLOAD_TOO_LARGE":
      return "request body is larger than the server's limit: send a smaller input";
    case "UNSUPPORTED_MEDIA_TYPE":
      return "request body has an unsupported content type: send application/json";
    default:
      return "request body is not valid JSON";
  }
}

function routingMessage(code: TRPC_ERROR_CODE_KEY, route: RequestRoute | undefined): string {
  switch (code) {
    case "NOT_FOUND": {
      const path = route?.path;
      const hint = path === undefined || route === undefined ? "" : didYouMean(path.slice(0, 200), route.procedures());
      const named = `no such procedure${path === undefined ? "" : ` ${JSON.stringify(path.slice(0, 200))}`} on this server`;
      return hint === "" ? `${named}: check the path and the server's version` : `${named}${hint}`;
    }
    case "METHOD_NOT_SUPPORTED":
      return "wrong HTTP method for this procedure: queries use GET, mutations POST";
    default:
      return "the client closed the request";
  }
}

/** Issues of a schema failure (zod or any Standard Schema), with paths as JSON Pointers. */
function issuesOf(cause: unknown): ValidationIssue[] | undefined {
  const raw = (cause as { issues?: unknown } | undefined)?.issues;
  if (!Array.isArray(raw)) return undefined;
  return raw.map((issue: { path?: readonly unknown[]; message?: unknown; code?: unknown; keys?: unknown }) => ({
    path: pointer(issue.path ?? []),
    message: issueMessage(issue),
  }));
}

function issueMessage(issue: { message?: unknown; code?: unknown; keys?: unknown }): string {
  if (issue.code === "unrecognized_keys" && Array.isArray(issue.keys)) {
    return `unknown key${issue.keys.length === 1 ? "" : "s"} ${issue.keys.map((k) => JSON.stringify(String(k))).join(", ")}: this procedure takes no such field (actor, tenant and caller come from the request's credentials, never from the body)`;
  }
  return typeof issue.message === "string" ? issue.message : "invalid value";
}

function pointer(path: readonly unknown[]): string {
  return path
    .map((segment) => {
      const key = typeof segment === "object" && segment !== null && "key" in segment ? (segment as { key: unknown }).key : segment;
      return "/" + String(key).replaceAll("~", "~0").replaceAll("/", "~1");
    })
    .join("");
}
