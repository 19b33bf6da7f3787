import type { ExecuteOptions, ToolHandler, ToolRef } from "@toolpact/contract";
import type { CallTrace, ActivityWriter } from "../activity/call-trace.js";
import type { Principal } from "../api.js";
import type { ConfirmationBinding } from "../confirmation/binding.js";
import type { ConfirmationTokens } from "../confirmation/confirmation-tokens.js";
import type { PlatformConfirmations } from "../confirmation/platform-confirmations.js";
import type { Authenticator } from "../identity/authenticator.js";
import type { IdempotencyKeying } from "../ledger/idempotency.js";
import type { LeaseKeeper } from "../ledger/lease-keeper.js";
import type { RuntimeContext } from "../options.js";
import type { AllowDecision } from "../permission-policy.js";
import { CallAbort } from "../plugin-code/call-scope.js";
import type { PluginCodeRunner } from "../plugin-code/plugin-code-runner.js";
import type { WindowRateLimiter } from "../rate-limit.js";
import type { PluginRegistry, RegisteredPlugin, RegisteredTool } from "../registry.js";
import type { SealedPayloads } from "../sealed/sealed-payloads.js";
import type { ResolvedSeams } from "../seams.js";
import type { GrantFinder } from "../grants/find-grant.js";
import type { GrantInBegin, IdempotencyScope } from "../store/store.js";
import type { CallSpan } from "../telemetry/call-span.js";
import type { Telemetry } from "../telemetry/telemetry.js";
import { resolveSeams, type TenantConfigCache, type TenantState } from "../tenant-config.js";

/** What the steps run on: made once by `createRuntime`, shared by every call. */
export interface CallParts {
  readonly context: RuntimeContext;
  readonly registry: PluginRegistry;
  readonly tenants: TenantConfigCache;
  /** check-caller's keys: each call confirms its principal's key under the tenant config it is decided under. */
  readonly identity: Authenticator;
  readonly tokens: ConfirmationTokens;
  readonly sealed: SealedPayloads;
  readonly leases: LeaseKeeper;
  readonly confirmations: PlatformConfirmations;
  readonly pluginCode: PluginCodeRunner;
  readonly activity: ActivityWriter;
  /** verify-confirmation's grants: each user's, kept while the store's change feed vouches for them. */
  readonly grants: GrantFinder;
  readonly previewLimiter: WindowRateLimiter;
  /** Traces and metrics, when the application registered an OpenTelemetry provider (else `Telemetry.off`). */
  readonly telemetry: Telemetry;
}

/** What a call asks for, as it arrived (once its principal was authenticated). */
export interface CallRequest {
  readonly ref: ToolRef;
  /** The input as the caller sent it; validate-input makes the validated copy. */
  readonly input: unknown;
  readonly phase: "preview" | "execute";
  readonly runId: string | undefined;
  /** Execute's options (confirmation token, idempotency key); empty for a preview. */
  readonly options: ExecuteOptions;
  /** The call's span, when calls are traced. */
  readonly span?: CallSpan | undefined;
}

/** An allowing permission decision: what decide-permission hands on. */
export type Permission = AllowDecision;

/** A gate answered the call with a value (a frozen JSON copy): the provider is not invoked. */
export interface GateAnswer {
  readonly value: unknown;
  /** The gate, `<pluginId>:<name>`. */
  readonly seam: string;
}

/**
 * The policy's permission as the gates narrowed it: a new value, never the permission overwritten. With no
 * gate acting on the call it is the permission itself.
 */
export interface CallDecision {
  readonly confirm: boolean;
  /** How confirmation happens, when `confirm`. */
  readonly mode: "token" | "platform";
  /** The policy rule that asked for confirmation, when one did. */
  readonly confirmRule?: Permission["confirmRule"];
  /** The gate that asked for confirmation, `<pluginId>:<name>`, when one did. */
  readonly confirmGate?: string;
  /** A gate answered the call itself. */
  readonly answer?: GateAnswer;
}

/** The confirmation token the operation's begin consumes (single use is the store's to decide). */
export interface TokenToConsume {
  readonly tokenId: string;
  readonly consumedAt: number;
  /** The token's own expiry: the consumed id may be pruned after it. */
  readonly expiresAt: number;
}

/** The user grant whose use the operation's begin counts, in place of a confirmation token. */
export interface GrantToUse {
  readonly grant: GrantInBegin;
}

/** The operation a call runs as, once the ledger began it (or recovery took its lease over). */
export interface RunningOperation {
  readonly operationId: string;
  readonly leaseEpoch: number;
  /**
   * The idempotency record the settle gives the outcome to: the key's, found by its scope; for a resumed
   * operation, whichever record names it (`{}`: recovery does not know the key); none without a key.
   */
  readonly settles: { readonly scope?: IdempotencyScope } | undefined;
}

/** What a call learns on its way, fact by fact, each set once by the step named. */
export interface CallFacts {
  /** resolve-tool: the tenant's config the call is decided under (the begin transaction checks it is still this version). */
  readonly tenant: TenantState;
  /** resolve-tool: the provider, installed and enabled for the tenant. */
  readonly provider: RegisteredPlugin;
  /** resolve-tool: the declared tool version the ref names. */
  readonly tool: RegisteredTool;
  /** resolve-tool: the handler its provider registered. */
  readonly handler: ToolHandler;
  /** resolve-tool: the gates, hooks and guards acting on this call (cached per tenant config). */
  readonly seams: ResolvedSeams;
  /** validate-input: the frozen, validated copy, digested, checked and handed to the provider. */
  readonly input: unknown;
  /** decide-permission: the policy allows the call, confirmed in this mode or not. */
  readonly permission: Permission;
  /** apply-gates: the permission as the gates narrowed it. */
  readonly decision: CallDecision;
  /** replay-idempotent: the call's idempotency key, scoped, with its input digest (undefined without a key). */
  readonly keying: IdempotencyKeying | undefined;
  /** verify-confirmation: the confirmation token the begin consumes, or the grant whose use it counts (undefined when none is needed). */
  readonly consumes: TokenToConsume | GrantToUse | undefined;
  /** ledger or record-read (or recovery, taking its lease over): the operation the call runs as. */
  readonly operation: RunningOperation;
}

/** The name of one fact. */
export type FactName = keyof CallFacts;

/** The facts `K`, set. */
export type Facts<K extends FactName> = { readonly [P in K]: CallFacts[P] };

/** A call without the facts `K`: what a setter of `K` may be called on (each fact is set once). */
type Unset<K extends FactName> = CallBasics & { readonly [P in K]?: never };

/** What every call carries from the start. */
export interface CallGiven {
  readonly parts: CallParts;
  readonly trace: CallTrace;
  readonly principal: Principal;
  readonly ref: ToolRef;
  /** The input as the caller sent it. */
  readonly rawInput: unknown;
  readonly phase: "preview" | "execute";
  readonly runId: string | undefined;
  readonly options: ExecuteOptions;
  /** Aborts the provider's `ctx.signal` (its timeout, or the runtime closing). */
  readonly abort: CallAbort;
  /** The call's span, when calls are traced: each step's span is its child. */
  readonly span: CallSpan | undefined;
}

/**
 * A call's named methods that set its facts: each returns the same call, typed with the fact set, for the
 * step to hand on (as tRPC's `next({ ctx })` widens its context).
 */
export interface CallBasics extends CallGiven {
  /** resolve-tool: the tool the call names, of a provider installed and enabled for the tenant, with its handler. */
  resolved<C extends Unset<"tenant" | "provider" | "tool" | "handler" | "seams">>(
    this: C,
    found: { readonly tenant: TenantState; readonly provider: RegisteredPlugin; readonly tool: RegisteredTool; readonly handler: ToolHandler },
  ): C & Facts<"tenant" | "provider" | "tool" | "handler" | "seams">;
  /** validate-input accepted the validated copy. */
  accepted<C extends Unset<"input">>(this: C, input: unknown): C & Facts<"input">;
  /** decide-permission: the policy allows the call. */
  permitted<C extends Unset<"permission">>(this: C, permission: Permission): C & Facts<"permission">;
  /** apply-gates: the permission as the gates narrowed it. */
  decided<C extends Unset<"decision">>(this: C, decision: CallDecision): C & Facts<"decision">;
  /** replay-idempotent: the call's key (undefined: it carries none). */
  keyed<C extends Unset<"keying">>(this: C, keying: IdempotencyKeying | undefined): C & Facts<"keying">;
  /** verify-confirmation: the call's token verified, for the begin to consume (undefined: none needed). */
  confirmed<C extends Unset<"consumes">>(this: C, token: TokenToConsume | GrantToUse | undefined): C & Facts<"consumes">;
  /** The ledger began the operation, or recovery took its lease over; a read recorded once made its id. */
  began<C extends Unset<"operation">>(this: C, operation: RunningOperation): C & Facts<"operation">;
}

/** A call with the facts `K` set: what a step that reads them takes. Reading any other fact does not compile. */
export type CallAt<K extends FactName> = CallBasics & Facts<K>;

/**
 * One call on its way through the steps, in one place. Every fact is a field from the start (one shape
 * for every call), written only by the setters; the steps see it through `CallAt`, which holds only the
 * facts the steps before them set.
 */
class CallState implements CallGiven {
  readonly parts: CallParts;
  readonly trace: CallTrace;
  readonly principal: Principal;
  readonly ref: ToolRef;
  readonly rawInput: unknown;
  readonly phase: "preview" | "execute";
  readonly runId: string | undefined;
  readonly options: ExecuteOptions;
  readonly abort = new CallAbort();
  readonly span: CallSpan | undefined;
  tenant: TenantState | undefined = undefined;
  provider: RegisteredPlugin | undefined = undefined;
  tool: RegisteredTool | undefined = undefined;
  handler: ToolHandler | undefined = undefined;
  seams: ResolvedSeams | undefined = undefined;
  input: unknown = undefined;
  permission: Permission | undefined = undefined;
  decision: CallDecision | undefined = undefined;
  keying: IdempotencyKeying | undefined = undefined;
  consumes: TokenToConsume | GrantToUse | undefined = undefined;
  operation: RunningOperation | undefined = undefined;

  constructor(parts: CallParts, trace: CallTrace, request: CallRequest) {
    this.parts = parts;
    this.trace = trace;
    this.principal = trace.principal;
    this.ref = request.ref;
    this.rawInput = request.input;
    this.phase = request.phase;
    this.runId = request.runId;
    this.options = request.options;
    this.span = request.span;
  }

  resolved(found: { readonly tenant: TenantState; readonly provider: RegisteredPlugin; readonly tool: RegisteredTool; readonly handler: ToolHandler }): this {
    this.tenant = found.tenant;
    this.provider = found.provider;
    this.tool = found.tool;
    this.handler = found.handler;
    this.seams = resolveSeams(found.tenant, this.parts.registry, found.tool);
    return this;
  }

  accepted(input: unknown): this {
    this.input = input;
    return this;
  }

  permitted(permission: Permission): this {
    this.permission = permission;
    return this;
  }

  decided(decision: CallDecision): this {
    this.decision = decision;
    return this;
  }

  keyed(keying: IdempotencyKeying | undefined): this {
    this.keying = keying;
    return this;
  }

  confirmed(token: TokenToConsume | GrantToUse | undefined): this {
    this.consumes = token;
    if (token === undefined) return this;
    if ("grant" in token) this.trace.grantedBy(token.grant.grantId);
    else this.trace.confirmedBy(token.tokenId);
    return this;
  }

  began(operation: RunningOperation): this {
    this.operation = operation;
    return this;
  }
}

/** A new call, with no fact set yet. */
export function startCall(parts: CallParts, trace: CallTrace, request: CallRequest): CallAt<never> {
  // The one place the state is seen as a call: the setters' types say what each adds.
  return new CallState(parts, trace, request) as unknown as CallAt<never>;
}

/** What a call learned so far, for its telemetry: any fact may be missing (it may have been refused before). */
export function factsSoFar(call: CallAt<never>): Partial<CallFacts> {
  // The state holds every fact as a field (undefined until set).
  return call as unknown as Partial<CallFacts>;
}

/** What a confirmation of this call is bound to, in the mode its decision says. */
export function bindingOf(call: CallAt<"tool" | "input" | "decision">): ConfirmationBinding {
  const { principal, tool } = call;
  return {
    tenantId: principal.tenantId,
    actorUserId: principal.actor.userId,
    callerPluginId: principal.callerPluginId,
    providerId: tool.providerId,
    tool: tool.declaration.name,
    version: tool.declaration.version,
    schemaHash: tool.schemaHash,
    effect: tool.declaration.effect,
    mode: call.decision.mode,
    ...(call.runId === undefined ? {} : { runId: call.runId }),
    input: call.input,
  };
}
