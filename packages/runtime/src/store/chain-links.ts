/**
 * An activity checkpoint keeps the links it signs over packed in its own row, so the checkpointer appends
 * one row per checkpoint rather than updating every event it links (the events' pages stay as their
 * calls wrote them). Readers put each link back beside its event: `withLinks` gives a page of events the
 * chain position and link hash their checkpoint recorded. Shared by the SQLite and PostgreSQL stores.
 *
 * Packing, per link in chain order: the event id's UTF-8 length (uint16, big-endian), the id, then the
 * link hash's 32 bytes. Positions are not stored: a checkpoint's links end at its own `seq`.
 */
import type { ChainLink, ChainedActivityRecord } from "./activity-chain.js";

const HASH_BYTES = 32;

/** `links` packed for a checkpoint row. */
export function packLinks(links: readonly ChainLink[]): Buffer {
  const ids = links.map((link) => Buffer.from(link.id, "utf8"));
  const packed = Buffer.allocUnsafe(ids.reduce((size, id) => size + 2 + id.length + HASH_BYTES, 0));
  let at = 0;
  links.forEach((link, index) => {
    const id = ids[index]!;
    at = packed.writeUInt16BE(id.length, at);
    at += id.copy(packed, at);
    at += Buffer.from(link.hash, "hex").copy(packed, at);
  });
  return packed;
}

/**
 * The links a checkpoint row packed, positioned so the last is `lastSeq`. A packing that does not parse
 * (the row was edited) gives the links read up to there: the events after them read as unlinked, which
 * verification reports.
 */
export function unpackLinks(packed: Uint8Array, lastSeq: number): ChainLink[] {
  const bytes = Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength);
  const found: { id: string; hash: string }[] = [];
  let at = 0;
  while (at + 2 <= bytes.length) {
    const length = bytes.readUInt16BE(at);
    const end = at + 2 + length + HASH_BYTES;
    if (end > bytes.length) break;
    found.push({ id: bytes.toString("utf8", at + 2, at + 2 + length), hash: bytes.toString("hex", end - HASH_BYTES, end) });
    at = end;
  }
  const first = lastSeq - found.length + 1;
  return found.map((link, index) => ({ ...link, seq: first + index }));
}

/** A checkpoint row's links as a reader gets them: where it ends, and its packed links (null before migration 10). */
export interface PackedCheckpointLinks {
  readonly seq: number;
  readonly lastId: string;
  readonly links: Uint8Array | null;
}

/**
 * `events` (one tenant's, in id order) with the positions and hashes their checkpoints recorded. `covering`
 * are the tenant's checkpoints in order from the first whose `lastId` is at or after the first event's id;
 * it is read only as far as the last event needs. An event linked in its own row (before migration 10)
 * keeps that link.
 */
export function withLinks(events: readonly ChainedActivityRecord[], covering: Iterable<PackedCheckpointLinks>): ChainedActivityRecord[] {
  const last = events.at(-1);
  if (last === undefined) return [];
  const byId = new Map<string, ChainLink>();
  for (const checkpoint of covering) {
    if (checkpoint.links !== null) for (const link of unpackLinks(checkpoint.links, checkpoint.seq)) byId.set(link.id, link);
    if (checkpoint.lastId >= last.id) break;
  }
  if (byId.size === 0) return [...events];
  return events.map((event) => {
    const link = event.chainSeq === undefined ? byId.get(event.id) : undefined;
    return link === undefined ? event : { ...event, chainSeq: link.seq, chainHash: link.hash };
  });
}
