/**
 * A small JSONC printer for files a person reviews: objects whose members may carry `//` comments, and
 * plain JSON values printed the way the repository's manifests are (short objects and arrays on one
 * line). Whatever came from outside is printed so that it cannot change the file's structure or hide
 * from the reader: comments never hold a line break, and characters that reorder or hide text are
 * written as `\u` escapes inside strings (the same value, shown).
 */
import { terminalText } from "../terminal-text.js";

/** A JSON value as JSON.parse returns it. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** An object member, with the comment lines printed above it. */
export interface JsoncMember {
  readonly key: string;
  readonly value: JsoncNode;
  readonly comments?: readonly string[];
}

/** An array item, with the comment lines printed above it. */
export interface JsoncItem {
  readonly value: JsoncNode;
  readonly comments?: readonly string[];
}

/** What the printer prints: an object or array with comments, or a plain JSON value. */
export type JsoncNode =
  | { readonly kind: "object"; readonly members: readonly JsoncMember[] }
  | { readonly kind: "array"; readonly items: readonly JsoncItem[] }
  | { readonly kind: "json"; readonly value: JsonValue };

/** An object node. */
export const jsoncObject = (members: readonly (JsoncMember | undefined)[]): JsoncNode => ({
  kind: "object",
  members: members.filter((member) => member !== undefined),
});
/** An array node. */
export const jsoncArray = (items: readonly JsoncItem[]): JsoncNode => ({ kind: "array", items });
/** A plain JSON value node. */
export const json = (value: JsonValue): JsoncNode => ({ kind: "json", value });

const INDENT = "  ";
/** Where a one-line object or array stops being easier to read than a block. */
const LINE_WIDTH = 100;
/** Comments wrap before this column. */
const COMMENT_WIDTH = 110;

/** The whole file: the header comment lines, then the value, then a line end. */
export function printJsonc(header: readonly string[], root: JsoncNode): string {
  return `${commentLines(header, "").join("\n")}\n${printNode(root, "")}\n`;
}

function printNode(node: JsoncNode, indent: string): string {
  if (node.kind === "json") return printJson(node.value, indent);
  const inner = indent + INDENT;
  const entries =
    node.kind === "object"
      ? node.members.map((member) => ({ comments: member.comments, text: `${jsonString(member.key)}: ${printNode(member.value, inner)}` }))
      : node.items.map((item) => ({ comments: item.comments, text: printNode(item.value, inner) }));
  if (entries.length === 0) return node.kind === "object" ? "{}" : "[]";
  const lines = entries.flatMap((entry) => [...commentLines(entry.comments ?? [], inner), `${inner}${entry.text},`]);
  const [open, close] = node.kind === "object" ? ["{", "}"] : ["[", "]"];
  return `${open}\n${lines.join("\n")}\n${indent}${close}`;
}

/** A JSON value: on one line when it is short and holds no object in an array, else a block. */
function printJson(value: JsonValue, indent: string): string {
  if (value === null || typeof value !== "object") return jsonString(value);
  const oneLine = inline(value);
  if (oneLine !== undefined && indent.length + oneLine.length <= LINE_WIDTH) return oneLine;
  const inner = indent + INDENT;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((item: JsonValue) => `${inner}${printJson(item, inner)},`).join("\n")}\n${indent}]`;
  }
  const entries = Object.entries(value);
  if (entries.length === 0) return "{}";
  return `{\n${entries.map(([key, item]) => `${inner}${jsonString(key)}: ${printJson(item, inner)},`).join("\n")}\n${indent}}`;
}

/** `{ "type": "string" }`, `["a", "b"]`; undefined for what reads better as a block. */
function inline(value: JsonValue): string | undefined {
  if (value === null || typeof value !== "object") return jsonString(value);
  if (Array.isArray(value)) {
    const items = value.map((item: JsonValue) => (item !== null && typeof item === "object" && !Array.isArray(item) ? undefined : inline(item)));
    return items.includes(undefined) ? undefined : `[${items.join(", ")}]`;
  }
  const entries = Object.entries(value).map(([key, item]) => {
    const text = inline(item);
    return text === undefined ? undefined : `${jsonString(key)}: ${text}`;
  });
  if (entries.length === 0) return "{}";
  return entries.includes(undefined) ? undefined : `{ ${entries.join(", ")} }`;
}

/** Characters that reorder or hide text, or end a line in some editors; inside a JSON string only. */
const HIDDEN_IN_STRINGS = /[\u007F-\u009F\p{Cf}\p{Zl}\p{Zp}]/gu;

/** JSON text of a primitive, with HIDDEN_IN_STRINGS written as `\u` escapes (JSON.parse gives the same value back). */
function jsonString(value: string | number | boolean | null): string {
  return JSON.stringify(value).replace(HIDDEN_IN_STRINGS, (char) =>
    [...Array(char.length).keys()].map((index) => `\\u${char.charCodeAt(index).toString(16).padStart(4, "0")}`).join(""),
  );
}

/** `// ` lines, wrapped, each one line whatever the text holds. */
function commentLines(comments: readonly string[], indent: string): string[] {
  return comments.flatMap((comment) => wrap(commentText(comment), COMMENT_WIDTH - indent.length - 3).map((line) => `${indent}// ${line}`.trimEnd()));
}

/** Text safe in a `//` comment: line ends become spaces; controls and hidden characters become `\u{…}`. */
export function commentText(text: string): string {
  return terminalText(text.replace(/\r\n|[\r\n]/g, " "));
}

/** Words into lines of at most `width` characters (a longer word gets a line of its own). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines;
}
