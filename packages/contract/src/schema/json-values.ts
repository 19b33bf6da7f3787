/** JSON Schema's notions of equality, uniqueness, string length and multiples, on JSON values. */
import { canonicalJson } from "../canonical-json.js";

/** JSON equality: 1 and 1.0 are one number, object member order does not matter, arrays are ordered. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index++) if (!jsonEqual(a[index], b[index])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key) || !jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/** The first pair of equal items `[earlier, later]`, or undefined when all differ; linear in the array. */
export function firstDuplicate(items: readonly unknown[]): [number, number] | undefined {
  // Scalars are their own key; containers are keyed by canonical JSON, which is JSON equality.
  const scalars = new Map<unknown, number>();
  const containers = new Map<string, number>();
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    if (typeof item !== "object" || item === null) {
      const seen = scalars.get(item);
      if (seen !== undefined) return [seen, index];
      scalars.set(item, index);
      continue;
    }
    let key: string;
    try {
      key = canonicalJson(item);
    } catch {
      // Not JSON (a raw value that skipped prepareInput): compare pairwise.
      return pairwiseDuplicate(items);
    }
    const seen = containers.get(key);
    if (seen !== undefined) return [seen, index];
    containers.set(key, index);
  }
  return undefined;
}

function pairwiseDuplicate(items: readonly unknown[]): [number, number] | undefined {
  for (let later = 1; later < items.length; later++) {
    for (let earlier = 0; earlier < later; earlier++) if (jsonEqual(items[earlier], items[later])) return [earlier, later];
  }
  return undefined;
}

/** Length in Unicode code points, as JSON Schema counts it (a surrogate pair is one character). */
export function codePointLength(text: string): number {
  let length = text.length;
  for (let index = 0; index < text.length - 1; index++) {
    const code = text.charCodeAt(index);
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        length--;
        index++;
      }
    }
  }
  return length;
}

/** A finite number as an exact decimal: digits × 10^exponent (from its shortest round-trip form). */
function decimal(value: number): { digits: bigint; exponent: number } {
  const [mantissa, exp = "0"] = String(Math.abs(value)).split("e");
  const [whole, fraction = ""] = mantissa!.split(".");
  return { digits: BigInt(whole! + fraction), exponent: Number(exp) - fraction.length };
}

/**
 * Whether `value` is an integer multiple of `divisor`, exactly, on the decimal values the JSON text wrote
 * (0.0075 is a multiple of 0.0001, although their binary quotient is not an integer).
 */
export function isMultipleOf(value: number, divisor: number): boolean {
  if (Number.isSafeInteger(value) && Number.isSafeInteger(divisor)) return value % divisor === 0;
  const a = decimal(value);
  const b = decimal(divisor);
  if (a.exponent >= b.exponent) return (a.digits * 10n ** BigInt(a.exponent - b.exponent)) % b.digits === 0n;
  return a.digits % (b.digits * 10n ** BigInt(b.exponent - a.exponent)) === 0n;
}
