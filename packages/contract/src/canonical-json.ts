/**
 * RFC 8785 canonical JSON, and the digests and hashes made of it. The walk (JSON-ness, depth, every
 * issue) is prepareInput's, in input.ts.
 */
import { createHash, createHmac } from "node:crypto";
import { JsonWalk, invalid, isDeeplyFrozen, type InputLimits } from "./input.js";

/** canonicalJson has no size limit; its depth limit keeps recursion well inside the stack. */
const CANONICAL_LIMITS: InputLimits = { maxBytes: Number.POSITIVE_INFINITY, maxDepth: 1_000 };

function writeValue(walk: JsonWalk, value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      walk.checkText(value);
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) {
        walk.fail(walk.scalarProblem(value)!);
        return "null";
      }
      // ECMAScript Number::toString is RFC 8785's number format; -0 prints as "0".
      return String(value);
    case "object":
      return Array.isArray(value) ? writeArray(walk, value) : writeObject(walk, value);
    default:
      walk.fail(walk.scalarProblem(value)!);
      return "null";
  }
}

function writeArray(walk: JsonWalk, source: readonly unknown[]): string {
  if (!walk.enter(source, true)) return "null";
  let out = "[";
  for (let index = 0; index < source.length; index++) {
    walk.path.push(index);
    const item = source[index];
    if (index > 0) out += ",";
    if (item === undefined) walk.fail("must be JSON: undefined is not allowed inside arrays; use null");
    else out += writeValue(walk, item);
    walk.path.pop();
  }
  walk.leave(source);
  return out + "]";
}

function writeObject(walk: JsonWalk, source: object): string {
  if (!walk.enter(source, false)) return "null";
  const record = source as Record<string, unknown>;
  // Default sort compares UTF-16 code units, which is what RFC 8785 prescribes.
  const keys = Object.keys(record).sort();
  let out = "{";
  let first = true;
  for (const key of keys) {
    walk.path.push(key);
    const item = record[key];
    if (item === undefined) {
      walk.path.pop();
      continue;
    }
    walk.checkText(key);
    out += (first ? "" : ",") + JSON.stringify(key) + ":" + writeValue(walk, item);
    first = false;
    walk.path.pop();
  }
  walk.leave(source);
  return out + "}";
}

/**
 * RFC 8785 (JCS) canonical JSON: members sorted by UTF-16 code units, ECMAScript number formatting,
 * minimal string escaping, no whitespace.
 * @throws ToolpactError INPUT_INVALID for values that are not JSON.
 * @example canonicalJson({ b: 2, a: [1, "x"] }) // '{"a":[1,"x"],"b":2}'
 */
export function canonicalJson(value: unknown): string {
  const walk = new JsonWalk(CANONICAL_LIMITS);
  let text = "";
  try {
    text = writeValue(walk, value);
  } catch (error) {
    walk.unreadable(error);
  }
  if (walk.issues.length > 0) throw invalid(walk, "value");
  return text;
}

/** base64url(HMAC-SHA256(key, canonicalJson(value))): binds a confirmation to an input regardless of key order. */
export function inputDigest(key: Uint8Array, value: unknown): string {
  return createHmac("sha256", key).update(canonicalJson(value), "utf8").digest("base64url");
}

const schemaHashes = new WeakMap<object, string>();

/** sha256 hex of canonicalJson(schema): the cache key of compiled validators and the `sch` claim of tokens. */
export function schemaHash(schema: unknown): string {
  const cacheable = isDeeplyFrozen(schema);
  if (cacheable) {
    const known = schemaHashes.get(schema as object);
    if (known !== undefined) return known;
  }
  const hash = createHash("sha256").update(canonicalJson(schema), "utf8").digest("hex");
  if (cacheable) schemaHashes.set(schema as object, hash);
  return hash;
}
