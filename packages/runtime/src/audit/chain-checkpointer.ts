/**
 * Makes signed checkpoints: links each tenant's events that settled (older than the settle window) in id
 * order, and signs where the chain got to. Calls' own commits never wait for this: it runs beside them,
 * and only events whose ids are older than the window are linked, so an event a slower transaction
 * commits late (PostgreSQL commits need not follow id order) still finds its place before it is passed.
 */
import { uuidv7Floor } from "../ids.js";
import { packLinks } from "../store/chain-links.js";
import type { ActivityChainStore, ActivityCheckpointRecord, ChainLink } from "../store/store.js";
import { canonicalValues, chainGenesis, contentLinkHash } from "./chain-hash.js";
import type { AuditKey } from "./checkpoint-key.js";

/** Events linked per transaction: a short write, whatever the backlog. */
const LINK_BATCH = 500;
/** Batches one tenant gets per run, so one busy tenant cannot hold the job; the rest waits for the next run. */
const MAX_BATCHES_PER_TENANT = 200;

/** When and how a checkpoint run links. */
export interface CheckpointOptions {
  /** Unix ms. */
  readonly now: number;
  /** Only events older than this are linked, ms. */
  readonly settleMs: number;
  /** Only this tenant (default: all). */
  readonly tenantId?: string;
}

/** What a run did: the checkpoints it made (one per batch), per tenant the latest. */
export interface CheckpointRun {
  readonly checkpoints: readonly ActivityCheckpointRecord[];
  /** Events linked. */
  readonly linked: number;
  /** Tenants another instance was checkpointing at the same time (left to it). */
  readonly contended: number;
  /** True when the runtime's checkpoint worker thread made it (false: the calling thread); absent from a direct call. */
  readonly onWorker?: boolean;
}

/** What a checkpoint run uses of the activity chain. */
export type CheckpointedChain = Pick<ActivityChainStore, "listTenants" | "latestCheckpoint" | "readUnlinked" | "extendChain">;

/** Links settled events of every tenant (or one) and signs a checkpoint after each batch. */
export async function checkpointActivity(chain: CheckpointedChain, key: AuditKey, options: CheckpointOptions): Promise<CheckpointRun> {
  const beforeId = uuidv7Floor(options.now - options.settleMs);
  const checkpoints: ActivityCheckpointRecord[] = [];
  let linked = 0;
  let contended = 0;
  const tenants = options.tenantId === undefined ? await chain.listTenants() : [options.tenantId];
  for (const tenantId of tenants) {
    let head = await chain.latestCheckpoint(tenantId);
    for (let batch = 0; batch < MAX_BATCHES_PER_TENANT; batch++) {
      const events = await chain.readUnlinked(
        tenantId,
        head === undefined ? { beforeId, limit: LINK_BATCH } : { afterId: head.lastId, beforeId, limit: LINK_BATCH },
      );
      // An event already linked past the head means a checkpoint is missing: `audit verify` reports it; linking stops here.
      if (events === undefined || events.length === 0) break;
      let previous = head?.chainHash ?? chainGenesis(tenantId);
      let seq = head?.seq ?? 0;
      const links: ChainLink[] = events.map((event) => {
        previous = contentLinkHash(previous, canonicalValues(event.values));
        seq++;
        return { id: event.id, seq, hash: previous };
      });
      const last = links[links.length - 1]!;
      const claims = { tenantId, seq: last.seq, lastId: last.id, chainHash: last.hash, createdAt: options.now };
      const checkpoint: ActivityCheckpointRecord = { ...claims, keyId: key.keyId, signature: key.sign(claims) };
      if (!(await chain.extendChain({ tenantId, afterSeq: head?.seq ?? 0, packedLinks: packLinks(links), checkpoint }))) {
        contended++;
        break;
      }
      checkpoints.push(checkpoint);
      linked += links.length;
      head = checkpoint;
      if (events.length < LINK_BATCH) break;
    }
  }
  return { checkpoints, linked, contended };
}
