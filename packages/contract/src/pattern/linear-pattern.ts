/** Patterns compiled for the linear-time engine, with ECMA-262 meaning. */
import { RE2JS } from "re2js";
import { translateEcmaPattern, type PatternRefusal } from "./ecma-pattern.js";

/** A compiled pattern: `test` searches anywhere in the text, as ECMA-262's RegExp.prototype.test does. */
export interface LinearPattern {
  readonly source: string;
  /** Instructions of the RE2 program: the engine's work per character is at most proportional to it. */
  readonly programSize: number;
  /**
   * Whether a match can run as long as the text: the pattern searches (is not `^...$`) or repeats without
   * bound. Otherwise no match is longer than the program, and matching stops there.
   */
  readonly unbounded: boolean;
  test(text: string): boolean;
}

/** A compiled pattern, or why the pattern is refused. */
export type PatternCompilation = { readonly ok: true; readonly pattern: LinearPattern } | { readonly ok: false; readonly refusal: PatternRefusal };

const compiled = new Map<string, PatternCompilation>();

/**
 * Compiles an ECMA-262 pattern (unicode mode) for RE2 (re2js): matching time is linear in the text, so no
 * pattern can stall the process. Cached per pattern.
 */
export function compileLinearPattern(source: string): PatternCompilation {
  const known = compiled.get(source);
  if (known) return known;
  const result = compileUncached(source);
  compiled.set(source, result);
  return result;
}

function compileUncached(source: string): PatternCompilation {
  const translation = translateEcmaPattern(source);
  if (!translation.ok) return translation;
  let test: (text: string) => boolean;
  let programSize: number;
  try {
    if (translation.exact === undefined) {
      const searching = RE2JS.compile(translation.re2);
      test = (text) => searching.test(text);
      programSize = searching.programSize();
    } else {
      // `^X$` means "the whole text is X": RE2's anchored match answers that in a third of the time.
      const whole = RE2JS.compile(translation.exact);
      test = (text) => whole.testExact(text);
      programSize = whole.programSize();
    }
  } catch (error) {
    const reason = (error as Error).message.replace(/^error parsing regexp: /, "");
    return { ok: false, refusal: { construct: "pattern", index: 0, reason: `the linear-time engine cannot run it (${reason})` } };
  }
  const unbounded = translation.exact === undefined || translation.unbounded;
  return { ok: true, pattern: Object.freeze({ source, programSize, unbounded, test }) };
}

/** A refusal as one sentence: `pattern "(a)\\1" cannot be used: ...`. */
export function describePatternRefusal(source: string, refusal: PatternRefusal): string {
  const where = refusal.construct === "pattern" ? "" : ` (${refusal.construct} at offset ${refusal.index})`;
  return `pattern ${JSON.stringify(source)} cannot be used${where}: ${refusal.reason}`;
}

/**
 * Program size × characters a pattern may scan. Matching is linear, but when RE2's DFA gives up on a
 * pattern built to blow it up (`[ab]*a[ab]{400}c`), its NFA pays about 20 ns per instruction per character:
 * this bound keeps the worst case near a second. A `^...$` pattern without unbounded repetition scans at
 * most as many characters as it has instructions.
 */
export const MAX_PATTERN_WORK = 2 ** 26;

/**
 * Why a pattern may cost too much on the strings it meets, or undefined: a `pattern` meets strings up to
 * its schema's `maxLength` (`declared`), else up to the input limit, as property names always do.
 */
export function patternWorkProblem(pattern: LinearPattern, longest: number, what: "value" | "property name", declared: boolean): string | undefined {
  const scanned = pattern.unbounded ? longest : Math.min(longest, pattern.programSize);
  if (pattern.programSize * scanned <= MAX_PATTERN_WORK) return undefined;
  const reason = `it compiles to ${pattern.programSize} instructions, and on a ${what} of ${declared ? `up to ${longest} characters` : `the input limit's ${longest} characters`} its worst case could stall the server`;
  const allowed = Math.floor(MAX_PATTERN_WORK / pattern.programSize);
  const fix =
    what === "value"
      ? `${declared ? "lower" : "add"} "maxLength" (at most ${allowed}) or simplify the pattern`
      : `simplify the pattern (at most ${Math.floor(MAX_PATTERN_WORK / longest)} instructions)`;
  return `pattern ${JSON.stringify(pattern.source)} cannot be used: ${reason}; ${fix}`;
}
