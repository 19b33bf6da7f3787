import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodePunycode, encodePunycode } from "./punycode.js";

const codePoints = (text: string): number[] => Array.from(text, (character) => character.codePointAt(0)!);

/** RFC 3492 section 7.1's sample strings. */
const SAMPLES: [string, string][] = [
  ["(A) Arabic (Egyptian)", "\u0644\u064A\u0647\u0645\u0627\u0628\u062A\u0643\u0644\u0645\u0648\u0634\u0639\u0631\u0628\u064A\u061F", "egbpdaj6bu4bxfgehfvwxn"],
  ["(B) Chinese (simplified)", "\u4ED6\u4EEC\u4E3A\u4EC0\u4E48\u4E0D\u8BF4\u4E2D\u6587", "ihqwcrb4cv8a8dqg056pqjye"],
  ["(L) 3<nen>B<gumi><kinpachi><sensei>", "3\u5E74B\u7D44\u91D1\u516B\u5148\u751F", "3B-ww4c5e180e575a65lsy2b"],
  ["(S) -> $1.00 <-", "-> $1.00 <-", "-> $1.00 <--"],
].map(([, text, encoded]) => [text!, encoded!]);

describe("Punycode (RFC 3492)", () => {
  it("encodes and decodes the RFC's samples", () => {
    for (const [text, encoded] of SAMPLES) {
      expect(encodePunycode(codePoints(text)), text).toBe(encoded);
      expect(decodePunycode(encoded), encoded).toEqual(codePoints(text));
    }
  });

  it("decodes digits in either case", () => {
    expect(decodePunycode("IHQWCRB4CV8A8DQG056PQJYE")).toEqual(codePoints("\u4ED6\u4EEC\u4E3A\u4EC0\u4E48\u4E0D\u8BF4\u4E2D\u6587"));
  });

  it("refuses what is not Punycode", () => {
    expect(decodePunycode("X")).toBeUndefined(); // a delta that needs more digits than there are
    expect(decodePunycode("a-b!")).toBeUndefined(); // not a digit
    expect(decodePunycode("ü-abc")).toBeUndefined(); // a non-basic code point before the delimiter
    expect(decodePunycode("-9uc")).toBeUndefined(); // no basic code points, so the delimiter is a bad digit
    expect(decodePunycode("99999999999")).toBeUndefined(); // overflow
    expect(decodePunycode("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz")).toBeUndefined(); // overflow of the weight
  });

  it("round-trips any code points", () => {
    const label = fc.array(fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0x10ffff })), { maxLength: 40 });
    fc.assert(
      fc.property(label, (points) => {
        const encoded = encodePunycode(points);
        expect(encoded).toBeDefined();
        expect(decodePunycode(encoded!)).toEqual(points);
      }),
      { numRuns: 2_000 },
    );
  });
});
