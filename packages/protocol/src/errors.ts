/**
 * Every failure toolpact reports, with the tRPC code it travels as.
 * One line per code says when it happens.
 */
export const TOOLPACT_ERRORS = {
  /** The caller or actor could not be authenticated: missing, forged, expired or mismatched credentials. */
  UNAUTHENTICATED: "UNAUTHORIZED",
  /** The provider plugin is not installed for this tenant. */
  PROVIDER_NOT_FOUND: "NOT_FOUND",
  /** The provider does not declare a tool with this name. */
  TOOL_NOT_FOUND: "NOT_FOUND",
  /** The tool exists but not in the requested version. */
  VERSION_UNSUPPORTED: "NOT_FOUND",
  /** The provider plugin is installed but disabled for this tenant. */
  PROVIDER_DISABLED: "FORBIDDEN",
  /** The calling plugin is disabled for this tenant. */
  CALLER_DISABLED: "FORBIDDEN",
  /** The tool is declared but its provider registered no handler for it: fail closed. */
  HANDLER_MISSING: "NOT_IMPLEMENTED",
  /** Policy, the caller's permissions or `uses`, or the provider's `authorize` refused the call. */
  PERMISSION_DENIED: "FORBIDDEN",
  /** The actor's verification level is below what the tool or policy requires. */
  VERIFICATION_REQUIRED: "FORBIDDEN",
  /** A gate of an activated plugin blocked the call. */
  GATE_BLOCKED: "FORBIDDEN",
  /** The call is outside its run's allow list, or the run is closed, expired or belongs to someone else. */
  RUN_DENIED: "FORBIDDEN",
  /** The input does not match the tool's inputSchema, or is not JSON; `issues` lists every problem. */
  INPUT_INVALID: "BAD_REQUEST",
  /** The provider's result does not match outputSchema; the effect ran, the result is withheld. */
  OUTPUT_INVALID: "INTERNAL_SERVER_ERROR",
  /** The call needs a confirmation token and none was given: preview first. */
  CONFIRMATION_REQUIRED: "PRECONDITION_FAILED",
  /** The confirmation token is malformed, forged, or signed with an unknown key. */
  CONFIRMATION_INVALID: "BAD_REQUEST",
  /** The confirmation token or request has expired: preview again. */
  CONFIRMATION_EXPIRED: "PRECONDITION_FAILED",
  /** The token was issued for another input, tool, version, schema, actor, caller, tenant, mode or run. */
  CONFIRMATION_MISMATCH: "PRECONDITION_FAILED",
  /** The token was already used; the bound caller learns the operation id. */
  CONFIRMATION_USED: "CONFLICT",
  /** The user denied the confirmation request, or the caller cancelled it. */
  CONFIRMATION_DENIED: "FORBIDDEN",
  /** A plugin tried to provide a tool, gate, hook or guard its manifest does not declare. */
  CAPABILITY_UNDECLARED: "FORBIDDEN",
  /** A plugin provided a declared tool, gate, hook or guard in an unusable form (not a function, unreadable) or twice. */
  HANDLER_INVALID: "INTERNAL_SERVER_ERROR",
  /** A guard withheld the output; the effect ran, the error carries the operation id. */
  GUARD_REJECTED: "FORBIDDEN",
  /** The idempotency key was used before with a different input. */
  IDEMPOTENCY_CONFLICT: "CONFLICT",
  /** An operation with this idempotency key is still running. */
  OPERATION_IN_PROGRESS: "CONFLICT",
  /** The provider threw; its message is not forwarded, only its error class. */
  PROVIDER_FAILED: "INTERNAL_SERVER_ERROR",
  /** The effect may or may not have happened (timeout, lost commit); recovery settles it. */
  OUTCOME_UNKNOWN: "INTERNAL_SERVER_ERROR",
  /** The client never sent the request (no connection, unknown host, bad client options), or what answered is not toolpact and proves nothing ran there; nothing ran. */
  REQUEST_NOT_SENT: "SERVICE_UNAVAILABLE",
  /** Too many previews or pending confirmations for this caller and actor. */
  RATE_LIMITED: "TOO_MANY_REQUESTS",
  /** The store could not be reached; nothing ran. */
  STORE_UNAVAILABLE: "SERVICE_UNAVAILABLE",
  /** The runtime is shutting down or was closed; nothing ran. */
  SHUTTING_DOWN: "SERVICE_UNAVAILABLE",
  /** What the call was checked against (the tenant's config, a token or idempotency record) kept changing meanwhile; nothing ran. */
  CONCURRENT_CHANGE: "CONFLICT",
  /** A record the store kept is damaged (it does not decrypt, or names no valid tool): the server cannot use it. */
  STORED_DATA_DAMAGED: "INTERNAL_SERVER_ERROR",
  /** A manifest failed validation; the diagnostics say where. */
  MANIFEST_INVALID: "BAD_REQUEST",
} as const;

/** A toolpact error code. */
export type ToolpactErrorCode = keyof typeof TOOLPACT_ERRORS;

/** The tRPC error code a toolpact code travels as. */
export type TrpcErrorCodeName = (typeof TOOLPACT_ERRORS)[ToolpactErrorCode];

/** One problem with an input or output value, at a JSON Pointer path. */
export interface ValidationIssue {
  readonly path: string;
  readonly message: string;
}

/** Structured data carried by a ToolpactError; safe to send to the caller. */
export interface ToolpactErrorData {
  readonly tool?: string;
  readonly operationId?: string;
  readonly issues?: readonly ValidationIssue[];
  readonly errorClass?: string;
  readonly retryAfterMs?: number;
  readonly requestId?: string;
  /** The OAuth scope the call needs and the access token lacks (`tools:write`, ...): ask for it (step-up). */
  readonly requiredScope?: string;
}

/** Every toolpact error code, in table order. */
export const TOOLPACT_ERROR_CODES: readonly ToolpactErrorCode[] = Object.freeze(Object.keys(TOOLPACT_ERRORS) as ToolpactErrorCode[]);

const CODES = new Set<string>(TOOLPACT_ERROR_CODES);

/** True when `code` is one of toolpact's error codes. */
export function isToolpactErrorCode(code: unknown): code is ToolpactErrorCode {
  return typeof code === "string" && CODES.has(code);
}

/** What to do about each code, in a few words: the last line a person reads before acting. */
const WHAT_TO_DO: { readonly [TCode in ToolpactErrorCode]: string } = {
  UNAUTHENTICATED: "check the plugin key and the actor token (issued for this tenant and plugin, not expired)",
  PROVIDER_NOT_FOUND: "install the provider plugin for this tenant, or fix the provider id",
  TOOL_NOT_FOUND: "fix the tool name, or regenerate the client from the provider's current manifest",
  VERSION_UNSUPPORTED: "call a version the provider declares, or regenerate the client",
  PROVIDER_DISABLED: "ask the tenant admin to enable the provider plugin",
  CALLER_DISABLED: "ask the tenant admin to enable this plugin",
  HANDLER_MISSING: "the provider must register an execute handler for every tool it declares",
  PERMISSION_DENIED: "the tenant's policy, this plugin's `uses` or the provider refused: change the policy or call something else",
  VERIFICATION_REQUIRED: "the user must verify to a higher level first",
  GATE_BLOCKED: "a gate refused the call; its reason is in the message",
  RUN_DENIED: "call within the run's allow list, or open a new run",
  INPUT_INVALID: "fix the input: data.issues lists every problem",
  OUTPUT_INVALID: "the tool ran but its result broke its outputSchema: do not retry; fix the provider",
  CONFIRMATION_REQUIRED: "preview, confirm, then execute with the confirmation token",
  CONFIRMATION_INVALID: "pass the token confirm returned, unchanged",
  CONFIRMATION_EXPIRED: "preview again and have the user decide in time",
  CONFIRMATION_MISMATCH: "execute exactly what was previewed (same input, tool, version, user, run), or preview again",
  CONFIRMATION_USED: "a token runs one call: preview again for another",
  CONFIRMATION_DENIED: "nothing ran; preview again only if the user should decide once more",
  CAPABILITY_UNDECLARED: "declare it in plugin.json, or remove it",
  HANDLER_INVALID: "provide each declared tool once as an object with an execute(input, ctx) function, each gate, hook or guard once as a function",
  GUARD_REJECTED: "the tool ran but its result is withheld: do not retry",
  IDEMPOTENCY_CONFLICT: "use a new idempotency key for a different input",
  OPERATION_IN_PROGRESS: "wait, then retry with the same idempotency key",
  PROVIDER_FAILED: "the provider threw: see its logs; retry only if the tool is safe to repeat",
  OUTCOME_UNKNOWN: "look the operation up (tools.operation), or retry with the same idempotencyKey; do not retry blindly",
  REQUEST_NOT_SENT: "nothing ran: fix the cause (server down, wrong url, bad option) and call again",
  RATE_LIMITED: "retry after data.retryAfterMs",
  STORE_UNAVAILABLE: "nothing ran: retry once the server's database is back",
  SHUTTING_DOWN: "nothing ran: retry against another instance, or once the server is back",
  CONCURRENT_CHANGE: "nothing ran: retry (the same idempotency key is safe)",
  STORED_DATA_DAMAGED: "do not retry: the server's operator must check its storage key and database (this record cannot be read)",
  MANIFEST_INVALID: "fix plugin.json where the diagnostics point",
};

/** Stack frames kept in a ToolpactError's printed stack (a transport failure's own trace is on `cause`). */
const PRINTED_FRAMES = 3;

/** The one error class toolpact throws and returns. */
export class ToolpactError extends Error {
  override readonly name = "ToolpactError";
  readonly code: ToolpactErrorCode;
  readonly data: ToolpactErrorData;

  constructor(code: ToolpactErrorCode, message: string, data: ToolpactErrorData = {}, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.data = data;
    // Node prints an uncaught error as its stack, its own fields and its cause (util.inspect, no custom hook):
    // a short stack that names the code, what to do and the ids keeps that print to a few lines. The frames
    // come from a trace of their own, formatted only when someone reads the stack (V8; elsewhere the stack
    // stays the engine's).
    const capture = (Error as { captureStackTrace?: (target: object, constructorOpt?: unknown) => void }).captureStackTrace;
    if (typeof capture === "function") {
      const trace: { stack?: unknown } = {};
      capture(trace, new.target);
      Object.defineProperty(this, "stack", {
        configurable: true,
        enumerable: false,
        get: () => printedStack(this, trace.stack),
        set: (value: unknown) => Object.defineProperty(this, "stack", { value, writable: true, configurable: true, enumerable: false }),
      });
    }
  }

  /** What to do about this error, in a few words. */
  get whatToDo(): string {
    return WHAT_TO_DO[this.code];
  }

  /** The tRPC code this error travels as. */
  get trpcCode(): TrpcErrorCodeName {
    return TOOLPACT_ERRORS[this.code];
  }
}

/**
 * True only for a real ToolpactError instance. An error that merely carries the name and a code (a
 * provider's forgery, say) is not one: its message and data never pass for toolpact's own.
 */
export function isToolpactError(value: unknown): value is ToolpactError {
  return value instanceof ToolpactError;
}

/** `ToolpactError [CODE]: message`, what to do, the ids it carries, and the first frames. */
function printedStack(error: ToolpactError, original: unknown): string {
  const lines = [`ToolpactError [${error.code}]: ${error.message}`, `    what to do: ${WHAT_TO_DO[error.code]}`];
  const { operationId, requestId, tool } = error.data;
  if (tool !== undefined) lines.push(`    tool: ${tool}`);
  if (operationId !== undefined) lines.push(`    operation: ${operationId}`);
  if (requestId !== undefined) lines.push(`    confirmation request: ${requestId}`);
  if (typeof original === "string") {
    lines.push(
      ...original
        .split("\n")
        .filter((line) => /^\s+at /.test(line))
        .slice(0, PRINTED_FRAMES),
    );
  }
  return lines.join("\n");
}
