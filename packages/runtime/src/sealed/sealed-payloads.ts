import type { ActorInfo } from "@toolpact/contract";
import type { GrantLimits } from "../api.js";
import { PayloadCipher } from "./payload-cipher.js";

/**
 * The AAD label of each kind of sealed payload, bound to the row it belongs to: the one place these
 * strings exist, so a payload is always opened with the label it was sealed with.
 */
const AAD = {
  result: (tenantId: string, operationId: string) => `toolpact:idempotency-result:${tenantId}:${operationId}`,
  input: (tenantId: string, operationId: string) => `toolpact:operation-input:${tenantId}:${operationId}`,
  outbox: (tenantId: string, id: string) => `toolpact:outbox:${tenantId}:${id}`,
  preview: (tenantId: string, requestId: string) => `toolpact:confirmation-preview:${tenantId}:${requestId}`,
  taskCall: (tenantId: string, taskId: string) => `toolpact:task-call:${tenantId}:${taskId}`,
  taskOutcome: (tenantId: string, taskId: string) => `toolpact:task-outcome:${tenantId}:${taskId}`,
} as const;

/** What recovery needs to run the authorization steps of an operation again: its input, the actor's level and roles, its run. */
export interface RecoveryInput {
  readonly input: unknown;
  readonly actor: Pick<ActorInfo, "verificationLevel" | "roles">;
  readonly runId: string | undefined;
}

/** A preview as the confirmation page shows it: the provider's summary and details, and the exact validated input. */
export interface ShownPreview {
  readonly summary: string;
  readonly details: unknown;
  /** Undefined in a preview sealed before inputs were kept with it. */
  readonly input: unknown;
  /** The grant limits the policy allowed when the request was made; absent: the page offers no grant. */
  readonly grants?: GrantLimits;
}

/** The input kept sealed while an idempotent tool runs, as stored (short keys: it is sealed per operation). */
interface RecoveryEnvelope {
  readonly i: unknown;
  readonly a: { readonly l: number; readonly r: readonly string[] };
  readonly r?: string;
}

/**
 * Every payload the store keeps sealed (AES-256-GCM with the storage key): recorded results, inputs kept
 * for recovery, outbox payloads and confirmation previews. Each kind is sealed and opened by one pair of
 * methods with its own AAD label, so a ciphertext copied into another row, or opened as another kind, fails.
 */
export class SealedPayloads {
  readonly #cipher: PayloadCipher;

  constructor(storageKey: Uint8Array) {
    this.#cipher = new PayloadCipher(storageKey);
  }

  /** A result an idempotency key replays. @throws when it is not JSON. */
  sealResult(tenantId: string, operationId: string, result: unknown): Uint8Array {
    return this.#cipher.seal(JSON.stringify({ r: result }), AAD.result(tenantId, operationId));
  }

  /** The recorded result (undefined when the provider answered nothing). */
  openResult(tenantId: string, operationId: string, sealed: Uint8Array): unknown {
    return (JSON.parse(this.#cipher.open(sealed, AAD.result(tenantId, operationId))) as { r?: unknown }).r;
  }

  sealRecoveryInput(tenantId: string, operationId: string, kept: RecoveryInput): Uint8Array {
    const envelope: RecoveryEnvelope = {
      i: kept.input,
      a: { l: kept.actor.verificationLevel, r: kept.actor.roles },
      ...(kept.runId === undefined ? {} : { r: kept.runId }),
    };
    return this.#cipher.seal(JSON.stringify(envelope), AAD.input(tenantId, operationId));
  }

  openRecoveryInput(tenantId: string, operationId: string, sealed: Uint8Array): RecoveryInput {
    const envelope = JSON.parse(this.#cipher.open(sealed, AAD.input(tenantId, operationId))) as RecoveryEnvelope;
    return { input: envelope.i, actor: { verificationLevel: envelope.a.l, roles: envelope.a.r }, runId: envelope.r };
  }

  /** A hook's staged reaction payload, already JSON. */
  sealOutboxPayload(tenantId: string, id: string, json: string): Uint8Array {
    return this.#cipher.seal(json, AAD.outbox(tenantId, id));
  }

  openOutboxPayload(tenantId: string, id: string, sealed: Uint8Array): unknown {
    return JSON.parse(this.#cipher.open(sealed, AAD.outbox(tenantId, id)));
  }

  /** A platform request's preview. @throws TypeError when its details are not JSON. */
  sealPreview(tenantId: string, requestId: string, shown: ShownPreview): Uint8Array {
    return this.#cipher.seal(JSON.stringify({ s: shown.summary, d: shown.details, i: shown.input, g: shown.grants }), AAD.preview(tenantId, requestId));
  }

  /** A task's call as the task service keeps it to run (or run again) later; its shape is the service's. */
  sealTaskCall(tenantId: string, taskId: string, call: unknown): Uint8Array {
    return this.#cipher.seal(JSON.stringify(call), AAD.taskCall(tenantId, taskId));
  }

  openTaskCall(tenantId: string, taskId: string, sealed: Uint8Array): unknown {
    return JSON.parse(this.#cipher.open(sealed, AAD.taskCall(tenantId, taskId)));
  }

  /** A task's outcome (the call's result or error), as `tasks.get` answers it. */
  sealTaskOutcome(tenantId: string, taskId: string, outcome: unknown): Uint8Array {
    return this.#cipher.seal(JSON.stringify(outcome), AAD.taskOutcome(tenantId, taskId));
  }

  openTaskOutcome(tenantId: string, taskId: string, sealed: Uint8Array): unknown {
    return JSON.parse(this.#cipher.open(sealed, AAD.taskOutcome(tenantId, taskId)));
  }

  openPreview(tenantId: string, requestId: string, sealed: Uint8Array): ShownPreview {
    const shown = JSON.parse(this.#cipher.open(sealed, AAD.preview(tenantId, requestId))) as { s: string; d: unknown; i?: unknown; g?: GrantLimits };
    return { summary: shown.s, details: shown.d, input: shown.i, ...(shown.g === undefined ? {} : { grants: shown.g }) };
  }
}
