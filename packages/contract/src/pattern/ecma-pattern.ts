/**
 * ECMA-262 regular expressions (unicode mode, as JSON Schema's `pattern` means them) translated into RE2
 * syntax with the same meaning, so they run on a linear-time engine. Every class whose meaning differs
 * between the two (`.`, `\s`, `\S`, `\p{...}`, escapes) becomes an explicit set of code points; what no
 * linear-time engine can do (lookaround, backreferences) is refused with the construct and its offset.
 */
import { complement, hostClass, normalize, single, type CodePointSet } from "./code-point-set.js";

/** Why a pattern cannot run on the linear-time engine: the construct, its offset in the pattern, the reason. */
export interface PatternRefusal {
  readonly construct: string;
  /** Offset of the construct in the pattern, in UTF-16 code units. */
  readonly index: number;
  readonly reason: string;
}

/**
 * The RE2 translation of a pattern, or why there is none. `exact` is set when the whole pattern is
 * `^X$` (one alternative, anchored at both ends): then it means "the text is X", which RE2 answers faster.
 * `unbounded` says whether it repeats without bound (`*`, `+`, `{n,}`).
 */
export type PatternTranslation =
  | { readonly ok: true; readonly re2: string; readonly exact?: string; readonly unbounded: boolean }
  | { readonly ok: false; readonly refusal: PatternRefusal };

/** RE2 refuses counted repetition above this. */
export const MAX_REPEAT = 1000;
/** Groups nested deeper than this are refused (the translator recurses per group). */
export const MAX_GROUP_DEPTH = 100;

const DIGITS: CodePointSet = [[0x30, 0x39]];
const WORD: CodePointSet = normalize([
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
]);
/** ECMA-262 LineTerminator: what `.` does not match without the `s` flag. */
const LINE_TERMINATORS: CodePointSet = normalize([
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
]);
const DOT = complement(LINE_TERMINATORS);
const CONTROL_ESCAPES: Readonly<Record<string, number>> = { f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };
const SYNTAX_CHARACTERS = "^$\\.*+?()[]{}|/";

class Refused extends Error {
  constructor(readonly refusal: PatternRefusal) {
    super(refusal.reason);
  }
}

function hex(codePoint: number): string {
  return `\\x{${codePoint.toString(16).toUpperCase()}}`;
}

function isPlain(codePoint: number): boolean {
  return (codePoint >= 0x30 && codePoint <= 0x39) || (codePoint >= 0x41 && codePoint <= 0x5a) || (codePoint >= 0x61 && codePoint <= 0x7a);
}

/** A set as an RE2 class; the empty set as a class nothing matches. */
function emitSet(set: CodePointSet): string {
  if (set.length === 0) return "[^\\x{0}-\\x{10FFFF}]";
  const [first] = set;
  if (set.length === 1 && first![0] === first![1]) return emitCodePoint(first![0]);
  let out = "[";
  for (const [from, to] of set) out += from === to ? hex(from) : `${hex(from)}-${hex(to)}`;
  return out + "]";
}

function emitCodePoint(codePoint: number): string {
  return isPlain(codePoint) ? String.fromCharCode(codePoint) : hex(codePoint);
}

/** A recursive-descent reader of one host-valid pattern, writing RE2 as it goes. */
class Translator {
  private index = 0;
  private depth = 0;
  /** Whether a quantifier without an upper bound was read. */
  unbounded = false;

  constructor(private readonly source: string) {}

  translate(): { re2: string; exact?: string } {
    const terms: string[] = [];
    while (this.index < this.source.length && this.peek() !== "|" && this.peek() !== ")") terms.push(this.term());
    if (this.index === this.source.length && terms.length >= 2 && terms[0] === "^" && terms[terms.length - 1] === "$") {
      return { re2: terms.join(""), exact: terms.slice(1, -1).join("") };
    }
    const rest = this.peek() === "|" ? this.disjunctionRest() : "";
    if (this.index < this.source.length) this.unsupported(this.index, this.source[this.index]!);
    return { re2: terms.join("") + rest };
  }

  /** `|` and the alternatives after it, from a `|`. */
  private disjunctionRest(): string {
    let out = "";
    while (this.peek() === "|") {
      this.index++;
      out += "|" + this.alternative();
    }
    return out;
  }

  private peek(offset = 0): string | undefined {
    return this.source[this.index + offset];
  }

  private startsWith(text: string): boolean {
    return this.source.startsWith(text, this.index);
  }

  private refuse(index: number, construct: string, reason: string): never {
    throw new Refused({ construct, index, reason });
  }

  private unsupported(index: number, construct: string): never {
    this.refuse(index, construct, "this construct is not supported by the linear-time engine");
  }

  private disjunction(): string {
    return this.alternative() + this.disjunctionRest();
  }

  private alternative(): string {
    let out = "";
    while (this.index < this.source.length && this.peek() !== "|" && this.peek() !== ")") out += this.term();
    return out;
  }

  private term(): string {
    const start = this.index;
    const char = this.peek()!;
    if (char === "^" || char === "$") {
      this.index++;
      // Without the m flag both are RE2's text anchors: `$` does not match before a final newline.
      return char;
    }
    if (this.startsWith("\\b") || this.startsWith("\\B")) {
      this.index += 2;
      // ECMA-262's \b uses \w = [A-Za-z0-9_], as RE2's does.
      return this.source.slice(start, start + 2);
    }
    const atom = this.atom();
    return atom + this.quantifier();
  }

  private atom(): string {
    const start = this.index;
    const char = this.peek()!;
    if (char === "(") return this.group();
    if (char === ".") {
      this.index++;
      return emitSet(DOT);
    }
    if (char === "[") return emitSet(this.characterClass());
    if (char === "\\") return this.atomEscape();
    const codePoint = this.source.codePointAt(this.index)!;
    if ("*+?{}]|)".includes(char)) this.unsupported(start, char);
    this.index += codePoint > 0xffff ? 2 : 1;
    return emitCodePoint(codePoint);
  }

  private group(): string {
    const start = this.index;
    for (const [open, name] of [
      ["(?<=", "lookbehind"],
      ["(?<!", "negative lookbehind"],
      ["(?=", "lookahead"],
      ["(?!", "negative lookahead"],
    ] as const) {
      if (this.startsWith(open)) {
        this.refuse(
          start,
          `${open}...)`,
          `${name} needs a backtracking engine; patterns run on a linear-time engine, which has no lookaround: write the pattern without it, or check this in the provider`,
        );
      }
    }
    if (this.startsWith("(?:")) {
      this.index += 3;
    } else if (this.startsWith("(?<")) {
      const close = this.source.indexOf(">", this.index);
      if (close < 0) this.unsupported(start, "(?<");
      this.index = close + 1;
    } else if (this.startsWith("(?")) {
      this.unsupported(start, this.source.slice(start, start + 3));
    } else {
      this.index++;
    }
    if (++this.depth > MAX_GROUP_DEPTH)
      this.refuse(start, "(", `groups nested more than ${MAX_GROUP_DEPTH} deep are more than the linear-time engine takes; flatten the pattern`);
    const inner = this.disjunction();
    this.depth--;
    if (this.peek() !== ")") this.unsupported(this.index, this.peek() ?? "end of pattern");
    this.index++;
    return `(?:${inner})`;
  }

  private quantifier(): string {
    const start = this.index;
    let out: string;
    const char = this.peek();
    if (char === "*" || char === "+" || char === "?") {
      this.index++;
      out = char;
      if (char !== "?") this.unbounded = true;
    } else if (char === "{") {
      const match = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.index));
      if (!match) this.unsupported(start, "{");
      this.index += match[0].length;
      if (match[2] !== undefined && match[3] === "") this.unbounded = true;
      for (const count of [match[1], match[3]]) {
        if (count !== undefined && count !== "" && Number(count) > MAX_REPEAT) {
          this.refuse(start, match[0], `a repetition count above ${MAX_REPEAT} is more than the linear-time engine allows; use a smaller count or "maxLength"`);
        }
      }
      out = match[0];
    } else {
      return "";
    }
    if (this.peek() === "?") {
      this.index++;
      out += "?";
    }
    return out;
  }

  private atomEscape(): string {
    const start = this.index;
    const next = this.peek(1);
    if (next !== undefined && next >= "1" && next <= "9") {
      const digits = /^\d+/.exec(this.source.slice(this.index + 1))![0];
      this.refuse(start, `\\${digits}`, "a backreference matches text captured earlier, which no linear-time engine can do: check this in the provider");
    }
    if (next === "k") {
      const close = this.source.indexOf(">", this.index);
      this.refuse(
        start,
        this.source.slice(start, close < 0 ? start + 2 : close + 1),
        "a named backreference matches text captured earlier, which no linear-time engine can do: check this in the provider",
      );
    }
    return emitSet(this.escapeSet(false));
  }

  /** `\` and what follows, as a set; `inClass` allows `\b` (backspace) and `\-`. */
  private escapeSet(inClass: boolean): CodePointSet {
    const start = this.index;
    this.index++;
    const char = this.peek();
    if (char === undefined) this.unsupported(start, "\\");
    this.index++;
    switch (char) {
      case "d":
        return DIGITS;
      case "D":
        return complement(DIGITS);
      case "w":
        return WORD;
      case "W":
        return complement(WORD);
      case "s":
        return hostClass("\\s");
      case "S":
        return complement(hostClass("\\s"));
      case "p":
      case "P": {
        const close = this.source.indexOf("}", this.index);
        if (this.peek() !== "{" || close < 0) this.unsupported(start, `\\${char}`);
        const property = this.source.slice(start, close + 1);
        this.index = close + 1;
        return hostClass(property);
      }
      default:
        if (inClass && char === "b") return single(0x08);
        if (inClass && char === "-") return single(0x2d);
        return single(this.characterEscape(start, char));
    }
  }

  /** The code point of a character escape whose letter (`char`) was just read. */
  private characterEscape(start: number, char: string): number {
    const control = CONTROL_ESCAPES[char];
    if (control !== undefined) return control;
    if (char === "c") {
      const letter = this.source.charCodeAt(this.index);
      this.index++;
      return letter % 32;
    }
    if (char === "0") return 0;
    if (char === "x") {
      const value = Number.parseInt(this.source.slice(this.index, this.index + 2), 16);
      this.index += 2;
      return value;
    }
    if (char === "u") return this.unicodeEscape();
    if (SYNTAX_CHARACTERS.includes(char)) return char.charCodeAt(0);
    return this.unsupported(start, `\\${char}`);
  }

  /** After `\u`: `{X...}`, `XXXX`, or a surrogate pair written as two escapes. */
  private unicodeEscape(): number {
    if (this.peek() === "{") {
      const close = this.source.indexOf("}", this.index);
      const value = Number.parseInt(this.source.slice(this.index + 1, close), 16);
      this.index = close + 1;
      return value;
    }
    const value = Number.parseInt(this.source.slice(this.index, this.index + 4), 16);
    this.index += 4;
    if (value >= 0xd800 && value <= 0xdbff && /^\\u[dD][c-fC-F][0-9a-fA-F]{2}/.test(this.source.slice(this.index))) {
      const trail = Number.parseInt(this.source.slice(this.index + 2, this.index + 6), 16);
      this.index += 6;
      return (value - 0xd800) * 0x400 + (trail - 0xdc00) + 0x10000;
    }
    return value;
  }

  private characterClass(): CodePointSet {
    this.index++;
    const negated = this.peek() === "^";
    if (negated) this.index++;
    const ranges: (readonly [number, number])[] = [];
    while (this.peek() !== "]") {
      if (this.index >= this.source.length) this.unsupported(this.index, "[");
      const first = this.classAtom();
      if (this.peek() === "-" && this.peek(1) !== "]" && this.peek(1) !== undefined) {
        this.index++;
        const last = this.classAtom();
        ranges.push([this.onlyCodePoint(first), this.onlyCodePoint(last)]);
      } else {
        ranges.push(...first);
      }
    }
    this.index++;
    const set = normalize(ranges);
    return negated ? complement(set) : set;
  }

  private onlyCodePoint(set: CodePointSet): number {
    const [range] = set;
    if (set.length !== 1 || range![0] !== range![1]) this.unsupported(this.index, "a class escape in a range");
    return range![0];
  }

  private classAtom(): CodePointSet {
    if (this.peek() === "\\") return this.escapeSet(true);
    const codePoint = this.source.codePointAt(this.index)!;
    this.index += codePoint > 0xffff ? 2 : 1;
    return single(codePoint);
  }
}

/**
 * Translates an ECMA-262 pattern (unicode mode) into RE2 syntax with the same meaning, or says why it
 * cannot: not valid ECMA-262 (judged by this engine's own RegExp), lookaround, a backreference, a
 * repetition count RE2 does not allow.
 */
export function translateEcmaPattern(pattern: string): PatternTranslation {
  try {
    // Syntax is judged by the host's own parser (no matching happens here): the result is ECMA-262's verdict.
    new RegExp(pattern, "u");
  } catch (error) {
    return {
      ok: false,
      refusal: { construct: "pattern", index: 0, reason: `it is not a valid ECMA-262 regular expression: ${(error as Error).message}` },
    };
  }
  try {
    const translator = new Translator(pattern);
    const translated = translator.translate();
    return { ok: true, ...translated, unbounded: translator.unbounded };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, refusal: error.refusal };
    throw error;
  }
}
