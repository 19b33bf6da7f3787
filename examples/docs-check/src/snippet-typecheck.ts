/**
 * Type-checks documentation snippets with the TypeScript compiler API, as modules of this package
 * (so `./generated/index.js` is the clients generated from the example manifests and `@toolpact/*`
 * are the real packages), under the repository's strict compiler options.
 */
import path from "node:path";
import ts from "typescript";
import { where, type CodeBlock } from "./markdown-blocks.js";

/** One problem, as `docs/file.md:line:col: message`. */
export type SnippetProblem = string;

/** Type-checks every block in one program; returns every problem (none means all compile). */
export function typecheckSnippets(repoRoot: string, blocks: readonly CodeBlock[]): SnippetProblem[] {
  const options = compilerOptions(repoRoot);
  const dir = path.join(repoRoot, "examples/docs-check/src");
  const virtual = new Map<string, { block: CodeBlock; text: string }>();
  blocks.forEach((block, index) => {
    const name = `${path.basename(block.file, ".md").toLowerCase()}-${block.line}-${index}`;
    virtual.set(path.join(dir, `docs-snippet-${name}.ts`), { block, text: block.content });
  });

  const host = ts.createCompilerHost(options, true);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.fileExists = (file) => virtual.has(path.resolve(file)) || fileExists(file);
  host.readFile = (file) => virtual.get(path.resolve(file))?.text ?? readFile(file);
  host.getSourceFile = (file, language, onError, create) => {
    const snippet = virtual.get(path.resolve(file));
    return snippet === undefined ? getSourceFile(file, language, onError, create) : ts.createSourceFile(file, snippet.text, language, true);
  };

  const program = ts.createProgram({ rootNames: [...virtual.keys()], options, host });
  // Each snippet's own diagnostics: the packages they import are checked by `pnpm build`, and checking
  // them again here would be most of this program's work. The options' and global diagnostics come with
  // every snippet's: the same objects, kept once.
  const snippets = [...virtual.keys()].map((file) => program.getSourceFile(file)).filter((file) => file !== undefined);
  const diagnostics = new Set(snippets.flatMap((file) => ts.getPreEmitDiagnostics(program, file)));
  const problems: SnippetProblem[] = [];
  for (const diagnostic of diagnostics) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    const file = diagnostic.file;
    const snippet = file === undefined ? undefined : virtual.get(path.resolve(file.fileName));
    if (file === undefined || snippet === undefined) {
      problems.push(`${file?.fileName ?? "(program)"}: TS${diagnostic.code}: ${message}`);
      continue;
    }
    const { line, character } = file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    problems.push(`${where(snippet.block, line)}:${character + 1}: TS${diagnostic.code}: ${message}`);
  }
  return problems;
}

/** tsconfig.base.json's options, without emitting anything, every snippet a module. */
function compilerOptions(repoRoot: string): ts.CompilerOptions {
  const configFile = path.join(repoRoot, "tsconfig.base.json");
  const read = ts.readConfigFile(configFile, ts.sys.readFile);
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, "\n"));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, repoRoot, undefined, configFile);
  return {
    ...parsed.options,
    noEmit: true,
    composite: false,
    incremental: false,
    declaration: false,
    declarationMap: false,
    sourceMap: false,
    moduleDetection: ts.ModuleDetectionKind.Force,
  };
}
