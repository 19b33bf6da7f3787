import { describe, expect, it } from "vitest";
import { compileLinearPattern } from "./linear-pattern.js";

function linear(source: string): (text: string) => boolean {
  const compiled = compileLinearPattern(source);
  if (!compiled.ok) throw new Error(compiled.refusal.reason);
  return (text) => compiled.pattern.test(text);
}

/** Texts on which RE2's and ECMA-262's classes differ: every whitespace, line terminator, astral and BOM. */
const TEXTS = [
  "",
  "a",
  "abc",
  "Report",
  "Report\rBcc: attacker@example.com",
  "line\n",
  "\n",
  "\r",
  "\u2028",
  "\u2029",
  "\v",
  "\f",
  "\t",
  "\u00a0",
  "\u1680",
  "\u2000",
  "\u200a",
  "\u200b",
  "\u202f",
  "\u205f",
  "\u3000",
  "\ufeff",
  "\u0085",
  "😀",
  "a😀b",
  "é",
  "ß",
  "Ω",
  "٣",
  "_",
  "-",
  "x y",
  "x\u00a0y",
  "A1_",
  "café 2024",
  "\u0000",
  "\\",
  "[]",
  "a\nb",
];

const PATTERNS = [
  "^.*$",
  "^\\S+$",
  "^\\s+$",
  "\\s",
  "^[^\\s]+$",
  "^[\\S]+$",
  "^.$",
  "^..$",
  "^\\w+$",
  "\\W",
  "^\\d+$",
  "\\D",
  "\\bRe",
  "t\\b",
  "a\\B",
  "^[^a]$",
  "^[\\s\\d]+$",
  "^\\p{Letter}+$",
  "^\\P{L}$",
  "^\\p{Script=Greek}$",
  "^\\p{Lu}",
  "^\\p{Nd}+$",
  "[\\u{1F600}-\\u{1F64F}]",
  "^\\uD83D\\uDE00$",
  "^[😀]$",
  "a$",
  "^a",
  "(?:a|b)*c?$",
  "^(?<word>[a-z]+) \\k?",
  "\\u00e9",
  "\\x41",
  "\\cJ",
  "[\\b]",
  "^[^]$",
  "[]",
  "^\\0$",
  "^[a-z-]+$",
  "^\\/$",
  "^\\.\\*\\+$",
  "^(a+)+$",
].filter((source) => !source.includes("\\k"));

describe("patterns have ECMA-262 meaning on the linear-time engine", () => {
  it("agrees with JavaScript's own RegExp (u flag) on every class that differs between the two", () => {
    const disagreements: string[] = [];
    for (const source of PATTERNS) {
      const native = new RegExp(source, "u");
      const ours = linear(source);
      for (const text of TEXTS) {
        if (native.test(text) !== ours(text)) disagreements.push(`${JSON.stringify(source)} on ${JSON.stringify(text)}`);
      }
    }
    expect(disagreements).toEqual([]);
  });

  it('keeps "Report\\rBcc: ..." out of "^.*$" (one line) and a no-break space out of "^\\S+$" (no whitespace)', () => {
    expect(linear("^.*$")("Report\rBcc: attacker@example.com")).toBe(false);
    expect(linear("^.*$")("Report")).toBe(true);
    expect(linear("^\\S+$")("no\u00a0break")).toBe(false);
    for (const space of ["\v", "\u00a0", "\u2028", "\ufeff", "\u3000"]) expect(linear("\\s")(space), JSON.stringify(space)).toBe(true);
    expect(linear("^a$")("a\n")).toBe(false);
  });

  it("has no position inside a surrogate pair, as ECMA-262 says (V8 finds \\B between the two halves of 😀)", () => {
    expect(linear("\\B")("a😀b")).toBe(false);
    expect(linear("\\B")("ab")).toBe(true);
    expect(linear("[^\\u{1F600}]")("😀")).toBe(false);
  });

  it("runs catastrophic patterns in linear time", () => {
    const started = performance.now();
    expect(linear("^(a+)+$")("a".repeat(100_000) + "!")).toBe(false);
    expect(linear("^(\\s*)*$")(" ".repeat(100_000) + "x")).toBe(false);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
