/** The parsed manifest document behind the loader: positions, diagnostics, tree navigation, message parts. */
import type { Node } from "jsonc-parser";
import { escapePointerSegment } from "./input.js";

/** One problem found in a manifest, at the offending key or value. */
export interface Diagnostic {
  readonly file: string;
  /** 1-based. */
  readonly line: number;
  /** 1-based, in UTF-16 code units. */
  readonly column: number;
  readonly severity: "error" | "warning";
  readonly message: string;
  /** JSON Pointer into the manifest, e.g. "/tools/0/inputSchema/properties/title/type". */
  readonly pointer: string;
}

/** A location in the manifest: keys and array indices. */
export type Path = readonly (string | number)[];

/** Deeper than this is not a manifest anyone wrote by hand; it is refused before recursion can hurt. */
export const MAX_NESTING = 128;

/** The JSON Pointer of a path. */
export function pointerOf(path: Path): string {
  let out = "";
  for (const segment of path) out += "/" + escapePointerSegment(segment);
  return out;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A readable location: `tools[1].inputSchema.properties.title`. */
export function labelOf(path: Path): string {
  if (path.length === 0) return "the manifest";
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** A short JSON rendering of a value for messages. */
export function show(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** "an object", "the string \"x\"", ...: what a value is, for "got ..." in messages. */
export function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "object":
      return "an object";
    case "string":
      return `the string ${show(value)}`;
    case "number":
      return `the number ${show(value)}`;
    case "boolean":
      return String(value);
    default:
      return typeof value;
  }
}

const EXPECTED_NAMES: Readonly<Record<string, string>> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  object: "an object",
  record: "an object",
  array: "an array",
  null: "null",
  integer: "an integer",
};

/** zod's and ajv's type names as prose: "int" -> "an integer". */
export function expectedName(expected: string): string {
  return EXPECTED_NAMES[expected] ?? expected;
}

/** "1 entry", "3 entries". */
export function plural(count: number, one: string, many: string): string {
  return count === 1 ? `1 ${one}` : `${count} ${many}`;
}

/** One manifest being checked: its text, tree, value and the diagnostics found so far. */
export class ManifestCheck {
  readonly diagnostics: Diagnostic[] = [];
  private readonly lineStarts: number[] = [0];
  /** Diagnostic offsets, parallel to `diagnostics`, for sorting. */
  private readonly positions: number[] = [];

  constructor(
    readonly file: string,
    readonly text: string,
  ) {
    for (let index = 0; index < text.length; index++) {
      const code = text.charCodeAt(index);
      if (code === 10) this.lineStarts.push(index + 1);
      else if (code === 13 && text.charCodeAt(index + 1) !== 10) this.lineStarts.push(index + 1);
    }
  }

  /** 1-based line and column of an offset. */
  position(offset: number): { line: number; column: number } {
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.lineStarts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return { line: low + 1, column: offset - this.lineStarts[low]! + 1 };
  }

  report(severity: Diagnostic["severity"], offset: number, path: Path, message: string): void {
    const { line, column } = this.position(offset);
    this.diagnostics.push({ file: this.file, line, column, severity, message, pointer: pointerOf(path) });
    this.positions.push(offset);
  }

  error(node: Node, path: Path, message: string): void {
    this.report("error", node.offset, path, message);
  }

  warning(node: Node, path: Path, message: string): void {
    this.report("warning", node.offset, path, message);
  }

  hasErrorAt(pointer: string): boolean {
    return this.diagnostics.some((diagnostic) => diagnostic.severity === "error" && diagnostic.pointer === pointer);
  }

  hasErrors(): boolean {
    return this.diagnostics.some((diagnostic) => diagnostic.severity === "error");
  }

  sorted(): readonly Diagnostic[] {
    const order = this.diagnostics.map((diagnostic, index) => ({ diagnostic, offset: this.positions[index]!, index }));
    order.sort(
      (a, b) => a.offset - b.offset || (a.diagnostic.severity === b.diagnostic.severity ? 0 : a.diagnostic.severity === "error" ? -1 : 1) || a.index - b.index,
    );
    return order.map((entry) => entry.diagnostic);
  }

  /** Builds the JS value of a node. Later duplicate keys are reported and ignored; `__proto__` stays data. */
  valueOf(node: Node, path: (string | number)[]): unknown {
    if (path.length > MAX_NESTING) {
      this.error(node, path, `nested more than ${MAX_NESTING} levels deep; a manifest is not that deep`);
      return null;
    }
    switch (node.type) {
      case "object": {
        const out: Record<string, unknown> = {};
        const firstAt = new Map<string, Node>();
        for (const property of node.children ?? []) {
          const [keyNode, valueNode] = property.children ?? [];
          if (!keyNode) continue;
          const key = String(keyNode.value);
          path.push(key);
          const earlier = firstAt.get(key);
          if (earlier) {
            const { line } = this.position(earlier.offset);
            this.error(keyNode, path, `duplicate key ${JSON.stringify(key)} in ${labelOf(path.slice(0, -1))}: it is already set on line ${line}; remove one`);
          } else {
            firstAt.set(key, keyNode);
            const value = valueNode ? this.valueOf(valueNode, path) : null;
            Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
          }
          path.pop();
        }
        return out;
      }
      case "array": {
        const children = node.children ?? [];
        const out: unknown[] = [];
        for (let index = 0; index < children.length; index++) {
          path.push(index);
          out.push(this.valueOf(children[index]!, path));
          path.pop();
        }
        return out;
      }
      case "number": {
        const value = node.value as number;
        if (!Number.isFinite(value)) {
          this.error(node, path, `${labelOf(path)}: the number ${this.text.slice(node.offset, node.offset + node.length)} is out of range`);
          return 0;
        }
        return value;
      }
      default:
        return node.value as unknown;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Tree navigation (first occurrence wins, as in valueOf).

/** The first property node of `key` in an object node. */
export function propertyOf(object: Node | undefined, key: string): Node | undefined {
  if (object?.type !== "object") return undefined;
  for (const property of object.children ?? []) {
    if (property.children?.[0]?.value === key) return property;
  }
  return undefined;
}

/** The value node of an object member or array element. */
export function memberOf(node: Node | undefined, key: string | number): Node | undefined {
  if (!node) return undefined;
  if (typeof key === "number") return node.type === "array" ? node.children?.[key] : undefined;
  return propertyOf(node, key)?.children?.[1];
}

/** The deepest existing node along `path` (for a missing member: its parent). */
export function nearestNode(root: Node, path: Path): { node: Node; depth: number } {
  let node = root;
  let depth = 0;
  for (const segment of path) {
    const next = memberOf(node, segment);
    if (!next) break;
    node = next;
    depth++;
  }
  return { node, depth };
}

/** The key node of a property node. */
export function keyNodeOf(property: Node | undefined): Node | undefined {
  return property?.children?.[0];
}

/** The value at `path`, own properties only. */
export function valueAtPath(value: unknown, path: Path): unknown {
  let current = value;
  for (const segment of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = Object.hasOwn(current, segment) ? (current as Record<string | number, unknown>)[segment] : undefined;
  }
  return current;
}
