import { isToolpactError, toolFullName } from "@toolpact/contract";
import type { ActivityConfirmation, ActivityKind, ActivityOutcome, ActivityPhase, PolicyDecisionName, Principal, ShadowOutcome } from "../api.js";
import { uuidv7 } from "../ids.js";
import type { Logger } from "../logger.js";
import type { RegisteredTool } from "../registry.js";
import type { ActivityRecord, Store } from "../store/store.js";
import { errorClassOf, outcomeOf } from "./error-class.js";

/** The fields of a call's event that its outcome sets. */
export type EventDetails = Partial<Pick<ActivityRecord, "operationId" | "errorCode" | "errorClass" | "targetId">>;

/** What an activity writer needs. */
export interface ActivityWriterOptions {
  readonly store: Store;
  readonly clock: () => number;
  readonly logger: Logger;
  /** Counts an event that could not be written (the store failed). */
  readonly onWriteFailure: () => void;
}

/** Starts the trace of each call and writes the events that are not part of an operation's settle. */
export class ActivityWriter {
  readonly #options: ActivityWriterOptions;

  constructor(options: ActivityWriterOptions) {
    this.#options = options;
  }

  /** A fresh trace for one call. */
  trace(principal: Principal, phase: ActivityPhase, kind: ActivityKind = "call"): CallTrace {
    return new CallTrace(this, { principal, phase, kind });
  }

  /** The runtime's clock (Unix ms). */
  now(): number {
    return this.#options.clock();
  }

  /** Writes one event; a failed write is logged and counted, never thrown. */
  async append(event: ActivityRecord): Promise<void> {
    try {
      await this.#options.store.appendActivity(event);
    } catch (error) {
      this.#options.onWriteFailure();
      this.#options.logger.error({ event: "activity_write_failed", errorClass: errorClassOf(error) });
    }
  }
}

/**
 * The one per-call trace: what a call found out so far (the provider, tool and version it names, the
 * confirmation it carries, the gate or guard that decided it), changed only through these methods, and
 * the activity event it becomes. Each call's event is written once: by its operation's settle, or here.
 */
export class CallTrace {
  readonly principal: Principal;
  readonly #writer: ActivityWriter;
  readonly #kind: ActivityKind;
  readonly #phase: ActivityPhase;
  readonly #started = performance.now();
  #providerId: string | undefined;
  #toolName: string | undefined;
  #version: number | undefined;
  #tool: RegisteredTool | undefined;
  #confirmationId: string | undefined;
  #grantId: string | undefined;
  #seam: string | undefined;
  #policyDecision: PolicyDecisionName | undefined;
  #confirmation: { readonly how: ActivityConfirmation; readonly by: string } | undefined;
  #idempotencyKeyHash: string | undefined;
  #recorded = false;

  constructor(writer: ActivityWriter, about: { principal: Principal; phase: ActivityPhase; kind: ActivityKind }) {
    this.#writer = writer;
    this.principal = about.principal;
    this.#phase = about.phase;
    this.#kind = about.kind;
  }

  /** The provider the call names (a well-formed plugin id). */
  namedProvider(providerId: string): void {
    this.#providerId = providerId;
  }

  /** The tool name the call names (a well-formed name). */
  namedTool(name: string): void {
    this.#toolName = name;
  }

  /** The version the call asks for, before it is known to exist. */
  namedVersion(version: number): void {
    this.#version = version;
  }

  /** The declared tool the call resolved to. */
  resolved(tool: RegisteredTool): void {
    this.#tool = tool;
    this.#version = tool.declaration.version;
  }

  /** The confirmation (token id or platform request id) the call made or carries; undefined forgets it. */
  confirmedBy(confirmationId: string | undefined): void {
    this.#confirmationId = confirmationId;
    if (confirmationId === undefined) this.#confirmation = undefined;
  }

  /** What the tenant's policy decided for the call. */
  policyDecided(decision: PolicyDecisionName): void {
    this.#policyDecision = decision;
  }

  /** How the call's confirmation was given and by which user (`confirmedBy(undefined)` forgets it with the id). */
  confirmedThrough(confirmation: { readonly how: ActivityConfirmation; readonly by: string }): void {
    this.#confirmation = confirmation;
  }

  /** The hash of the call's idempotency key. */
  keyedBy(keyHash: string): void {
    this.#idempotencyKeyHash = keyHash;
  }

  /** The user grant that authorized the call in place of a confirmation. */
  grantedBy(grantId: string | undefined): void {
    this.#grantId = grantId;
  }

  /** The gate or guard (`<pluginId>:<name>`) that decided the call's fate. */
  decidedBy(seam: string): void {
    this.#seam = seam;
  }

  /** True once the call's event was written. */
  get recorded(): boolean {
    return this.#recorded;
  }

  /** The call's event as it stands now. */
  event(outcome: ActivityOutcome, details: EventDetails = {}): ActivityRecord {
    const { principal } = this;
    const tool = this.#tool;
    const now = this.#writer.now();
    const event: Record<string, unknown> = {
      id: uuidv7(now),
      tenantId: principal.tenantId,
      at: now,
      kind: this.#kind,
      actorUserId: principal.actor.userId,
      callerPluginId: principal.callerPluginId,
      phase: this.#phase,
      outcome,
      durationMs: Math.round((performance.now() - this.#started) * 1000) / 1000,
      ...details,
    };
    const providerId = this.#providerId;
    if (providerId !== undefined) event.providerPluginId = providerId;
    if (tool !== undefined) {
      event.tool = tool.fullName;
      event.version = tool.declaration.version;
      event.effect = tool.declaration.effect;
      event.manifestVersion = tool.manifestVersion;
      event.schemaHash = tool.schemaHash;
    } else if (providerId !== undefined && this.#toolName !== undefined) {
      const version = this.#version;
      event.tool = version === undefined ? `${providerId}:${this.#toolName}` : toolFullName(providerId, this.#toolName, version);
      if (version !== undefined) event.version = version;
    }
    if (this.#confirmationId !== undefined) event.confirmationId = this.#confirmationId;
    if (this.#seam !== undefined) event.seam = this.#seam;
    if (this.#grantId !== undefined) event.grantId = this.#grantId;
    if (principal.correlationId !== undefined) event.correlationId = principal.correlationId;
    if (this.#kind === "call") event.via = principal.via ?? "in-process";
    if (this.#kind === "call" && principal.authenticatedBy !== undefined) event.authenticatedBy = principal.authenticatedBy;
    if (this.#policyDecision !== undefined) event.policyDecision = this.#policyDecision;
    if (this.#confirmation !== undefined) {
      event.confirmation = this.#confirmation.how;
      event.confirmedBy = this.#confirmation.by;
    }
    if (this.#idempotencyKeyHash !== undefined) event.idempotencyKeyHash = this.#idempotencyKeyHash;
    return event as unknown as ActivityRecord;
  }

  /** The event of an AfterTool hook that failed, committed with its operation. */
  hookFailed(hook: string, operationId: string, errorClass: string): ActivityRecord {
    return { ...this.event("failed", { operationId, errorClass }), kind: "hook", phase: "execute", seam: hook };
  }

  /**
   * Records, without waiting and apart from the call's own event, that the tenant's shadow policy decides this
   * call otherwise than the live one: `outcome` is the shadow's decision (`errorCode` its refusal's code).
   */
  shadowDisagreed(outcome: ShadowOutcome, errorCode: string | undefined): void {
    const { durationMs: _duration, via: _via, ...call } = this.event(outcome, errorCode === undefined ? {} : { errorCode });
    void this.#writer.append({ ...call, kind: "policy", phase: "shadow" });
  }

  /** The operation's settle committed the call's event. */
  committed(): void {
    this.#recorded = true;
  }

  /** Writes the call's event now (outside an operation's settle). */
  record(outcome: ActivityOutcome, details: EventDetails = {}): Promise<void> {
    this.#recorded = true;
    return this.#writer.append(this.event(outcome, details));
  }

  /**
   * Records a refused or failed call (once) and returns the error the caller gets. When the store itself
   * failed the call (STORE_UNAVAILABLE, or SHUTTING_DOWN: it is closing), its event is written without
   * waiting: the store is likely still failing, and the caller should not wait out a second timeout for a
   * record that may not be written.
   */
  async refused(error: unknown): Promise<unknown> {
    if (this.#recorded) return error;
    if (isToolpactError(error)) {
      const recording = this.record(outcomeOf(error.code), {
        errorCode: error.code,
        ...(error.data.operationId === undefined ? {} : { operationId: error.data.operationId }),
        ...(error.data.errorClass === undefined ? {} : { errorClass: error.data.errorClass }),
      });
      if (error.code !== "STORE_UNAVAILABLE" && error.code !== "SHUTTING_DOWN") await recording;
      return error;
    }
    await this.record("failed", { errorClass: errorClassOf(error) });
    return error;
  }
}
