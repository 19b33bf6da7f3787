/** Punycode (RFC 3492), the Bootstring encoding of an A-label's part after "xn--". */

const BASE = 36;
const T_MIN = 1;
const T_MAX = 26;
const SKEW = 38;
const DAMP = 700;
const INITIAL_BIAS = 72;
const INITIAL_N = 0x80;
const DELIMITER = 0x2d;
/** RFC 3492 section 6.4: arithmetic fails rather than exceed this. */
const MAX_INT = 0x7fffffff;

/** Section 6.1. */
function adapt(delta: number, points: number, first: boolean): number {
  delta = first ? Math.floor(delta / DAMP) : delta >> 1;
  delta += Math.floor(delta / points);
  let k = 0;
  while (delta > ((BASE - T_MIN) * T_MAX) >> 1) {
    delta = Math.floor(delta / (BASE - T_MIN));
    k += BASE;
  }
  return k + Math.floor(((BASE - T_MIN + 1) * delta) / (delta + SKEW));
}

function threshold(k: number, bias: number): number {
  return k <= bias ? T_MIN : k >= bias + T_MAX ? T_MAX : k - bias;
}

/** The value of a digit (a-z, A-Z: 0-25; 0-9: 26-35), or -1. */
function digitValue(code: number): number {
  if (code >= 0x61 && code <= 0x7a) return code - 0x61;
  if (code >= 0x41 && code <= 0x5a) return code - 0x41;
  if (code >= 0x30 && code <= 0x39) return code - 22;
  return -1;
}

function digitOf(value: number): string {
  return String.fromCharCode(value < 26 ? 0x61 + value : value + 22);
}

/** The code points `input` encodes (section 6.2), or undefined when it is not valid Punycode. */
export function decodePunycode(input: string): number[] | undefined {
  const delimiter = input.lastIndexOf("-");
  const output: number[] = [];
  for (let index = 0; index < Math.max(delimiter, 0); index++) {
    const code = input.charCodeAt(index);
    if (code >= 0x80) return undefined;
    output.push(code);
  }
  let n = INITIAL_N;
  let bias = INITIAL_BIAS;
  let i = 0;
  for (let index = delimiter > 0 ? delimiter + 1 : 0; index < input.length; ) {
    const old = i;
    let weight = 1;
    for (let k = BASE; ; k += BASE) {
      if (index >= input.length) return undefined;
      const digit = digitValue(input.charCodeAt(index++));
      if (digit < 0 || digit > Math.floor((MAX_INT - i) / weight)) return undefined;
      i += digit * weight;
      const t = threshold(k, bias);
      if (digit < t) break;
      if (weight > Math.floor(MAX_INT / (BASE - t))) return undefined;
      weight *= BASE - t;
    }
    const length = output.length + 1;
    bias = adapt(i - old, length, old === 0);
    if (Math.floor(i / length) > MAX_INT - n) return undefined;
    n += Math.floor(i / length);
    i %= length;
    if (n > 0x10ffff) return undefined;
    output.splice(i++, 0, n);
  }
  return output;
}

/** The Punycode of `codePoints` (section 6.3), lowercase, or undefined on overflow. */
export function encodePunycode(codePoints: readonly number[]): string | undefined {
  let output = "";
  for (const codePoint of codePoints) if (codePoint < 0x80) output += String.fromCharCode(codePoint);
  const basic = output.length;
  if (basic > 0) output += String.fromCharCode(DELIMITER);
  let n = INITIAL_N;
  let delta = 0;
  let bias = INITIAL_BIAS;
  for (let handled = basic; handled < codePoints.length; ) {
    let next = Infinity;
    for (const codePoint of codePoints) if (codePoint >= n && codePoint < next) next = codePoint;
    if (next - n > Math.floor((MAX_INT - delta) / (handled + 1))) return undefined;
    delta += (next - n) * (handled + 1);
    n = next;
    for (const codePoint of codePoints) {
      if (codePoint < n && ++delta > MAX_INT) return undefined;
      if (codePoint !== n) continue;
      let q = delta;
      for (let k = BASE; ; k += BASE) {
        const t = threshold(k, bias);
        if (q < t) break;
        output += digitOf(t + ((q - t) % (BASE - t)));
        q = Math.floor((q - t) / (BASE - t));
      }
      output += digitOf(q);
      bias = adapt(delta, handled + 1, handled === basic);
      delta = 0;
      handled++;
    }
    delta++;
    n++;
  }
  return output;
}
