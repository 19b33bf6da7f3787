/** Hostile values for the fuzz tests of every wire entry point: edge strings and JSON-ish junk built from them. */
import fc from "fast-check";

/** Strings a parser or a store may trip on: NUL, lone surrogates, bidi overrides, BOM, and `extra` of the entry point. */
export function edgeStrings(options: { readonly maxLength: number; readonly extra: readonly string[] }): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ unit: "grapheme", maxLength: options.maxLength }),
    fc.string({ unit: "binary", maxLength: options.maxLength }),
    fc.constantFrom("\u0000", "\uD800", "\u202Eabc", "\uFEFF", "%00", ...options.extra),
  );
}

/** Any JSON-ish value: `strings` as leaves and keys, `keys` (prototype keys and the like) mixed in. */
export function junkValues(strings: fc.Arbitrary<string>, options: { readonly keys: readonly string[]; readonly width: number }): fc.Arbitrary<unknown> {
  return fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      strings,
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie("value"), { maxLength: options.width }),
      fc.dictionary(fc.oneof(strings, fc.constantFrom(...options.keys)), tie("value"), { maxKeys: options.width }),
    ),
  })).value;
}
