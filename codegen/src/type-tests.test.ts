import { readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { GOLDEN_DIR } from "./fixtures.test-support.js";

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(here, "../..");
const TYPE_TESTS_DIR = resolve(here, "../type-tests");

/** The repository's strict options (tsconfig.base.json), resolving workspace packages to their sources. */
function compilerOptions(): ts.CompilerOptions {
  const configFile = join(ROOT, "tsconfig.base.json");
  const { config, error } = ts.readConfigFile(configFile, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"));
  const parsed = ts.parseJsonConfigFileContent({ ...config, files: [] }, ts.sys, ROOT, undefined, configFile);
  return {
    ...parsed.options,
    noEmit: true,
    composite: false,
    incremental: false,
    declaration: false,
    declarationMap: false,
    sourceMap: false,
    customConditions: ["@toolpact/source"],
  };
}

/** Type-checks `files` (plus in-memory `overlay` files) and returns every diagnostic as "file:line:col: message". */
function typecheck(files: readonly string[], overlay: ReadonlyMap<string, string> = new Map(), oldProgram?: ts.Program) {
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (file) => overlay.has(file) || fileExists(file);
  host.readFile = (file) => overlay.get(file) ?? readFile(file);
  host.getSourceFile = (file, language, onError, shouldCreate) => {
    const text = overlay.get(file);
    return text === undefined ? getSourceFile(file, language, onError, shouldCreate) : ts.createSourceFile(file, text, language, true);
  };
  const rootNames = [...files, ...overlay.keys()];
  const program = ts.createProgram({ rootNames, options, host, ...(oldProgram ? { oldProgram } : {}) });
  const diagnostics = rootDiagnostics(program, rootNames).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    if (!diagnostic.file || diagnostic.start === undefined) return `TS${diagnostic.code}: ${message}`;
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${diagnostic.file.fileName.slice(ROOT.length + 1)}:${line + 1}:${character + 1}: TS${diagnostic.code}: ${message}`;
  });
  return { program, diagnostics };
}

/**
 * The diagnostics of `rootNames` themselves (and of the options), each file's `getPreEmitDiagnostics`.
 * The workspace sources they import are checked by `pnpm build`; the whole program's would type-check
 * every package again on each of this file's programs, several times the work.
 */
function rootDiagnostics(program: ts.Program, rootNames: readonly string[]): ts.Diagnostic[] {
  const roots = rootNames.map((file) => program.getSourceFile(file)).filter((file) => file !== undefined);
  // The options' and global diagnostics come with every file's: the same objects, kept once.
  return [...new Set(roots.flatMap((file) => ts.getPreEmitDiagnostics(program, file)))];
}

const tsFiles = (dir: string, pattern = /\.ts$/) =>
  readdirSync(dir)
    .filter((name) => pattern.test(name))
    .sort()
    .map((name) => join(dir, name));

/** codegen's own tests: the package build leaves them out (they import the goldens), so they are checked here. */
const testFiles = () => tsFiles(here, /\.test(-support)?\.ts$/);

describe("generated types under tsc", () => {
  let baseline: ReturnType<typeof typecheck>;
  beforeAll(() => {
    baseline = typecheck([...tsFiles(GOLDEN_DIR), ...tsFiles(TYPE_TESTS_DIR), ...testFiles()]);
  });

  it("the goldens, every type test and codegen's own tests compile with the repository's strict options", () => {
    expect(tsFiles(TYPE_TESTS_DIR).length).toBeGreaterThan(0);
    expect(baseline.diagnostics).toEqual([]);
  });

  it("the harness reports a type error that no @ts-expect-error covers", () => {
    const snippet = [
      'import type { ToolTransport } from "@toolpact/client";',
      'import { createToolClients } from "../golden/index.js";',
      "declare const transport: ToolTransport;",
      "export const call = createToolClients(transport).notes.createRecordV1.preview({ title: 42 });",
    ].join("\n");
    const { diagnostics } = typecheck(tsFiles(GOLDEN_DIR), new Map([[join(TYPE_TESTS_DIR, "control-error.ts"), snippet]]), baseline.program);
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatch(/^codegen\/type-tests\/control-error\.ts:4:\d+: TS2322: Type 'number' is not assignable to type 'string'/);
  });

  it("the harness reports an @ts-expect-error that expects an error which does not happen", () => {
    const snippet = [
      'import type { ToolTransport } from "@toolpact/client";',
      'import { createToolClients } from "../golden/index.js";',
      "declare const transport: ToolTransport;",
      "// @ts-expect-error this call is fine, so the directive is unused",
      'export const call = createToolClients(transport).notes.searchRecords.execute({ query: "q" });',
    ].join("\n");
    const { diagnostics } = typecheck(tsFiles(GOLDEN_DIR), new Map([[join(TYPE_TESTS_DIR, "control-unused.ts"), snippet]]), baseline.program);
    expect(diagnostics).toEqual([expect.stringMatching(/control-unused\.ts:4:1: TS2578: Unused '@ts-expect-error' directive/)]);
  });

  it("the harness reports a call to a tool outside the caller's uses (the caller goldens' control case)", () => {
    const snippet = [
      'import type { ToolTransport } from "@toolpact/client";',
      'import { createToolClients } from "../golden/caller/index.js";',
      "declare const transport: ToolTransport;",
      'export const call = createToolClients(transport).notes.archiveRecord.preview({ id: "r1" });',
    ].join("\n");
    const { diagnostics } = typecheck(tsFiles(GOLDEN_DIR), new Map([[join(TYPE_TESTS_DIR, "control-uses.ts"), snippet]]), baseline.program);
    expect(diagnostics).toEqual([expect.stringMatching(/control-uses\.ts:4:\d+: TS2339: Property 'archiveRecord' does not exist on type 'NotesClient'/)]);
  });

  it("the harness reports a failing expectTypeOf", () => {
    const snippet = [
      'import { expectTypeOf } from "vitest";',
      'import type { Notes } from "../golden/index.js";',
      "expectTypeOf<Notes.CreateRecordV1Output>().toEqualTypeOf<{ id: number }>();",
    ].join("\n");
    const { diagnostics } = typecheck(tsFiles(GOLDEN_DIR), new Map([[join(TYPE_TESTS_DIR, "control-expect.ts"), snippet]]), baseline.program);
    expect(diagnostics).toEqual([expect.stringMatching(/control-expect\.ts:3:\d+: TS2344/)]);
  });
});
