/**
 * Text as the confirmation page shows it: HTML-escaped, with every character that could hide or
 * reorder what a person reads (controls, bidirectional and zero-width formatting, line and paragraph
 * separators, lone surrogates, blank-looking letters) replaced by a visible badge naming it.
 */

const ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

/** Controls, format characters (bidi, zero-width, tags), separators, surrogates, private use, unassigned, blank letters. */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}\u115F\u1160\u3164\uFFA0\u2800]/gu;

const NAMES: Readonly<Record<string, string>> = {
  "\t": "TAB \\t",
  "\n": "LINE FEED \\n",
  "\r": "CARRIAGE RETURN \\r",
  "\u0000": "NUL",
  "\u061C": "ARABIC LETTER MARK",
  "\u200B": "ZERO WIDTH SPACE",
  "\u200C": "ZERO WIDTH NON-JOINER",
  "\u200D": "ZERO WIDTH JOINER",
  "\u200E": "LEFT-TO-RIGHT MARK",
  "\u200F": "RIGHT-TO-LEFT MARK",
  "\u2028": "LINE SEPARATOR",
  "\u2029": "PARAGRAPH SEPARATOR",
  "\u202A": "LEFT-TO-RIGHT EMBEDDING",
  "\u202B": "RIGHT-TO-LEFT EMBEDDING",
  "\u202C": "POP DIRECTIONAL FORMATTING",
  "\u202D": "LEFT-TO-RIGHT OVERRIDE",
  "\u202E": "RIGHT-TO-LEFT OVERRIDE",
  "\u2060": "WORD JOINER",
  "\u2066": "LEFT-TO-RIGHT ISOLATE",
  "\u2067": "RIGHT-TO-LEFT ISOLATE",
  "\u2068": "FIRST STRONG ISOLATE",
  "\u2069": "POP DIRECTIONAL ISOLATE",
  "\uFEFF": "ZERO WIDTH NO-BREAK SPACE",
};

/** The badge text of a hidden character: its escape for the common controls, else U+XXXX. */
function badgeOf(char: string): { text: string; title: string } {
  const code = char.codePointAt(0)!;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  const name = NAMES[char];
  const text = char === "\t" ? "\\t" : char === "\n" ? "\\n" : char === "\r" ? "\\r" : hex;
  return { text, title: name === undefined ? `${hex}, an invisible or control character` : `${hex} ${name}` };
}

/**
 * How line feeds show: `badge` (inline text: a badge only), `badge-and-break` (free text in a `<pre>`:
 * a badge, then the break), `layout` (JSON text, whose line feeds are its own indentation: plain breaks;
 * line feeds inside its strings are escapes already).
 */
export type LineBreaks = "badge" | "badge-and-break" | "layout";

/** `text` as safe HTML with every hidden character shown as a badge. */
export function visibleHtml(text: string, lineBreaks: LineBreaks = "badge"): string {
  let out = "";
  let last = 0;
  for (const match of text.matchAll(HIDDEN)) {
    const char = match[0];
    out += escapeHtml(text.slice(last, match.index));
    last = match.index + char.length;
    if (char === "\n" && lineBreaks === "layout") {
      out += "\n";
      continue;
    }
    const badge = badgeOf(char);
    out += `<span class="hidden-char" title="${escapeHtml(badge.title)}">${escapeHtml(badge.text)}</span>`;
    if (char === "\n" && lineBreaks === "badge-and-break") out += "\n";
  }
  return out + escapeHtml(text.slice(last));
}

/**
 * JSON, indented, with object members in a stable order: sorted by UTF-16 code units as RFC 8785 does
 * (the canonical order the approval's digest is taken in), not in the order a caller chose.
 */
export function sortedJson(value: unknown, indent = ""): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((item) => inner + sortedJson(item, inner)).join(",\n")}\n${indent}]`;
  }
  const keys = Object.keys(value).sort();
  if (keys.length === 0) return "{}";
  const record = value as Record<string, unknown>;
  return `{\n${keys.map((key) => `${inner}${JSON.stringify(key)}: ${sortedJson(record[key], inner)}`).join(",\n")}\n${indent}}`;
}
