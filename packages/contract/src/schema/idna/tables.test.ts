import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { idnaTablesSource } from "../../../scripts/idna-tables.mjs";
import { idnaTables } from "./tables-loaded.js";
import { UNICODE_VERSION } from "./tables.js";

describe("IDNA tables", () => {
  it("are what scripts/idna-tables.mjs generates (run `pnpm --filter @toolpact/contract idna-tables` after a change)", async () => {
    const committed = readFileSync(new URL("./tables.ts", import.meta.url), "utf8");
    expect(committed === (await idnaTablesSource()), "src/schema/idna/tables.ts is stale").toBe(true);
  });

  it("are of the Unicode version of this engine's RegExp and normalize", () => {
    // The contextual rules take Script and General_Category from RegExp, and U-labels are checked for NFC with
    // String.prototype.normalize: a Node with another ICU needs tables of its Unicode version.
    expect(`${process.versions.unicode}.0`).toBe(UNICODE_VERSION);
  });

  it("give RFC 5892's derived property values", () => {
    const { derived } = idnaTables();
    const value = (codePoint: number): string => derived.get(codePoint);
    expect([0x61, 0x7a, 0x30, 0x2d, 0xdf, 0x3c2, 0x3007, 0xac00, 0x4e00, 0x0915, 0x094d].map(value)).toEqual(Array(11).fill("P"));
    expect([0x200c, 0x200d].map(value)).toEqual(["J", "J"]);
    expect([0xb7, 0x375, 0x5f3, 0x5f4, 0x30fb, 0x660, 0x669, 0x6f0, 0x6f9].map(value)).toEqual(Array(9).fill("O"));
    // Upper case, a space, a symbol, an exception, Old Hangul Jamo, an ignorable block, a compatibility form,
    // a noncharacter, a surrogate, private use.
    expect([0x41, 0x20, 0x24, 0x640, 0x1100, 0x20d0, 0x1d100, 0xff11, 0xffff, 0xd800, 0xe000].map(value)).toEqual(Array(11).fill("D"));
    expect([0x378, 0x50000, 0xe01f0].map(value)).toEqual(["U", "U", "U"]);
    expect([0, 0x10ffff].map(value)).toEqual(["D", "D"]);
  });

  it("give Bidi_Class, Joining_Type and the viramas", () => {
    const { bidi, joining, virama } = idnaTables();
    expect([0x61, 0x5d0, 0x627, 0x660, 0x30, 0x2d, 0x2c, 0x25, 0x21, 0x200c, 0x94d, 0x20].map((c) => bidi.get(c)).join(" ")).toBe("L R A N E S C T O B M X");
    expect([0x628, 0x627, 0x64b, 0x41, 0x640].map((c) => joining.get(c)).join(" ")).toBe("D R T U U");
    expect([0x94d, 0x9cd, 0x1039, 0x915].map((c) => virama.get(c)).join(" ")).toBe("V V V N");
  });
});
