import { randomUUID } from "node:crypto";
import { ToolpactError, parseToolFullName, type ConfirmationInfo, type ConfirmationStatus, type Effect } from "@toolpact/contract";
import { errorClassOf } from "./activity.js";
import type {
  ActivityOutcome,
  ActivityPhase,
  ConfirmationDecision,
  ConfirmationPerson,
  ConfirmationRequestView,
  Principal,
  WaitConfirmationOptions,
} from "./api.js";
import type { ConfirmationTokens } from "./confirmation-token.js";
import { uuidv7 } from "./ids.js";
import type { RuntimeContext } from "./options.js";
import type { PayloadCipher } from "./payload-cipher.js";
import type { PluginRegistry } from "./registry.js";
import type { ActivityRecord, ConfirmationRecord, ConfirmationTransition } from "./store/store.js";

/** The longest `waitConfirmation` waits per call, ms. */
export const MAX_CONFIRMATION_WAIT_MS = 25_000;
const REQUEST_ID_MAX = 128;
/** Expired requests settled per sweep step. */
const SWEEP_BATCH = 200;

/** What preview hands over to make a platform-mode request. */
export interface PlatformRequest {
  readonly principal: Principal;
  readonly providerId: string;
  readonly tool: string;
  readonly fullName: string;
  readonly version: number;
  readonly effect: Effect;
  readonly schemaHash: string;
  readonly runId: string | undefined;
  readonly input: unknown;
  readonly summary: string;
  readonly details: unknown;
}

/**
 * Platform-mode confirmation: requests kept in the store (preview sealed), decided by the person they are
 * for on the confirmation page, waited for by the caller that asked. Any instance answers: waits read the
 * store every `confirmationPollMs`, and decisions made in this process wake them at once.
 */
export class PlatformConfirmations {
  readonly #context: RuntimeContext;
  readonly #tokens: ConfirmationTokens;
  readonly #cipher: PayloadCipher;
  readonly #registry: PluginRegistry;
  readonly #waiters = new Map<string, Set<() => void>>();
  /** Ends every wait when the runtime closes. */
  readonly #closing = new AbortController();

  constructor(parts: { context: RuntimeContext; tokens: ConfirmationTokens; cipher: PayloadCipher; registry: PluginRegistry }) {
    this.#context = parts.context;
    this.#tokens = parts.tokens;
    this.#cipher = parts.cipher;
    this.#registry = parts.registry;
  }

  /**
   * Step 8 of a platform-mode preview: keeps the request (preview sealed), unless the caller and actor
   * already have too many pending. @throws RATE_LIMITED with `retryAfterMs`.
   */
  async create(request: PlatformRequest): Promise<Extract<ConfirmationInfo, { mode: "platform" }>> {
    const { principal } = request;
    const now = this.#context.clock();
    const requestId = randomUUID();
    const { digest, kid } = this.#tokens.digest(request.input);
    const expiresAt = now + this.#context.confirmationTtlSeconds * 1000;
    let shown: string;
    try {
      shown = JSON.stringify({ s: request.summary, d: request.details });
    } catch {
      throw new ToolpactError("PROVIDER_FAILED", `the provider's preview of ${request.fullName} has details that are not JSON`, {
        tool: request.fullName,
        errorClass: "InvalidPreview",
      });
    }
    const record: ConfirmationRecord = {
      tenantId: principal.tenantId,
      requestId,
      tool: request.fullName,
      providerPluginId: request.providerId,
      callerPluginId: principal.callerPluginId,
      actorUserId: principal.actor.userId,
      digest,
      digestKid: kid,
      schemaHash: request.schemaHash,
      effect: request.effect,
      mode: "platform",
      ...(request.runId === undefined ? {} : { runId: request.runId }),
      status: "pending",
      createdAt: now,
      expiresAt,
      sealedPreview: this.#cipher.seal(shown, previewAad(principal.tenantId, requestId)),
    };
    const created = await this.#context.store.createConfirmation(record, this.#context.pendingConfirmations);
    if (created.status === "rate-limited") {
      throw new ToolpactError(
        "RATE_LIMITED",
        `this caller already has ${this.#context.pendingConfirmations} confirmation requests pending for this user: ` +
          "wait for them to be decided, cancel them with confirmations.cancel, or retry later",
        { tool: request.fullName, retryAfterMs: Math.max(1, created.retryAt - now) },
      );
    }
    const base = this.#context.publicUrl?.replace(/\/+$/, "") ?? "";
    return {
      required: true,
      mode: "platform",
      requestId,
      confirmUrl: `${base}/confirm/${requestId}`,
      expiresAt: new Date(expiresAt).toISOString(),
    };
  }

  // ---------------------------------------------------------------------------------------------
  // The caller

  /** The status for the caller and actor the request was made for; anyone else learns nothing. */
  async get(principal: Principal, requestId: string): Promise<ConfirmationStatus> {
    return this.#statusOf(await this.#callerRecord(principal, requestId));
  }

  /** Waits for a decision (at most 25 s per call), then answers like `get`. */
  async wait(principal: Principal, requestId: string, options: WaitConfirmationOptions = {}): Promise<ConfirmationStatus> {
    const timeoutMs = options.timeoutMs ?? MAX_CONFIRMATION_WAIT_MS;
    if (typeof timeoutMs !== "number" || Number.isNaN(timeoutMs) || timeoutMs < 0) {
      throw new ToolpactError("INPUT_INVALID", `timeoutMs is a number of ms from 0 to ${MAX_CONFIRMATION_WAIT_MS}`, {
        issues: [{ path: "/timeoutMs", message: `must be 0 to ${MAX_CONFIRMATION_WAIT_MS}` }],
      });
    }
    const deadline = performance.now() + Math.min(timeoutMs, MAX_CONFIRMATION_WAIT_MS);
    let record = await this.#callerRecord(principal, requestId);
    const key = waiterKey(principal.tenantId, requestId);
    const signal = options.signal;
    while (record.status === "pending" && record.expiresAt > this.#context.clock()) {
      const left = deadline - performance.now();
      if (left <= 0 || signal?.aborted === true || this.#closing.signal.aborted) break;
      await this.#sleep(key, Math.min(left, this.#context.confirmationPollMs, record.expiresAt - this.#context.clock()), signal);
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
    await this.#transition(record, { to: "cancelled", at: now, when: "live" }, "cancel", "denied");
  }

  async #callerRecord(principal: Principal, requestId: string): Promise<ConfirmationRecord> {
    const record = isRequestId(requestId) ? await this.#context.store.getConfirmation(principal.tenantId, requestId) : undefined;
    if (record === undefined || record.callerPluginId !== principal.callerPluginId || record.actorUserId !== principal.actor.userId) {
      throw new ToolpactError(
        "PERMISSION_DENIED",
        `no confirmation request "${String(requestId).slice(0, REQUEST_ID_MAX)}" is visible to this caller and user: ` +
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
    const parsed = parseToolFullName(record.tool);
    if (parsed === undefined) {
      throw new ToolpactError("STORE_UNAVAILABLE", `the stored confirmation request ${record.requestId} names no valid tool`);
    }
    return this.#tokens.mintApproved({
      tokenId: record.requestId,
      issuedAt: record.decidedAt ?? record.createdAt,
      expiresAt: record.tokenExpiresAt ?? record.expiresAt,
      tenantId: record.tenantId,
      actorUserId: record.actorUserId,
      callerPluginId: record.callerPluginId,
      providerId: parsed.pluginId,
      tool: parsed.tool,
      version: parsed.version,
      schemaHash: record.schemaHash,
      effect: record.effect,
      ...(record.runId === undefined ? {} : { runId: record.runId }),
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
    if (record.status === "pending" && record.sealedPreview !== undefined) {
      const shown = JSON.parse(this.#cipher.open(record.sealedPreview, previewAad(record.tenantId, record.requestId))) as {
        s: string;
        d: unknown;
      };
      summary = shown.s;
      details = shown.d;
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
      callerPluginId: record.callerPluginId,
      ...(callerName === undefined ? {} : { callerName }),
      status: record.status === "pending" && record.expiresAt <= now ? "expired" : record.status,
      expiresAt: new Date(record.expiresAt).toISOString(),
      createdAt: new Date(record.createdAt).toISOString(),
    };
  }

  /** Approves or denies a pending, unexpired request; only by the actor it is for. */
  async decide(person: ConfirmationPerson, requestId: string, decision: "approve" | "deny"): Promise<ConfirmationDecision> {
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
    const tokenExpiresAt = (Math.floor(now / 1000) + this.#context.confirmationTtlSeconds) * 1000;
    const changed = await this.#transition(
      record,
      approve ? { to: "approved", at: now, when: "live", tokenExpiresAt } : { to: "denied", at: now, when: "live" },
      approve ? "approve" : "deny",
      approve ? "approved" : "denied",
    );
    if (changed === undefined) {
      const current = (await this.#context.store.getConfirmation(record.tenantId, record.requestId)) ?? record;
      throw this.#notPending(current.status === "pending" ? { ...current, status: "expired" } : current);
    }
    return { requestId: record.requestId, status: approve ? "approved" : "denied" };
  }

  async #personRecord(person: ConfirmationPerson, requestId: string): Promise<ConfirmationRecord> {
    const tenantId = person?.tenantId;
    const record =
      typeof tenantId === "string" && isRequestId(requestId) ? await this.#context.store.getConfirmation(tenantId, requestId) : undefined;
    if (record === undefined || record.actorUserId !== person.userId) {
      throw new ToolpactError(
        "PERMISSION_DENIED",
        `no confirmation request "${String(requestId).slice(0, REQUEST_ID_MAX)}" is waiting for you: ` +
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
    const changed = await this.#transition(record, { to: "expired", at: now, when: "expired" }, "expire", "expired");
    return changed ?? (await this.#context.store.getConfirmation(record.tenantId, record.requestId));
  }

  async #transition(
    record: ConfirmationRecord,
    change: Omit<ConfirmationTransition, "tenantId" | "requestId" | "activity">,
    phase: ActivityPhase,
    outcome: ActivityOutcome,
  ): Promise<ConfirmationRecord | undefined> {
    const transition: ConfirmationTransition = {
      tenantId: record.tenantId,
      requestId: record.requestId,
      ...change,
      activity: this.#event(record, phase, outcome, change.at),
    };
    let changed: ConfirmationRecord | undefined;
    try {
      changed = await this.#context.store.transitionConfirmation(transition);
    } catch (error) {
      this.#context.logger.error({ event: "confirmation_transition_failed", errorClass: errorClassOf(error) });
      throw error;
    }
    if (changed !== undefined) this.#notify(waiterKey(record.tenantId, record.requestId));
    return changed;
  }

  #event(record: ConfirmationRecord, phase: ActivityPhase, outcome: ActivityOutcome, at: number): ActivityRecord {
    const parsed = parseToolFullName(record.tool);
    return {
      id: uuidv7(at),
      tenantId: record.tenantId,
      at,
      kind: "confirmation",
      actorUserId: record.actorUserId,
      callerPluginId: record.callerPluginId,
      providerPluginId: record.providerPluginId,
      tool: record.tool,
      ...(parsed === undefined ? {} : { version: parsed.version }),
      effect: record.effect,
      phase,
      outcome,
      ...(phase === "cancel" || phase === "deny" ? { errorCode: "CONFIRMATION_DENIED" } : {}),
      ...(phase === "expire" ? { errorCode: "CONFIRMATION_EXPIRED" } : {}),
      confirmationId: record.requestId,
    };
  }

  #sleep(key: string, ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      let waiters = this.#waiters.get(key);
      if (waiters === undefined) {
        waiters = new Set();
        this.#waiters.set(key, waiters);
      }
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.#closing.signal.removeEventListener("abort", done);
        const set = this.#waiters.get(key);
        set?.delete(done);
        if (set?.size === 0) this.#waiters.delete(key);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      waiters.add(done);
      signal?.addEventListener("abort", done, { once: true });
      this.#closing.signal.addEventListener("abort", done, { once: true });
    });
  }

  #notify(key: string): void {
    const waiters = this.#waiters.get(key);
    if (waiters !== undefined) for (const wake of [...waiters]) wake();
  }

  /** Ends every wait (the runtime is closing): each answers with the status it has. */
  close(): void {
    this.#closing.abort();
  }
}

function isRequestId(requestId: unknown): requestId is string {
  return typeof requestId === "string" && requestId.length > 0 && requestId.length <= REQUEST_ID_MAX;
}

function waiterKey(tenantId: string, requestId: string): string {
  return `${tenantId}\u0000${requestId}`;
}

function previewAad(tenantId: string, requestId: string): string {
  return `toolpact:confirmation-preview:${tenantId}:${requestId}`;
}
