import { randomUUID } from "node:crypto";
import {
  ID_MAX_LENGTH,
  MAX_CONFIRMATION_WAIT_MS,
  ToolpactError,
  parseToolFullName,
  toolFullName,
  type ConfirmationInfo,
  type ConfirmationStatus,
} from "@toolpact/contract";
import type { ConfirmationDecision, ConfirmationPerson, ConfirmationRequestView, GrantLimits, Principal, WaitConfirmationOptions } from "../api.js";
import { grantFromRequest, type GrantChoice } from "../grants/grant-from-request.js";
import type { RuntimeContext } from "../options.js";
import type { PluginRegistry } from "../registry.js";
import type { SealedPayloads, ShownPreview } from "../sealed/sealed-payloads.js";
import type { ConfirmationRecord, GrantRecord } from "../store/store.js";
import { boundCallOf, storedBindingOf, type ConfirmationBinding } from "./binding.js";
import type { ConfirmationTokens } from "./confirmation-tokens.js";
import { ConfirmationWaiters } from "./confirmation-waiters.js";
import { transitionRequest, type RequestChange } from "./request-transitions.js";

/** Expired requests settled per sweep step. */
const SWEEP_BATCH = 200;
/** How often a waiter reads its request anyway while the store announces every decision (a safety net), ms. */
const HEARD_POLL_MS = 10_000;

/** A platform request as a preview answers it. */
type PlatformInfo = Extract<ConfirmationInfo, { mode: "platform" }>;

/**
 * Platform-mode confirmation: requests kept in the store (preview sealed), decided by the person they are
 * for on the confirmation page, waited for by the caller that asked. Any instance answers: a decision
 * wakes waiters when the store announces it (every instance's on PostgreSQL; this process's on SQLite),
 * and waiters read the store every `confirmationPollMs` while other instances cannot be heard.
 */
export class PlatformConfirmations {
  readonly #context: RuntimeContext;
  readonly #tokens: ConfirmationTokens;
  readonly #sealed: SealedPayloads;
  readonly #registry: PluginRegistry;
  readonly #waiters = new ConfirmationWaiters();
  readonly #unsubscribe: () => void;

  constructor(parts: { context: RuntimeContext; tokens: ConfirmationTokens; sealed: SealedPayloads; registry: PluginRegistry }) {
    this.#context = parts.context;
    this.#tokens = parts.tokens;
    this.#sealed = parts.sealed;
    this.#registry = parts.registry;
    this.#unsubscribe = parts.context.store.changes.subscribe((change) => {
      if (change.kind === "confirmation") this.#waiters.wake(change);
      else if (change.kind === "resync") this.#waiters.wakeAll();
    });
  }

  /**
   * request-confirmation, in a platform-mode preview. A request still open for exactly this call (same tenant, caller,
   * actor, tool and version, schema, input digest and run; approved with an unexpired token, else pending
   * and unexpired) is answered again, whichever instance opened it: a caller retrying the same call gets
   * the same request, and once it is approved, its token. Otherwise a new request is kept (preview
   * sealed), unless the caller and actor already have too many pending. @throws RATE_LIMITED with `retryAfterMs`.
   */
  async create(binding: ConfirmationBinding, shown: Omit<ShownPreview, "input">): Promise<PlatformInfo> {
    const fullName = toolFullName(binding.providerId, binding.tool, binding.version);
    const now = this.#context.clock();
    const stored = storedBindingOf(binding, this.#tokens.digest(binding.input));
    const open = await this.#context.store.findOpenConfirmation({ ...stored, now });
    if (open !== undefined) return this.#infoOf(open);
    const requestId = randomUUID();
    const expiresAt = now + this.#context.confirmationTtlSeconds * 1000;
    let sealedPreview: Uint8Array;
    try {
      sealedPreview = this.#sealed.sealPreview(binding.tenantId, requestId, { ...shown, input: binding.input });
    } catch {
      throw new ToolpactError("PROVIDER_FAILED", `the provider's preview of ${fullName} has details that are not JSON`, {
        tool: fullName,
        errorClass: "InvalidPreview",
      });
    }
    const { runId, ...rest } = stored;
    const record: ConfirmationRecord = {
      ...rest,
      requestId,
      providerPluginId: binding.providerId,
      effect: binding.effect,
      mode: "platform",
      ...(runId === undefined ? {} : { runId }),
      status: "pending",
      createdAt: now,
      expiresAt,
      sealedPreview,
    };
    const created = await this.#context.store.createConfirmation(record, this.#context.pendingConfirmations);
    if (created.status === "rate-limited") {
      throw new ToolpactError(
        "RATE_LIMITED",
        `this caller already has ${this.#context.pendingConfirmations} confirmation requests pending for this user: ` +
          "wait for them to be decided, cancel them with confirmations.cancel, or retry later",
        { tool: fullName, retryAfterMs: Math.max(1, created.retryAt - now) },
      );
    }
    return this.#infoOf(record);
  }

  /** A request as a preview answers it; an approved one expires with its token. */
  #infoOf(record: ConfirmationRecord): PlatformInfo {
    const base = this.#context.publicUrl?.replace(/\/+$/, "") ?? "";
    const expiresAt = record.status === "approved" ? (record.tokenExpiresAt ?? record.expiresAt) : record.expiresAt;
    return {
      required: true,
      mode: "platform",
      requestId: record.requestId,
      confirmUrl: `${base}/confirm/${record.requestId}`,
      expiresAt: new Date(expiresAt).toISOString(),
    };
  }

  // ---------------------------------------------------------------------------------------------
  // The caller

  /** The status for the caller and actor the request was made for; anyone else learns nothing. */
  async get(principal: Principal, requestId: string): Promise<ConfirmationStatus> {
    return this.#statusOf(await this.#callerRecord(principal, requestId));
  }

  /** Waits for a decision (at most `maxConfirmationWaitMs`, 25 s by default, per call), then answers like `get`. */
  async wait(principal: Principal, requestId: string, options: WaitConfirmationOptions = {}): Promise<ConfirmationStatus> {
    const timeoutMs = options.timeoutMs ?? MAX_CONFIRMATION_WAIT_MS;
    if (typeof timeoutMs !== "number" || !Number.isInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > MAX_CONFIRMATION_WAIT_MS) {
      throw new ToolpactError("INPUT_INVALID", `timeoutMs is a whole number of ms from 0 to ${MAX_CONFIRMATION_WAIT_MS}`, {
        issues: [{ path: "/timeoutMs", message: `must be 0 to ${MAX_CONFIRMATION_WAIT_MS}` }],
      });
    }
    const deadline = performance.now() + Math.min(timeoutMs, this.#context.maxConfirmationWaitMs);
    let record = await this.#callerRecord(principal, requestId);
    const signal = options.signal;
    while (record.status === "pending" && record.expiresAt > this.#context.clock()) {
      const left = deadline - performance.now();
      if (left <= 0 || signal?.aborted === true || this.#waiters.closed) break;
      const pollMs = this.#context.store.changes.hearsOthers() ? HEARD_POLL_MS : this.#context.confirmationPollMs;
      const ms = Math.min(left, pollMs, record.expiresAt - this.#context.clock());
      await this.#waiters.sleep({ tenantId: principal.tenantId, requestId }, ms, signal);
      record = (await this.#context.store.getConfirmation(principal.tenantId, requestId)) ?? record;
    }
    return this.#statusOf(record);
  }

  /** Withdraws a pending request; a request already decided, expired or cancelled is left as it is. */
  async cancel(principal: Principal, requestId: string): Promise<void> {
    const record = await this.#callerRecord(principal, requestId);
    if (record.status !== "pending") return;
    const now = this.#context.clock();
    if (record.expiresAt <= now) {
      await this.#expire(record, now);
      return;
    }
    // When it was decided or expired meanwhile, there is nothing left to withdraw.
    await this.#transition(record, { to: "cancelled", at: now, when: "live" }, { phase: "cancel", outcome: "denied" });
  }

  async #callerRecord(principal: Principal, requestId: string): Promise<ConfirmationRecord> {
    const record = isRequestId(requestId) ? await this.#context.store.getConfirmation(principal.tenantId, requestId) : undefined;
    if (record === undefined || record.callerPluginId !== principal.callerPluginId || record.actorUserId !== principal.actor.userId) {
      throw new ToolpactError(
        "PERMISSION_DENIED",
        `no confirmation request "${String(requestId).slice(0, ID_MAX_LENGTH)}" is visible to this caller and user: ` +
          "a request is visible only to the caller and user whose preview made it",
      );
    }
    return record;
  }

  async #statusOf(record: ConfirmationRecord): Promise<ConfirmationStatus> {
    switch (record.status) {
      case "pending": {
        const now = this.#context.clock();
        if (record.expiresAt > now) return { status: "pending", expiresAt: new Date(record.expiresAt).toISOString() };
        const settled = await this.#expire(record, now);
        return settled === undefined || settled.status === "expired" ? { status: "expired" } : this.#statusOf(settled);
      }
      case "approved":
        return {
          status: "approved",
          token: await this.#tokenOf(record),
          expiresAt: new Date(record.tokenExpiresAt ?? record.expiresAt).toISOString(),
        };
      case "denied":
        return { status: "denied" };
      case "expired":
        return { status: "expired" };
      case "cancelled":
        return { status: "cancelled" };
    }
  }

  #tokenOf(record: ConfirmationRecord): Promise<string> {
    const bound = boundCallOf(record);
    if (bound === undefined) {
      throw new ToolpactError("STORED_DATA_DAMAGED", `the stored confirmation request ${record.requestId} names no valid tool`, {
        requestId: record.requestId,
      });
    }
    return this.#tokens.mintApproved({
      ...bound,
      tokenId: record.requestId,
      issuedAt: record.decidedAt ?? record.createdAt,
      expiresAt: record.tokenExpiresAt ?? record.expiresAt,
      digest: record.digest,
      digestKid: record.digestKid,
    });
  }

  // ---------------------------------------------------------------------------------------------
  // The person on the confirmation page

  /** The request as its page shows it; only for the actor it is for. */
  async describe(person: ConfirmationPerson, requestId: string): Promise<ConfirmationRequestView> {
    let record = await this.#personRecord(person, requestId);
    const now = this.#context.clock();
    if (record.status === "pending" && record.expiresAt <= now) record = (await this.#expire(record, now)) ?? record;
    let summary = "";
    let details: unknown = null;
    let input: unknown;
    let grants: GrantLimits | undefined;
    if (record.status === "pending" && record.sealedPreview !== undefined) {
      ({ summary, details, input, grants } = this.#sealed.openPreview(record.tenantId, record.requestId, record.sealedPreview));
    }
    const parsed = parseToolFullName(record.tool);
    const declaration =
      parsed === undefined ? undefined : this.#registry.get(parsed.pluginId)?.tools.get(parsed.tool)?.byVersion.get(parsed.version)?.declaration;
    const callerName = this.#registry.get(record.callerPluginId)?.manifest.name;
    return {
      requestId: record.requestId,
      tool: record.tool,
      ...(declaration?.title === undefined ? {} : { title: declaration.title }),
      ...(declaration?.description === undefined ? {} : { description: declaration.description }),
      effect: record.effect,
      summary,
      details,
      ...(input === undefined ? {} : { input }),
      ...(grants === undefined ? {} : { grants }),
      callerPluginId: record.callerPluginId,
      ...(callerName === undefined ? {} : { callerName }),
      status: record.status === "pending" && record.expiresAt <= now ? "expired" : record.status,
      expiresAt: new Date(record.expiresAt).toISOString(),
      createdAt: new Date(record.createdAt).toISOString(),
    };
  }

  /** Approves or denies a pending, unexpired request; only by the actor it is for. */
  async decide(person: ConfirmationPerson, requestId: string, decision: "approve" | "deny", grant?: GrantChoice): Promise<ConfirmationDecision> {
    if (decision !== "approve" && decision !== "deny") {
      throw new ToolpactError("INPUT_INVALID", 'decision is "approve" or "deny"', {
        issues: [{ path: "/decision", message: 'must be "approve" or "deny"' }],
      });
    }
    const record = await this.#personRecord(person, requestId);
    const now = this.#context.clock();
    if (record.status === "pending" && record.expiresAt <= now) {
      await this.#expire(record, now);
      throw this.#notPending({ ...record, status: "expired" });
    }
    if (record.status !== "pending") throw this.#notPending(record);
    const approve = decision === "approve";
    // Approved as a grant: kept first (checked against the limits sealed with the request), named by the
    // approval's event, and revoked again if the approval does not apply.
    const made = approve && grant !== undefined ? await this.#grant(record, grant, now) : undefined;
    const tokenExpiresAt = (Math.floor(now / 1000) + this.#context.confirmationTtlSeconds) * 1000;
    const changed = await this.#transition(
      record,
      approve ? { to: "approved", at: now, when: "live", tokenExpiresAt } : { to: "denied", at: now, when: "live" },
      approve ? { phase: "approve", outcome: "approved", ...(made === undefined ? {} : { grantId: made.grantId }) } : { phase: "deny", outcome: "denied" },
    );
    if (changed === undefined && made !== undefined) await this.#context.store.revokeGrant(made.tenantId, made.actorUserId, made.grantId, now);
    if (changed === undefined) {
      const current = (await this.#context.store.getConfirmation(record.tenantId, record.requestId)) ?? record;
      throw this.#notPending(current.status === "pending" ? { ...current, status: "expired" } : current);
    }
    const { attestation } = person;
    if (attestation !== undefined) {
      // How the decision was attested; the activity event has no field for it yet.
      this.#context.logger.info({
        event: "confirmation_attested",
        requestId: record.requestId,
        decision: changed.status,
        method: attestation.method,
        ...(attestation.issuer === undefined ? {} : { issuer: attestation.issuer }),
      });
    }
    return { requestId: record.requestId, status: approve ? "approved" : "denied", ...(made === undefined ? {} : { grantId: made.grantId }) };
  }

  async #grant(record: ConfirmationRecord, choice: GrantChoice, now: number): Promise<GrantRecord> {
    const shown = record.sealedPreview === undefined ? undefined : this.#sealed.openPreview(record.tenantId, record.requestId, record.sealedPreview);
    const made = grantFromRequest(record, shown?.input, shown?.grants, choice, now);
    await this.#context.store.insertGrant(made);
    this.#context.logger.info({
      event: "grant_created",
      tenantId: made.tenantId,
      grantId: made.grantId,
      requestId: record.requestId,
      by: made.createdBy,
      tool: record.tool,
      ...(made.maxCalls === undefined ? {} : { maxCalls: made.maxCalls }),
      expiresAt: new Date(made.expiresAt).toISOString(),
      limited: made.constraintsJson !== undefined,
    });
    return made;
  }

  async #personRecord(person: ConfirmationPerson, requestId: string): Promise<ConfirmationRecord> {
    const tenantId = person?.tenantId;
    const record = typeof tenantId === "string" && isRequestId(requestId) ? await this.#context.store.getConfirmation(tenantId, requestId) : undefined;
    if (record === undefined || record.actorUserId !== person.userId) {
      throw new ToolpactError(
        "PERMISSION_DENIED",
        `no confirmation request "${String(requestId).slice(0, ID_MAX_LENGTH)}" is waiting for you: ` +
          "only the user a request is for can see and decide it; sign in as that user",
      );
    }
    return record;
  }

  #notPending(record: ConfirmationRecord): ToolpactError {
    const data = { tool: record.tool, requestId: record.requestId };
    switch (record.status) {
      case "expired":
        return new ToolpactError(
          "CONFIRMATION_EXPIRED",
          `this confirmation request for ${record.tool} expired before it was decided: the app has to ask again`,
          data,
        );
      case "cancelled":
        return new ToolpactError("CONFIRMATION_DENIED", `the app withdrew this confirmation request for ${record.tool}`, data);
      default:
        return new ToolpactError(
          "CONFIRMATION_USED",
          `this confirmation request for ${record.tool} was already ${record.status}: a request is decided once`,
          data,
        );
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Transitions, expiry, waiting

  /** Settles every pending request that expired (a host job, with recovery); returns how many. */
  async expireDue(): Promise<number> {
    let settled = 0;
    for (;;) {
      const now = this.#context.clock();
      const due = await this.#context.store.listExpiredConfirmations(now, SWEEP_BATCH);
      for (const record of due) if ((await this.#expire(record, now))?.status === "expired") settled++;
      if (due.length < SWEEP_BATCH) return settled;
    }
  }

  async #expire(record: ConfirmationRecord, now: number): Promise<ConfirmationRecord | undefined> {
    const changed = await this.#transition(record, { to: "expired", at: now, when: "expired" }, { phase: "expire", outcome: "expired" });
    return changed ?? (await this.#context.store.getConfirmation(record.tenantId, record.requestId));
  }

  /** Applies `change` to a pending request, recording it as `logged` in the same transaction; wakes its waiters here. */
  async #transition(record: ConfirmationRecord, change: RequestChange["change"], logged: RequestChange["logged"]): Promise<ConfirmationRecord | undefined> {
    const changed = await transitionRequest(this.#context.store, this.#context.logger, { record, change, logged });
    if (changed !== undefined) this.#waiters.wake(record);
    return changed;
  }

  /** Ends every wait (the runtime is closing): each answers with the status it has. */
  close(): void {
    this.#unsubscribe();
    this.#waiters.close();
  }
}

function isRequestId(requestId: unknown): requestId is string {
  return typeof requestId === "string" && requestId.length > 0 && requestId.length <= ID_MAX_LENGTH;
}
