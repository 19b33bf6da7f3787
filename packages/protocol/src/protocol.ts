/** Effect classes of RFC 0047: what a tool may do to the world. */
export const EFFECTS = ["read", "write", "external"] as const;
/** One of EFFECTS. */
export type Effect = (typeof EFFECTS)[number];

/** Names a tool: the RFC's ToolRef. `version` defaults to the highest declared. */
export interface ToolRef {
  readonly providerId: string;
  readonly tool: string;
  readonly version?: number;
}

/** What preview tells the caller about confirmation. */
export type ConfirmationInfo =
  | { readonly required: false }
  | { readonly required: true; readonly mode: "token"; readonly token: string; readonly expiresAt: string }
  | {
      readonly required: true;
      readonly mode: "platform";
      readonly requestId: string;
      readonly confirmUrl: string;
      readonly expiresAt: string;
    };

/** A provider's structured preview. */
export interface PreviewSummary {
  readonly summary: string;
  readonly details?: unknown;
}

/** The answer to `tools.preview`. */
export interface PreviewResult {
  readonly summary: string;
  readonly details: unknown;
  readonly confirmation: ConfirmationInfo;
}

/** The answer to `tools.execute`. */
export interface ExecuteResult<TOutput = unknown> {
  readonly operationId: string;
  readonly result: TOutput;
}

/** Options of `tools.preview`. */
export interface PreviewOptions {
  readonly runId?: string;
}

/** Options of `tools.execute`. */
export interface ExecuteOptions {
  readonly confirmationToken?: string;
  readonly idempotencyKey?: string;
  readonly runId?: string;
}

/** The state of a platform-mode confirmation request, as the caller sees it. */
export type ConfirmationStatus =
  | { readonly status: "pending"; readonly expiresAt: string }
  | { readonly status: "approved"; readonly token: string; readonly expiresAt: string }
  | { readonly status: "denied" }
  | { readonly status: "expired" }
  | { readonly status: "cancelled" };

/** The actor a call acts for, as providers see it. */
export interface ActorInfo {
  readonly userId: string;
  readonly verificationLevel: number;
  readonly roles: readonly string[];
}

/** Runtime-made, frozen context handed to `preview` and `authorize`. */
export interface ToolCallContext {
  readonly tenantId: string;
  readonly actor: ActorInfo;
  readonly callerPluginId: string;
  /** The tool's full name, `<pluginId>:<name>@<version>`. */
  readonly tool: string;
  readonly effect: Effect;
  readonly phase: "preview" | "execute";
  readonly signal: AbortSignal;
  /**
   * The W3C `traceparent` of the trace this invocation runs in: the span toolpact made for it when an
   * OpenTelemetry SDK is registered, else the caller's own, passed through. Send it on (as the `traceparent`
   * header of a request the provider makes) to continue the trace; absent when the call carries none.
   */
  readonly traceparent?: string;
  /** The W3C `tracestate` that goes with `traceparent`, when there is one. */
  readonly tracestate?: string;
}

/** Runtime-made, frozen context handed to `execute`: adds the durable operation id. */
export interface ToolExecuteContext extends ToolCallContext {
  readonly phase: "execute";
  /** UUIDv7 assigned before invocation; use it as the idempotency key of outbound effects. */
  readonly operationId: string;
}

/** The answer of a provider's `authorize`: true allows; false or `{ allowed: false }` denies. */
export type AuthorizeDecision = boolean | { readonly allowed: boolean; readonly reason?: string };

/** What a provider registers for one tool. Only `execute` is required. */
export interface ToolHandler<TInput = unknown, TOutput = unknown> {
  preview?(input: TInput, ctx: ToolCallContext): PreviewSummary | Promise<PreviewSummary>;
  execute(input: TInput, ctx: ToolExecuteContext): TOutput | Promise<TOutput>;
  authorize?(input: TInput, ctx: ToolCallContext): AuthorizeDecision | Promise<AuthorizeDecision>;
}

/** A provider's results may name the resource they touched; the activity log records it. */
export interface TargetedResult {
  readonly targetId?: string;
}

/** Handlers for several tools of one provider, as `sdk.tools.provideAll` takes them (made by generated `define<Alias>Provider`). */
export interface ProviderDefinition {
  readonly providerId: string;
  readonly tools: readonly {
    readonly name: string;
    readonly version: number;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    readonly handler: ToolHandler<any, any>;
  }[];
}

/**
 * How callers and generated clients reach a runtime: over HTTP (`createHttpTransport` in
 * `@toolpact/client`) or in process (`createInProcessTransport` in `@toolpact/server`).
 * Every method rejects with a `ToolpactError` carrying the runtime's code and data.
 */
export interface ToolTransport {
  preview(ref: ToolRef, input: unknown, options?: PreviewOptions): Promise<PreviewResult>;
  execute(ref: ToolRef, input: unknown, options?: ExecuteOptions): Promise<ExecuteResult>;
  /**
   * One long-poll round on a platform-mode confirmation request: resolves as soon as the request is
   * decided, or with `pending` after the server's wait limit (~25 s); callers loop while pending.
   */
  waitForConfirmation(requestId: string, options?: { readonly signal?: AbortSignal }): Promise<ConfirmationStatus>;
}

/** A copy of a ref with only the fields a ToolRef has (`version` only when given): what transports send. */
export function toolRefOf(ref: { readonly providerId: string; readonly tool: string; readonly version?: number | undefined }): ToolRef {
  return ref.version === undefined ? { providerId: ref.providerId, tool: ref.tool } : { providerId: ref.providerId, tool: ref.tool, version: ref.version };
}
