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
import type { PermissionDecision } from "../permission-policy.js";
import { CallAbort, type ScopeOwner } from "../plugin-code/call-scope.js";
import type { PluginCodeRunner } from "../plugin-code/plugin-code-runner.js";
import type { WindowRateLimiter } from "../rate-limit.js";
import type { PluginRegistry, RegisteredPlugin, RegisteredTool } from "../registry.js";
import type { SealedPayloads } from "../sealed/sealed-payloads.js";
import type { ResolvedSeams } from "../seams.js";
import type { IdempotencyScope } from "../store/store.js";
import { resolveSeams, type TenantConfigCache, type TenantState } from "../tenant-config.js";

/** What the steps run on: made once by `createRuntime`, shared by every call. */
export interface CallParts {
  readonly context: RuntimeContext;
  readonly registry: PluginRegistry;
  readonly tenants: TenantConfigCache;
  /** Step 1's keys: each call confirms its principal's key under the tenant config it is decided under. */
  readonly identity: Authenticator;
  readonly tokens: ConfirmationTokens;
  readonly sealed: SealedPayloads;
  readonly leases: LeaseKeeper;
  readonly confirmations: PlatformConfirmations;
  readonly pluginCode: PluginCodeRunner;
  readonly activity: ActivityWriter;
  readonly previewLimiter: WindowRateLimiter;
}

/** What a call asks for, as it arrived (after step 1). */
export interface CallRequest {
  readonly ref: ToolRef;
  /** The input as the caller sent it; step 4 makes the validated copy. */
  readonly input: unknown;
  readonly phase: "preview" | "execute";
  readonly runId: string | undefined;
  /** Execute's options (confirmation token, idempotency key); empty for a preview. */
  readonly options: ExecuteOptions;
}

/** An allowing permission decision: what step 5 hands on. */
export type Permission = Extract<PermissionDecision, { kind: "allow" }>;

/** A gate answered the call with a value (a frozen JSON copy): the provider is not invoked. */
export interface GateAnswer {
  readonly value: unknown;
  /** The gate, `<pluginId>:<name>`. */
  readonly seam: string;
}

/** The confirmation token the operation's begin consumes (single use is the store's to decide). */
export interface TokenToConsume {
  readonly tokenId: string;
  readonly consumedAt: number;
  /** The token's own expiry: the consumed id may be pruned after it. */
  readonly expiresAt: number;
}

/** The operation a call runs as, once the ledger began it (or recovery took its lease over). */
export interface RunningOperation {
  readonly operationId: string;
  readonly leaseEpoch: number;
}

/**
 * One call on its way through the steps: what it asked for, and what the steps found out about it, in
 * one place. Each fact is set by the step that decides it, through the named methods below, and read by
 * the steps after; reading a fact before its step ran is a bug in the chain, and throws.
 */
export class Call {
  readonly parts: CallParts;
  readonly trace: CallTrace;
  readonly principal: Principal;
  readonly ref: ToolRef;
  readonly rawInput: unknown;
  readonly phase: "preview" | "execute";
  readonly runId: string | undefined;
  readonly options: ExecuteOptions;
  /** Aborts the provider's `ctx.signal` (its timeout, or the runtime closing). */
  readonly abort = new CallAbort();
  #tenant: TenantState | undefined;
  #provider: RegisteredPlugin | undefined;
  #tool: RegisteredTool | undefined;
  #handler: ToolHandler | undefined;
  #input: unknown;
  #inputAccepted = false;
  #permission: Permission | undefined;
  #seams: ResolvedSeams | undefined;
  #gateAnswer: GateAnswer | undefined;
  #keying: IdempotencyKeying | undefined;
  #consumes: TokenToConsume | undefined;
  #operation: RunningOperation | undefined;
  #resumed = false;

  constructor(parts: CallParts, trace: CallTrace, request: CallRequest) {
    this.parts = parts;
    this.trace = trace;
    this.principal = trace.principal;
    this.ref = request.ref;
    this.rawInput = request.input;
    this.phase = request.phase;
    this.runId = request.runId;
    this.options = request.options;
  }

  // -- step 2 ------------------------------------------------------------------------------------

  /** The tenant's config the call is decided under. */
  get tenant(): TenantState {
    return this.#tenant ?? unset("tenant");
  }

  /** Step 2 read the tenant's config (the step-9 transaction checks it is still this version). */
  decidedUnder(tenant: TenantState): void {
    this.#tenant = tenant;
  }

  get tool(): RegisteredTool {
    return this.#tool ?? unset("tool");
  }

  get handler(): ToolHandler {
    return this.#handler ?? unset("handler");
  }

  /** The tool the call names, of a provider installed and enabled for the tenant, with its handler. */
  resolved(provider: RegisteredPlugin, tool: RegisteredTool, handler: ToolHandler): void {
    this.#provider = provider;
    this.#tool = tool;
    this.#handler = handler;
  }

  /**
   * Who provider code acts for: only for providers holding `tools:call`, the only ones whose caller
   * methods can act (skipping it spares every other call the cost of async context tracking).
   */
  get providerScope(): ScopeOwner | undefined {
    const provider = this.#provider ?? unset("provider");
    if (!provider.canCall) return undefined;
    const { principal } = this;
    return { tenantId: principal.tenantId, actor: principal.actor, correlationId: principal.correlationId };
  }

  // -- steps 4 to 7 ------------------------------------------------------------------------------

  /** The frozen, validated copy: digested, checked and handed to the provider. */
  get input(): unknown {
    return this.#inputAccepted ? this.#input : unset("input");
  }

  /** Step 4 accepted the validated copy. */
  accepted(input: unknown): void {
    this.#input = input;
    this.#inputAccepted = true;
  }

  get permission(): Permission {
    return this.#permission ?? unset("permission");
  }

  /** Step 5: the policy allows the call, confirmed in this mode or not. */
  permitted(permission: Permission): void {
    this.#permission = permission;
  }

  /** The gates, hooks and guards acting on this call (resolved on first use, cached per tenant config). */
  get seams(): ResolvedSeams {
    this.#seams ??= resolveSeams(this.tenant, this.parts.registry, this.tool);
    return this.#seams;
  }

  /** A gate added a confirmation (in the mode policy decided; never removing one). */
  confirmationRequiredBy(seam: string): void {
    this.#permission = { ...this.permission, confirm: true };
    this.trace.decidedBy(seam);
  }

  /** A gate answered the call with a value instead of the provider. */
  get gateAnswer(): GateAnswer | undefined {
    return this.#gateAnswer;
  }

  /** Step 7: a gate answers the call itself. */
  answeredByGate(answer: GateAnswer): void {
    this.#gateAnswer = answer;
  }

  /** What a confirmation of this call is bound to, in the mode policy decided. */
  binding(): ConfirmationBinding {
    const { principal, tool } = this;
    return {
      tenantId: principal.tenantId,
      actorUserId: principal.actor.userId,
      callerPluginId: principal.callerPluginId,
      providerId: tool.providerId,
      tool: tool.declaration.name,
      version: tool.declaration.version,
      schemaHash: tool.schemaHash,
      effect: tool.declaration.effect,
      mode: this.permission.mode,
      ...(this.runId === undefined ? {} : { runId: this.runId }),
      input: this.input,
    };
  }

  // -- step 8 and the ledger ---------------------------------------------------------------------

  /** The call's idempotency key, scoped, with its input digest (execute with a key only). */
  get keying(): IdempotencyKeying | undefined {
    return this.#keying;
  }

  /** Step 8: the call carries an idempotency key. */
  keyed(keying: IdempotencyKeying): void {
    this.#keying = keying;
  }

  /** The confirmation token the operation's begin consumes. */
  get consumes(): TokenToConsume | undefined {
    return this.#consumes;
  }

  /** Step 8: the call's confirmation token verified; the begin consumes it. */
  confirmed(token: TokenToConsume): void {
    this.#consumes = token;
    this.trace.confirmedBy(token.tokenId);
  }

  /** The step-9 transaction answered that the tenant's config changed: the next attempt starts afresh. */
  configChanged(): void {
    this.trace.confirmedBy(undefined);
  }

  get operation(): RunningOperation {
    return this.#operation ?? unset("operation");
  }

  /**
   * The ledger began the operation (or recovery took its lease over, `resumed`); for a read recorded
   * once after its effect, the operation's id was made and nothing is stored yet.
   */
  began(operation: RunningOperation, resumed = false): void {
    this.#operation = operation;
    this.#resumed = resumed;
  }

  /**
   * The idempotency record the settle gives the outcome to: the key's, found by its scope; for a resumed
   * operation, whichever record names it (recovery does not know the key); none without a key.
   */
  get settlesRecord(): { readonly scope?: IdempotencyScope } | undefined {
    if (this.#resumed) return {};
    return this.#keying === undefined ? undefined : { scope: this.#keying.scope };
  }
}

function unset(fact: string): never {
  throw new Error(`the call's ${fact} was read before the step that decides it ran: the chain's steps are out of order`);
}
