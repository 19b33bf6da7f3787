/**
 * Reading a JSON request body with its size and nesting depth bounded while the bytes arrive, before
 * anything parses it: a deep body costs what a flat one of the same size costs (one pass, constant work
 * per byte, no recursion), and the first byte past a limit ends the read. `/trpc` and `/mcp` both read
 * their bodies here.
 */
import { DRAIN_MAX_BYTES } from "./limits.js";

/** How large and how deeply nested a body may be. */
export interface BodyLimits {
  /** Largest body, bytes. */
  readonly maxBytes: number;
  /** Deepest nesting of arrays and objects (a flat `{}` is depth 1). */
  readonly maxDepth: number;
}

/** Why a body was refused, with a message for the person who sent it. */
export interface BodyRefusal {
  readonly reason: "too-large" | "too-deep";
  readonly message: string;
}

/** What reading a body gave: its text, or the refusal and whether the rest of the body was read and dropped. */
export type BoundedBody = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly refusal: BodyRefusal; readonly drained: boolean };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Tracks the nesting depth of JSON text fed to it a chunk at a time (UTF-8 bytes: a multi-byte
 * character never contains an ASCII byte, so brackets inside strings are told apart byte by byte).
 * It does not validate the JSON; it only finds where the nesting passes `maxDepth`.
 */
export class JsonDepthScanner {
  readonly maxDepth: number;
  #depth = 0;
  #inString = false;
  #escaped = false;
  #scanned = 0;

  constructor(maxDepth: number) {
    this.maxDepth = maxDepth;
  }

  /** Bytes looked at so far (a refused chunk counts up to the byte that passed the limit). */
  get scanned(): number {
    return this.#scanned;
  }

  /** Feeds the next bytes; answers the index in `chunk` of the bracket that passes `maxDepth`, or -1. */
  push(chunk: Uint8Array): number {
    let depth = this.#depth;
    let inString = this.#inString;
    let escaped = this.#escaped;
    const max = this.maxDepth;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (byte === BACKSLASH) escaped = true;
        else if (byte === QUOTE) inString = false;
      } else if (byte === QUOTE) {
        inString = true;
      } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
        if (++depth > max) {
          this.#scanned += i + 1;
          this.#depth = depth;
          return i;
        }
      } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
        if (depth > 0) depth -= 1;
      }
    }
    this.#scanned += chunk.length;
    this.#depth = depth;
    this.#inString = inString;
    this.#escaped = escaped;
    return -1;
  }
}

/** True when `text` (a query's JSON input, say) nests deeper than `maxDepth`. */
export function isNestedDeeperThan(text: string, maxDepth: number): boolean {
  return new JsonDepthScanner(maxDepth).push(new TextEncoder().encode(text)) >= 0;
}

/** The refusal of a body nested deeper than `maxDepth`. */
export function tooDeep(maxDepth: number): BodyRefusal {
  return {
    reason: "too-deep",
    message: `request body is nested more than ${maxDepth} levels deep (the server's limit): flatten the input`,
  };
}

/** The refusal of a body larger than `maxBytes`. */
export function tooLarge(maxBytes: number): BodyRefusal {
  return { reason: "too-large", message: `request body is larger than the server's limit of ${maxBytes} bytes: send a smaller input` };
}

/** Options of `readBoundedJson`. */
export interface ReadBoundedJsonOptions extends BodyLimits {
  /** The length the request declared (Content-Length), if any: past `maxBytes`, nothing is kept. */
  readonly declaredBytes?: number;
  /**
   * Called once, at the refusal, before the rest of the body is read and dropped: write the answer here,
   * so that a client that reads while it sends sees it at once rather than a reset connection.
   */
  readonly onRefused?: (refusal: BodyRefusal) => void;
  /** How much of a refused body is read and dropped at most; past it, reading stops (default DRAIN_MAX_BYTES). */
  readonly drainMaxBytes?: number;
}

/**
 * Reads a body's chunks, keeping at most `maxBytes` and scanning depth as they come. A body past either
 * limit is refused at the byte that passed it: nothing more is kept or scanned, the rest is read and
 * dropped (up to `drainMaxBytes`, then reading stops and `drained` is false: close the connection).
 */
export async function readBoundedJson(chunks: AsyncIterable<Uint8Array>, options: ReadBoundedJsonOptions): Promise<BoundedBody> {
  const { maxBytes, onRefused } = options;
  const drainMaxBytes = options.drainMaxBytes ?? DRAIN_MAX_BYTES;
  const scanner = new JsonDepthScanner(options.maxDepth);
  const kept: Uint8Array[] = [];
  let size = 0;
  let refusal: BodyRefusal | undefined;
  let dropped = 0;
  const refuse = (why: BodyRefusal): void => {
    refusal = why;
    kept.length = 0;
    onRefused?.(why);
  };
  if (options.declaredBytes !== undefined && options.declaredBytes > maxBytes) refuse(tooLarge(maxBytes));
  for await (const chunk of chunks) {
    if (refusal !== undefined) {
      dropped += chunk.byteLength;
      if (dropped > drainMaxBytes) return { ok: false, refusal, drained: false };
      continue;
    }
    size += chunk.byteLength;
    if (size > maxBytes) refuse(tooLarge(maxBytes));
    else if (scanner.push(chunk) >= 0) refuse(tooDeep(options.maxDepth));
    else kept.push(chunk);
  }
  if (refusal !== undefined) return { ok: false, refusal, drained: true };
  return { ok: true, text: decodeUtf8(kept, size) };
}

function decodeUtf8(chunks: readonly Uint8Array[], size: number): string {
  if (chunks.length === 1) return new TextDecoder().decode(chunks[0]);
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(whole);
}
