/** Patterns compiled for the linear-time engine, with ECMA-262 meaning. */
import { RE2JS } from "re2js";
import { translateEcmaPattern, type PatternRefusal } from "./ecma-pattern.js";

/** A compiled pattern: `test` searches anywhere in the text, as ECMA-262's RegExp.prototype.test does. */
export interface LinearPattern {
  readonly source: string;
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
  try {
    if (translation.exact === undefined) {
      const searching = RE2JS.compile(translation.re2);
      test = (text) => searching.test(text);
    } else {
      // `^X$` means "the whole text is X": RE2's anchored match answers that in a third of the time.
      const whole = RE2JS.compile(translation.exact);
      test = (text) => whole.testExact(text);
    }
  } catch (error) {
    const reason = (error as Error).message.replace(/^error parsing regexp: /, "");
    return { ok: false, refusal: { construct: "pattern", index: 0, reason: `the linear-time engine cannot run it (${reason})` } };
  }
  return { ok: true, pattern: Object.freeze({ source, test }) };
}

/** A refusal as one sentence: `pattern "(a)\\1" cannot be used: ...`. */
export function describePatternRefusal(source: string, refusal: PatternRefusal): string {
  const where = refusal.construct === "pattern" ? "" : ` (${refusal.construct} at offset ${refusal.index})`;
  return `pattern ${JSON.stringify(source)} cannot be used${where}: ${refusal.reason}`;
}
