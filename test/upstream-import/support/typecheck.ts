/**
 * tsc over generated clients and a caller written against them, with the repository's strict options
 * (tsconfig.base.json) and the workspace packages resolved to their sources.
 */
import path from "node:path";
import ts from "typescript";
import { ROOT } from "./registry-servers.js";

function compilerOptions(): ts.CompilerOptions {
  const configFile = path.join(ROOT, "tsconfig.base.json");
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

/** Every diagnostic of `files` as "file:line:col: TSnnnn: message" (files named relative to the repository). */
export function typecheck(files: readonly string[]): string[] {
  const program = ts.createProgram({ rootNames: [...files], options: compilerOptions() });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    if (!diagnostic.file || diagnostic.start === undefined) return `TS${diagnostic.code}: ${message}`;
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${path.relative(ROOT, diagnostic.file.fileName)}:${line + 1}:${character + 1}: TS${diagnostic.code}: ${message}`;
  });
}
