/**
 * What the activity hash chain keeps in the store: the signed checkpoints, each with the links of the
 * events it covers (written by the audit checkpointer after the events committed, never by a call's own
 * commit), and each tenant's head. One interface, implemented by the SQLite and PostgreSQL stores.
 */
import type { ActivityRecord } from "./records.js";

/** An activity event with its chain columns: absent until the checkpointer linked it. */
export type ChainedActivityRecord = ActivityRecord & { readonly chainSeq?: number; readonly chainHash?: string };

/** One signed checkpoint: the tenant's chain up to `lastId` (its `seq`-th event) hashes to `chainHash`. */
export interface ActivityCheckpointRecord {
  readonly tenantId: string;
  /** How many events the chain holds up to here (the last one's `chainSeq`). */
  readonly seq: number;
  readonly lastId: string;
  /** Lowercase hex SHA-256. */
  readonly chainHash: string;
  /** Unix ms. */
  readonly createdAt: number;
  /** Which key signed it (see `auditKeyId`). */
  readonly keyId: string;
  /** Ed25519 over the checkpoint's canonical bytes, base64url. */
  readonly signature: string;
}

/** Where a tenant's chain got to: its latest checkpoint made (kept apart from the checkpoints, so deleting one is seen). */
export interface ChainHead {
  readonly seq: number;
  readonly lastId: string;
}

/** One event's place in the chain. */
export interface ChainLink {
  readonly id: string;
  readonly seq: number;
  readonly hash: string;
}

/** Links and the checkpoint over them, written together. */
export interface ChainExtension {
  readonly tenantId: string;
  /** The seq of the tenant's latest checkpoint the links continue (0: none yet). */
  readonly afterSeq: number;
  /**
   * The links, in chain order, as `packLinks` (chain-links.ts) packs them for the checkpoint's row: packed
   * where they are made, so handing them to the writing thread copies bytes, not an object per link.
   */
  readonly packedLinks: Uint8Array;
  readonly checkpoint: ActivityCheckpointRecord;
}

/** A slice of one tenant's events in id order: after `afterId` and before `beforeId` (both exclusive), at most `limit`. */
export interface ChainRange {
  readonly afterId?: string;
  readonly beforeId?: string;
  readonly limit: number;
}

/**
 * An event as the checkpointer links it, read lean: its id and the values of its chained fields (see
 * `CHAINED_COLUMNS`) as the driver answers them, in that order; `canonicalValues` turns them into the
 * content a link covers, the same as `canonicalEvent` of the event read whole.
 */
export interface UnlinkedEvent {
  readonly id: string;
  readonly values: readonly unknown[];
}

/** The chain's storage. Reads cross no tenant except `listTenants`; the checkpointer and `toolpact audit` are host jobs. */
export interface ActivityChainStore {
  /** Every tenant with activity or checkpoints, in order. */
  listTenants(): Promise<readonly string[]>;
  /** A slice of a tenant's events in id order, with their chain columns. */
  readChain(tenantId: string, range: ChainRange): Promise<readonly ChainedActivityRecord[]>;
  /**
   * The slice `readChain` would answer, lean, for linking: undefined when an event in it already has a
   * link (a checkpoint or the event's own chain columns say so), which the checkpointer does not pass.
   */
  readUnlinked(tenantId: string, range: ChainRange): Promise<readonly UnlinkedEvent[] | undefined>;
  /** A tenant's checkpoints in seq order. */
  listCheckpoints(tenantId: string): Promise<readonly ActivityCheckpointRecord[]>;
  /** The tenant's latest checkpoint, or undefined. */
  latestCheckpoint(tenantId: string): Promise<ActivityCheckpointRecord | undefined>;
  /** Where the tenant's chain got to when its latest checkpoint was made, or undefined (none yet, or pruned). */
  chainHead(tenantId: string): Promise<ChainHead | undefined>;
  /**
   * Adds the checkpoint with the links it covers (kept in its row, see chain-links.ts) and moves the
   * tenant's head, in one transaction, only while the tenant's latest checkpoint is still `afterSeq`;
   * false (nothing written) otherwise.
   */
  extendChain(extension: ChainExtension): Promise<boolean>;
}
