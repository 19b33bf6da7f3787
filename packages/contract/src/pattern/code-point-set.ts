/** Sets of Unicode code points as sorted, disjoint, non-adjacent inclusive ranges. */

/** The highest code point. */
export const MAX_CODE_POINT = 0x10ffff;

/** A set of code points: `[from, to]` ranges, sorted, disjoint and never adjacent. */
export type CodePointSet = readonly (readonly [number, number])[];

/** Sorts and merges ranges into a CodePointSet. */
export function normalize(ranges: readonly (readonly [number, number])[]): CodePointSet {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [from, to] of sorted) {
    const last = out[out.length - 1];
    if (last && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else out.push([from, to]);
  }
  return out;
}

/** Every code point not in `set`. */
export function complement(set: CodePointSet): CodePointSet {
  const out: [number, number][] = [];
  let next = 0;
  for (const [from, to] of set) {
    if (from > next) out.push([next, from - 1]);
    next = to + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

/** The set of one code point. */
export function single(codePoint: number): CodePointSet {
  return [[codePoint, codePoint]];
}

/** Every code point, in a few strings: [text, first code point, UTF-16 units per code point]. */
let everyCodePoint: readonly (readonly [string, number, number])[] | undefined;

function codePointsFrom(from: number, to: number): string {
  const parts: string[] = [];
  const batch: number[] = [];
  for (let codePoint = from; codePoint <= to; codePoint++) {
    batch.push(codePoint);
    if (batch.length === 8192) {
      parts.push(String.fromCodePoint(...batch));
      batch.length = 0;
    }
  }
  parts.push(String.fromCodePoint(...batch));
  return parts.join("");
}

const hostClasses = new Map<string, CodePointSet>();

/**
 * The code points the host's own RegExp matches with the class escape `escape` (`\s`, `\p{Letter}`,
 * `\P{Script=Greek}`, ...) in unicode mode: the ECMA-262 meaning as this JavaScript engine defines it,
 * Unicode version included. One native pass over every code point; cached per escape.
 * @throws SyntaxError when the host does not know the escape (an unknown property name).
 */
export function hostClass(name: string): CodePointSet {
  const known = hostClasses.get(name);
  if (known) return known;
  const runs = new RegExp(`[${name}]+`, "gu");
  everyCodePoint ??= [
    [codePointsFrom(0, 0xd7ff), 0, 1],
    [codePointsFrom(0xe000, 0xffff), 0xe000, 1],
    [codePointsFrom(0x10000, MAX_CODE_POINT), 0x10000, 2],
  ];
  const ranges: [number, number][] = [];
  for (const [text, first, width] of everyCodePoint) {
    for (const match of text.matchAll(runs)) {
      ranges.push([first + match.index / width, first + (match.index + match[0].length) / width - 1]);
    }
  }
  // Lone surrogates are code points of their own in unicode mode.
  const one = new RegExp(`^[${name}]$`, "u");
  for (let surrogate = 0xd800; surrogate <= 0xdfff; surrogate++) {
    if (one.test(String.fromCharCode(surrogate))) ranges.push([surrogate, surrogate]);
  }
  const set = normalize(ranges);
  hostClasses.set(escape, set);
  return set;
}
