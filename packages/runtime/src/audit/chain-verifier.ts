/**
 * Verifies the activity hash chain against its signed checkpoints, tenant by tenant, and names the first
 * event that is not as it was checkpointed: changed, deleted, inserted or reordered. Events after the
 * latest checkpoint are counted, not judged: nothing signed covers them yet.
 */
import type { ActivityCheckpointRecord, ChainHead, ChainedActivityRecord } from "../store/store.js";
import { chainGenesis, linkHash } from "./chain-hash.js";
import type { ChainSource } from "./chain-source.js";
import { checkpointVerifier } from "./checkpoint-key.js";

/** What was found wrong first. */
export type AuditProblemKind = "changed" | "deleted" | "inserted" | "reordered" | "rewritten" | "bad-signature" | "checkpoint-missing";

/** The first problem of a tenant's chain: what, at which event, and a sentence for people. */
export interface AuditProblem {
  readonly tenantId: string;
  readonly kind: AuditProblemKind;
  /** The first bad event's id (for `bad-signature`, the checkpoint's last event). */
  readonly eventId?: string;
  /** The chain position concerned. */
  readonly seq?: number;
  readonly message: string;
}

/** One tenant's verification. */
export interface TenantAudit {
  readonly tenantId: string;
  readonly checkpoints: number;
  /** Events covered by the latest checkpoint and found intact (0 when a problem was found). */
  readonly verified: number;
  /** Events after the latest checkpoint: not covered yet. */
  readonly pending: number;
  /** The latest checkpoint, when there is one. */
  readonly latest?: ActivityCheckpointRecord;
  /** Set when the oldest events are gone (retention): the chain is checked from this position on. */
  readonly startsAt?: number;
  readonly problem?: AuditProblem;
}

/** The whole verification: intact when no tenant has a problem. */
export interface AuditReport {
  readonly intact: boolean;
  readonly tenants: readonly TenantAudit[];
  /** The first problem found, in tenant order. */
  readonly problem?: AuditProblem;
}

/** Verifies every tenant `source` holds against checkpoints signed by `publicKey` (`ed25519:...`). */
export async function verifyActivityChain(source: ChainSource, publicKey: string): Promise<AuditReport> {
  const verifier = checkpointVerifier(publicKey);
  const tenants: TenantAudit[] = [];
  for (const tenantId of await source.tenants()) {
    const head = await source.head?.(tenantId);
    tenants.push(await verifyTenant(tenantId, await source.checkpoints(tenantId), head, source.events(tenantId), verifier));
  }
  const problem = tenants.find((tenant) => tenant.problem !== undefined)?.problem;
  return problem === undefined ? { intact: true, tenants } : { intact: false, tenants, problem };
}

type Verifier = ReturnType<typeof checkpointVerifier>;

async function verifyTenant(
  tenantId: string,
  checkpoints: readonly ActivityCheckpointRecord[],
  head: ChainHead | undefined,
  events: AsyncIterable<ChainedActivityRecord>,
  verifier: Verifier,
): Promise<TenantAudit> {
  const base = { tenantId, checkpoints: checkpoints.length };
  const fail = (problem: Omit<AuditProblem, "tenantId">, extra: Partial<TenantAudit> = {}): TenantAudit => ({
    ...base,
    verified: 0,
    pending: 0,
    ...extra,
    problem: { tenantId, ...problem },
  });
  for (const checkpoint of checkpoints) {
    if (checkpoint.keyId !== verifier.keyId || !verifier.verify(checkpoint)) {
      return fail({
        kind: "bad-signature",
        eventId: checkpoint.lastId,
        seq: checkpoint.seq,
        message:
          `checkpoint ${checkpoint.seq} (up to event ${checkpoint.lastId}) is not signed by this key` +
          (checkpoint.keyId === verifier.keyId ? ": it was changed" : ` (signed by key ${checkpoint.keyId}, this is ${verifier.keyId})`),
      });
    }
  }
  const latest = checkpoints.at(-1);
  if (head !== undefined && head.seq > (latest?.seq ?? 0)) {
    return fail({
      kind: "checkpoint-missing",
      eventId: head.lastId,
      seq: head.seq,
      message:
        `checkpoint ${head.seq} (up to event ${head.lastId}) was made, but the latest one left is ` +
        `${latest === undefined ? "none" : `${latest.seq} (up to ${latest.lastId})`}: checkpoints were deleted`,
    });
  }
  const bySeq = new Map(checkpoints.map((checkpoint) => [checkpoint.seq, checkpoint]));

  let previous: string | undefined;
  let expected = 0;
  let previousId: string | undefined;
  let startsAt: number | undefined;
  let verified = 0;
  let pending = 0;
  /** The first position problem, held while the rest is read to tell a deletion from a reordering. */
  let gap: { event: ChainedActivityRecord; previousId: string | undefined; expected: number } | undefined;
  let gapFoundAt: string | undefined;

  for await (const event of events) {
    if (gap !== undefined) {
      if (event.chainSeq === gap.expected) gapFoundAt = event.id;
      continue;
    }
    const covered = latest !== undefined && event.id <= latest.lastId;
    if (!covered) {
      if (event.chainSeq !== undefined) {
        return fail({
          kind: "checkpoint-missing",
          eventId: event.id,
          seq: event.chainSeq,
          message:
            `event ${event.id} is linked at chain position ${event.chainSeq}, after the latest checkpoint` +
            `${latest === undefined ? " (there is none)" : ` (${latest.seq}, up to ${latest.lastId})`}: a later checkpoint was deleted`,
        });
      }
      pending++;
      continue;
    }
    if (event.chainSeq === undefined || event.chainHash === undefined) {
      return fail({
        kind: "inserted",
        eventId: event.id,
        message:
          `event ${event.id} is in no chain position, yet sorts before the latest checkpoint's last event ${latest.lastId}: ` +
          "it was inserted after the checkpoint was made (or its id was changed, or the checkpoint that linked it was deleted)",
      });
    }
    if (previous === undefined) {
      // The first event: the chain's start, or (after retention) the checkpoint just before it, or its own stored link.
      expected = event.chainSeq;
      if (event.chainSeq === 1) previous = chainGenesis(tenantId);
      else {
        previous = bySeq.get(event.chainSeq - 1)?.chainHash;
        startsAt = event.chainSeq;
      }
    }
    if (event.chainSeq !== expected) {
      gap = { event, previousId, expected };
      continue;
    }
    const link = previous === undefined ? event.chainHash : linkHash(previous, event);
    if (link !== event.chainHash) {
      return fail({
        kind: "changed",
        eventId: event.id,
        seq: event.chainSeq,
        message: `event ${event.id} (chain position ${event.chainSeq}) was changed: its content no longer matches its link in the chain`,
      });
    }
    const checkpoint = bySeq.get(event.chainSeq);
    if (checkpoint !== undefined && (checkpoint.lastId !== event.id || checkpoint.chainHash !== link)) {
      const from = [...bySeq.keys()].filter((seq) => seq < event.chainSeq!).at(-1) ?? 0;
      return fail({
        kind: "rewritten",
        eventId: event.id,
        seq: event.chainSeq,
        message:
          `the chain up to event ${event.id} does not match signed checkpoint ${checkpoint.seq}: ` +
          `events at positions ${from + 1}..${event.chainSeq} were rewritten together with their links`,
      });
    }
    previous = link;
    previousId = event.id;
    expected++;
    verified++;
  }

  if (gap !== undefined) {
    const { event, expected: missing } = gap;
    const after = gap.previousId === undefined ? "" : ` after event ${gap.previousId}`;
    return gapFoundAt !== undefined
      ? fail({
          kind: "reordered",
          eventId: event.id,
          seq: event.chainSeq!,
          message:
            `event ${event.id} holds chain position ${event.chainSeq} but sorts where position ${missing} belongs${after}; ` +
            `position ${missing} is event ${gapFoundAt}, now sorted later: ids were changed or events reordered`,
        })
      : fail({
          kind: event.chainSeq! > missing ? "deleted" : "reordered",
          eventId: event.id,
          seq: missing,
          message:
            event.chainSeq! > missing
              ? `the event at chain position ${missing}${after} was deleted: event ${event.id} (position ${event.chainSeq}) follows it`
              : `event ${event.id} holds chain position ${event.chainSeq}, already passed${after}: it was copied or its id changed`,
        });
  }
  if (latest !== undefined && expected <= latest.seq) {
    const missing = expected === 0 ? 1 : expected;
    return fail({
      kind: "deleted",
      eventId: latest.lastId,
      seq: missing,
      message:
        `events at chain positions ${missing}..${latest.seq} were deleted` +
        `${previousId === undefined ? "" : ` after event ${previousId}`}, up to checkpoint ${latest.seq}'s last event ${latest.lastId}`,
    });
  }
  return { ...base, verified, pending, ...(latest === undefined ? {} : { latest }), ...(startsAt === undefined ? {} : { startsAt }) };
}
