import { ts } from "ts-morph";

/** Declarations at the top level of a chunk of type code, and the code indented two spaces per brace. */
export interface IndentedDeclarations {
  readonly code: string;
  /** Names of the top-level `interface`, `type` and `enum` declarations, in order. */
  readonly declared: readonly string[];
}

const INDENT = "  ";

/**
 * Indents json-schema-to-typescript's unformatted output (it prints every line at column 0 when
 * prettier is off) by brace depth, using the TypeScript scanner so braces inside strings and
 * comments do not count, and collects the names it declares. Only whitespace at line starts changes.
 */
export function indentDeclarations(code: string): IndentedDeclarations {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, code);
  const declared: string[] = [];
  let out = "";
  let depth = 0;
  let atLineStart = true;
  let expectName = false;
  /** What the last finished line held: a top-level declaration gets a blank line after code. */
  let lastLine: "blank" | "comment" | "code" = "blank";
  let line: "blank" | "comment" | "code" = "blank";
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    const text = scanner.getTokenText();
    if (kind === ts.SyntaxKind.NewLineTrivia) {
      out += "\n";
      atLineStart = true;
      lastLine = line;
      line = "blank";
      continue;
    }
    if (kind === ts.SyntaxKind.WhitespaceTrivia) {
      if (!atLineStart) out += text;
      continue;
    }
    const indent = INDENT.repeat(Math.max(0, kind === ts.SyntaxKind.CloseBraceToken ? depth - 1 : depth));
    const isComment = kind === ts.SyntaxKind.MultiLineCommentTrivia || kind === ts.SyntaxKind.SingleLineCommentTrivia;
    if (atLineStart) {
      if (depth === 0 && lastLine === "code" && (isComment || kind === ts.SyntaxKind.ExportKeyword)) out += "\n";
      out += indent;
      atLineStart = false;
    }
    line = isComment ? "comment" : "code";
    if (kind === ts.SyntaxKind.MultiLineCommentTrivia) {
      out += text.replace(/\n[ \t]*/g, `\n${indent} `);
      continue;
    }
    if (kind === ts.SyntaxKind.SingleLineCommentTrivia) {
      out += text;
      continue;
    }
    if (kind === ts.SyntaxKind.OpenBraceToken) depth++;
    else if (kind === ts.SyntaxKind.CloseBraceToken) depth--;
    if (depth === 0 && (kind === ts.SyntaxKind.InterfaceKeyword || kind === ts.SyntaxKind.TypeKeyword || kind === ts.SyntaxKind.EnumKeyword)) {
      expectName = true;
    } else if (expectName && kind === ts.SyntaxKind.Identifier) {
      declared.push(text);
      expectName = false;
    } else {
      expectName = false;
    }
    out += text;
  }
  return { code: out.replace(/\n{3,}/g, "\n\n").trim(), declared };
}
