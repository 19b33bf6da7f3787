// One home per pattern (issue 25): the name patterns (plugin ids, tool names, tool patterns, seam keys) and
// the PostgreSQL schema-name pattern are defined once, in @toolpact/contract's names.ts; every other package
// imports them. This check reads the source of every package and of codegen and fails, naming file:line,
// where a second definition appears: a regex literal or string that spells one of the patterns again.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const HOME = "packages/contract/src/names.ts";

/** A fact and what spelling it again looks like (in a regex literal, a string, or String.raw; `(` or `(?:`). */
interface Fact {
  readonly name: string;
  readonly spelled: RegExp;
}

const FACTS: readonly Fact[] = [
  // [a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)*: plugin ids, and the plugin part of tool patterns and seam keys.
  { name: "the plugin-id pattern", spelled: /\[a-z\]\[a-z0-9-\]\*\((?:\?:)?\\{1,2}\.\[a-z\]\[a-z0-9-\]\*\)\*/ },
  // [a-z][a-z0-9]*(-[a-z0-9]+)*: tool, gate, hook and guard names, and the name part of tool patterns and seam keys.
  { name: "the local-name pattern (tools, gates, hooks, guards)", spelled: /\[a-z\]\[a-z0-9\]\*\((?:\?:)?-\[a-z0-9\]\+\)\*/ },
  // [a-z_][a-z0-9_]{0,62}: PostgreSQL schema names.
  { name: "the PostgreSQL schema-name pattern", spelled: /\[a-z_\]\[a-z0-9_\]\{0,6\d\}/ },
];

/** Where `text` (the file `file`) spells a fact: one "file:line: fact" per occurrence. */
function occurrences(file: string, text: string): { file: string; line: number; fact: string }[] {
  const found: { file: string; line: number; fact: string }[] = [];
  text.split("\n").forEach((line, index) => {
    for (const fact of FACTS) if (fact.spelled.test(line)) found.push({ file, line: index + 1, fact: fact.name });
  });
  return found;
}

/** Non-test TypeScript under `dir`, recursively (no node_modules, no dist). */
function sources(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "dist") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sources(path));
    else if (/\.m?ts$/.test(entry.name) && !/\.test(-d|-support)?\.m?ts$/.test(entry.name) && !entry.name.endsWith(".d.ts")) files.push(path);
  }
  return files;
}

function scannedFiles(): string[] {
  const packages = readdirSync(join(ROOT, "packages"), { withFileTypes: true }).filter((entry) => entry.isDirectory());
  const roots = [...packages.map((entry) => join(ROOT, "packages", entry.name, "src")), join(ROOT, "codegen", "src")];
  return roots.flatMap((root) => {
    try {
      return sources(root);
    } catch {
      return [];
    }
  });
}

describe("one home for the name and schema-name patterns", () => {
  const all = scannedFiles().flatMap((path) => occurrences(relative(ROOT, path).split("\\").join("/"), readFileSync(path, "utf8")));

  it("scans the packages and codegen (the scan sees the home's definitions)", () => {
    expect(scannedFiles().length).toBeGreaterThan(100);
    expect(
      all
        .filter((hit) => hit.file === HOME)
        .map((hit) => hit.fact)
        .sort(),
    ).toEqual(FACTS.map((fact) => fact.name).sort());
  });

  it(`defines each pattern only in ${HOME}; the others import it from @toolpact/contract`, () => {
    const elsewhere = all
      .filter((hit) => hit.file !== HOME)
      .map((hit) => `${hit.file}:${hit.line}: ${hit.fact} is defined again; import it from @toolpact/contract (${HOME})`);
    expect(elsewhere).toEqual([]);
  });

  it("recognises a second definition however it is spelled (the check can fail)", () => {
    const copies = [
      String.raw`const A = /^(\*|[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)*(\.\*)?(:(\*|[a-z][a-z0-9]*(-[a-z0-9]+)*(@[1-9][0-9]*)?))?)$/;`,
      String.raw`const B = new RegExp("^[a-z][a-z0-9-]*(\\.[a-z][a-z0-9-]*)*$");`,
      String.raw`const C = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;`,
      String.raw`const D = /^[a-z_][a-z0-9_]{0,62}$/;`,
      "const E = 1;",
    ];
    expect(occurrences("x.ts", copies.join("\n")).map((hit) => `${hit.file}:${hit.line}: ${hit.fact}`)).toEqual([
      "x.ts:1: the plugin-id pattern",
      "x.ts:1: the local-name pattern (tools, gates, hooks, guards)",
      "x.ts:2: the plugin-id pattern",
      "x.ts:3: the local-name pattern (tools, gates, hooks, guards)",
      "x.ts:4: the PostgreSQL schema-name pattern",
    ]);
  });
});

describe("contract's limits have names", () => {
  it("the manifest's zod schemas bound nothing with a bare number above 1 (MAX_VERIFICATION_LEVEL, not 3)", () => {
    const dir = join(ROOT, "packages", "contract", "src");
    const bare = sources(dir).flatMap((path) =>
      readFileSync(path, "utf8")
        .split("\n")
        .flatMap((line, index) =>
          [...line.matchAll(/\.(max|min|length)\((\d[\d_]*)\b/g)].some((match) => Number(match[2]!.replaceAll("_", "")) > 1)
            ? [`${relative(ROOT, path)}:${index + 1}: ${line.trim()}`]
            : [],
        ),
    );
    expect(bare).toEqual([]);
  });
});
