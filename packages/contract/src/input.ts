import { ToolpactError, type ValidationIssue } from "@toolpact/protocol";

/** Bounds on one input value. */
export interface InputLimits {
  /** Size of the value's canonical JSON, in UTF-8 bytes. */
  readonly maxBytes: number;
  /** Nesting depth: the root object or array is depth 1. */
  readonly maxDepth: number;
}

/** 1 MiB of canonical JSON, 64 levels of nesting. */
export const DEFAULT_INPUT_LIMITS: InputLimits = Object.freeze({ maxBytes: 1024 * 1024, maxDepth: 64 });

/**
 * Outputs (results, preview details, gate results, guard replacements): 16 MiB of canonical JSON, so a
 * shared-reference bomb stops within about a second, and 1000 levels, so recursion stays inside the stack.
 */
export const DEFAULT_OUTPUT_LIMITS: InputLimits = Object.freeze({ maxBytes: 16 * 1024 * 1024, maxDepth: 1_000 });

/** Most "not JSON" issues reported for one value; the walk stops after this many. */
const MAX_ISSUES = 50;

/** Printable ASCII but `"` and `\`: such a string is well-formed, needs no escape and has one byte per character. */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** Characters JSON must escape: a string without them serializes as `"` + itself + `"`. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;
/** A lone (unpaired) UTF-16 surrogate: not Unicode text, so not I-JSON and not canonicalizable. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const SURROGATE = /[\ud800-\udfff]/;

/** True when `text` has no lone surrogate (`String.prototype.isWellFormed` where the runtime has it). */
const isWellFormed: (text: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === "function"
    ? (text) => (text as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (text) => !SURROGATE.test(text) || !LONE_SURROGATE.test(text);

/** Values this module deep-froze itself: safe to cache by identity. */
const deeplyFrozen = new WeakSet<object>();

/**
 * True when `value` is an object or array this package deep-froze with deepFreezeJson (a loaded manifest
 * part, a compiled schema's copy). Prepared inputs and outputs are frozen too, but not registered here:
 * they are never cached by identity, and registering every node would cost each call.
 */
export function isDeeplyFrozen(value: unknown): boolean {
  return typeof value === "object" && value !== null && deeplyFrozen.has(value);
}

/** Deep-freezes a JSON value built by this package and remembers it as immutable. */
export function deepFreezeJson<T>(value: T): T {
  if (typeof value !== "object" || value === null || deeplyFrozen.has(value)) return value;
  for (const key of Object.keys(value)) deepFreezeJson((value as Record<string, unknown>)[key]);
  Object.freeze(value);
  deeplyFrozen.add(value);
  return value;
}

/** Escapes one JSON Pointer segment (RFC 6901). */
export function escapePointerSegment(segment: string | number): string {
  const text = String(segment);
  return text.includes("~") || text.includes("/") ? text.replace(/~/g, "~0").replace(/\//g, "~1") : text;
}

function pointerOf(path: readonly (string | number)[]): string {
  let out = "";
  for (const segment of path) out += "/" + escapePointerSegment(segment);
  return out;
}

function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value === "bigint") return "a BigInt";
  if (typeof value === "function") return "a function";
  if (typeof value === "symbol") return "a symbol";
  if (typeof value === "number") return String(value);
  if (typeof value === "object" && value !== null) {
    const ctor = Object.getPrototypeOf(value)?.constructor as { name?: unknown } | undefined;
    const name = typeof ctor?.name === "string" && ctor.name !== "" ? ctor.name : "exotic object";
    return `a ${name}`;
  }
  return typeof value;
}

class LimitExceeded extends Error {}

/** Shared walk of prepareInput and canonicalJson (canonical-json.ts): validates JSON-ness and builds the copy or the text. */
export class JsonWalk {
  readonly issues: ValidationIssue[] = [];
  readonly path: (string | number)[] = [];
  readonly ancestors = new Set<object>();
  bytes = 0;

  constructor(
    readonly limits: InputLimits,
    /** What the value is, in limit messages. */
    readonly subject: "input" | "output" = "input",
  ) {}

  fail(message: string): void {
    if (this.issues.length >= MAX_ISSUES) throw new LimitExceeded();
    this.issues.push({ path: pointerOf(this.path), message });
  }

  /** A throwing getter or proxy: the value cannot be read, so it is not JSON. */
  unreadable(error: unknown): void {
    if (error instanceof LimitExceeded) return;
    const reason = error instanceof Error ? error.message : String(error);
    this.issues.push({ path: pointerOf(this.path), message: `could not be read as JSON: ${reason}` });
  }

  limit(message: string): never {
    this.issues.push({ path: pointerOf(this.path), message });
    throw new LimitExceeded();
  }

  count(bytes: number): void {
    this.bytes += bytes;
    if (this.bytes > this.limits.maxBytes) {
      this.limit(`${this.subject} is larger than ${this.limits.maxBytes} bytes of canonical JSON; send less data`);
    }
  }

  /** Records an issue for a string that is not Unicode text (a lone surrogate). */
  checkText(text: string): void {
    if (!isWellFormed(text)) this.fail("must be valid Unicode text: the string contains a lone UTF-16 surrogate");
  }

  /** UTF-8 bytes of a string's canonical JSON form; records an issue for a string that is not Unicode text. */
  stringBytes(text: string): number {
    if (PLAIN_ASCII.test(text)) return text.length + 2;
    this.checkText(text);
    if (NEEDS_ESCAPE.test(text)) return Buffer.byteLength(JSON.stringify(text));
    return Buffer.byteLength(text) + 2;
  }

  /** Checks a container before descending; returns false (after recording an issue) when it is not JSON. */
  enter(value: object, isArray: boolean): boolean {
    if (this.ancestors.has(value)) {
      this.fail("must not contain a cycle: this value contains itself");
      return false;
    }
    if (!isArray) {
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        this.fail(`must be JSON: got ${describe(value)}, which is not a plain object`);
        return false;
      }
      if (Object.getOwnPropertySymbols(value).length > 0) {
        this.fail("must be JSON: the object has symbol-keyed properties");
        return false;
      }
    } else if (Object.getPrototypeOf(value) !== Array.prototype) {
      this.fail(`must be JSON: got ${describe(value)}, which is not a plain array`);
      return false;
    }
    if (this.path.length >= this.limits.maxDepth) {
      this.limit(`${this.subject} is nested more than ${this.limits.maxDepth} levels deep; flatten it`);
    }
    this.ancestors.add(value);
    return true;
  }

  leave(value: object): void {
    this.ancestors.delete(value);
  }

  /** The issue for a scalar that is not JSON, or undefined when it is fine. */
  scalarProblem(value: unknown): string | undefined {
    switch (typeof value) {
      case "number":
        return Number.isFinite(value) ? undefined : `must be a finite number: got ${describe(value)}`;
      case "bigint":
        return "must be JSON: got a BigInt; send it as a string or a number";
      case "function":
        return "must be JSON: got a function";
      case "symbol":
        return "must be JSON: got a symbol";
      case "undefined":
        return "must be JSON: got undefined";
      default:
        return undefined;
    }
  }
}

export function invalid(walk: JsonWalk, what: string, code: "INPUT_INVALID" | "OUTPUT_INVALID" = "INPUT_INVALID"): ToolpactError {
  const issues = walk.issues;
  const first = issues[0];
  const where = first && first.path !== "" ? ` at ${first.path}` : "";
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
  return new ToolpactError(code, `${what} is not valid JSON${where}: ${first?.message ?? "unknown problem"}${more}`, {
    issues,
  });
}

function copyValue(walk: JsonWalk, value: unknown): unknown {
  if (value === null) {
    walk.count(4);
    return null;
  }
  switch (typeof value) {
    case "string":
      walk.count(walk.stringBytes(value));
      return value;
    case "boolean":
      walk.count(value ? 4 : 5);
      return value;
    case "number":
      if (!Number.isFinite(value)) {
        walk.fail(walk.scalarProblem(value)!);
        return null;
      }
      walk.count(String(value).length);
      return Object.is(value, -0) ? 0 : value;
    case "object":
      return Array.isArray(value) ? copyArray(walk, value) : copyObject(walk, value);
    default:
      walk.fail(walk.scalarProblem(value)!);
      return null;
  }
}

function copyArray(walk: JsonWalk, source: readonly unknown[]): unknown {
  if (!walk.enter(source, true)) return null;
  const length = source.length;
  walk.count(length === 0 ? 2 : length + 1);
  const out: unknown[] = new Array<unknown>(length);
  for (let index = 0; index < length; index++) {
    walk.path.push(index);
    const item = source[index];
    if (item === undefined && !(index in source)) {
      walk.fail("must be JSON: arrays must not have holes");
    } else if (item === undefined) {
      walk.fail("must be JSON: undefined is not allowed inside arrays; use null");
    } else {
      out[index] = copyValue(walk, item);
    }
    walk.path.pop();
  }
  walk.leave(source);
  return Object.freeze(out);
}

function copyObject(walk: JsonWalk, source: object): unknown {
  if (!walk.enter(source, false)) return null;
  const out: Record<string, unknown> = {};
  const record = source as Record<string, unknown>;
  let members = 0;
  for (const key of Object.keys(record)) {
    walk.path.push(key);
    const item = record[key];
    if (item === undefined) {
      walk.path.pop();
      continue;
    }
    walk.count(walk.stringBytes(key) + 2);
    const copied = copyValue(walk, item);
    if (key === "__proto__") {
      Object.defineProperty(out, key, { value: copied, enumerable: true, writable: true, configurable: true });
    } else {
      out[key] = copied;
    }
    members++;
    walk.path.pop();
  }
  walk.count(members === 0 ? 2 : 1);
  walk.leave(source);
  Object.freeze(out);
  return out;
}

/**
 * Deep-copies a JSON value into frozen plain objects and arrays: the one value that is validated,
 * digested and handed to the provider. Object members whose value is undefined are dropped, as in JSON.
 * @throws ToolpactError INPUT_INVALID, with every issue, for anything that is not JSON or exceeds `limits`.
 */
export function prepareInput(value: unknown, limits: InputLimits = DEFAULT_INPUT_LIMITS): unknown {
  return copyJson(value, limits, "input");
}

/** prepareInput and prepareOutput: the copy, or INPUT_INVALID / OUTPUT_INVALID with every issue. */
function copyJson(value: unknown, limits: InputLimits, subject: "input" | "output"): unknown {
  const walk = new JsonWalk(limits, subject);
  let copy: unknown;
  try {
    copy = copyValue(walk, value);
  } catch (error) {
    walk.unreadable(error);
  }
  if (walk.issues.length > 0) throw invalid(walk, subject, subject === "input" ? "INPUT_INVALID" : "OUTPUT_INVALID");
  return copy;
}

/**
 * prepareInput's rules for what a provider, gate or guard hands back: a frozen deep copy made once, right
 * when it arrives, so that nothing (the provider later, a guard, a hook, the caller) can change what was
 * validated, guarded, sealed and returned. Reads every getter once; object members whose value is
 * undefined are dropped, as in JSON.
 * @throws ToolpactError OUTPUT_INVALID, with every issue, for anything that is not JSON or exceeds `limits`.
 */
export function prepareOutput(value: unknown, limits: InputLimits = DEFAULT_OUTPUT_LIMITS): unknown {
  return copyJson(value, limits, "output");
}
