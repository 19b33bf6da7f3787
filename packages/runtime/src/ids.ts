import { randomFillSync } from "node:crypto";

const HEX: string[] = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** Random bytes drawn from one pooled buffer: one syscall per 4 KiB instead of one per id. */
const POOL_SIZE = 4096;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let poolOffset = POOL_SIZE;

function takeRandom(count: number): number {
  if (poolOffset + count > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const at = poolOffset;
  poolOffset += count;
  return at;
}

/** A clock step back larger than this is taken as meant (a test clock, a backfill), not as jitter. */
const MONOTONIC_WINDOW_MS = 1000;
let lastMs = -1;
let sequence = 0;

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then a 12-bit counter that keeps ids made in the same
 * millisecond in order (method 1), then 62 random bits. Ids sort by creation time.
 */
export function uuidv7(now: number = Date.now()): string {
  let ms = Math.floor(now);
  if (ms > lastMs || ms < lastMs - MONOTONIC_WINDOW_MS) {
    // Time moved on (or was set far back on purpose): start the millisecond's counter afresh.
    sequence = 0;
  } else {
    // The same millisecond, or a small step back of the clock: stay after the last id.
    ms = lastMs;
    sequence++;
    if (sequence > 0xfff) {
      ms = lastMs + 1;
      sequence = 0;
    }
  }
  lastMs = ms;
  const at = takeRandom(8);
  const high = Math.floor(ms / 0x1000000);
  const low = ms % 0x1000000;
  return (
    HEX[(high >>> 16) & 0xff]! +
    HEX[(high >>> 8) & 0xff]! +
    HEX[high & 0xff]! +
    HEX[(low >>> 16) & 0xff]! +
    "-" +
    HEX[(low >>> 8) & 0xff]! +
    HEX[low & 0xff]! +
    "-" +
    HEX[0x70 | (sequence >>> 8)]! +
    HEX[sequence & 0xff]! +
    "-" +
    HEX[0x80 | (pool[at]! & 0x3f)]! +
    HEX[pool[at + 1]!]! +
    "-" +
    HEX[pool[at + 2]!]! +
    HEX[pool[at + 3]!]! +
    HEX[pool[at + 4]!]! +
    HEX[pool[at + 5]!]! +
    HEX[pool[at + 6]!]! +
    HEX[pool[at + 7]!]!
  );
}

/** The smallest UUIDv7 of a millisecond: ids below it were made earlier (used for retention). */
export function uuidv7Floor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
}

/** `count` random bytes as base64url. */
export function randomBase64url(count: number): string {
  const at = takeRandom(count);
  return pool.subarray(at, at + count).toString("base64url");
}

/** `count` random bytes as lowercase hex. */
export function randomHex(count: number): string {
  const at = takeRandom(count);
  return pool.subarray(at, at + count).toString("hex");
}
