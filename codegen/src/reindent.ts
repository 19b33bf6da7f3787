import { ts } from "ts-morph";

/** Declarations at the top level of a chunk of type code, and the code indented two spaces per brace. */
export interface IndentedDeclarations {
  readonly code: string;
  /** Names of the top-level `interface`, `type` and `enum` declarations, in order. */
  readonly declared: readonly string[];
}

const INDENT = "  ";

/** `ts.SyntaxKind` read once: each read of `ts.X` calls a getter (read per token, more than half of `indentDeclarations`'s time). */
const Kind = ts.SyntaxKind;

/** Tokens after which a line's type goes on: no semicolon ends the line there. */
const CONTINUES = new Set<ts.SyntaxKind>([
  Kind.OpenBraceToken,
  Kind.OpenParenToken,
  Kind.OpenBracketToken,
  Kind.LessThanToken,
  Kind.CommaToken,
  Kind.SemicolonToken,
  Kind.BarToken,
  Kind.AmpersandToken,
  Kind.EqualsToken,
  Kind.EqualsGreaterThanToken,
  Kind.ColonToken,
  Kind.QuestionToken,
]);

/**
 * Indents json-schema-to-typescript's unformatted output (it prints every line at column 0 when
 * prettier is off) by brace depth, using the TypeScript scanner so braces inside strings and
 * comments do not count, and collects the names it declares. Semicolons end every member and every
 * type alias, as in the rest of the generated code (json-schema-to-typescript writes none); otherwise
 * only whitespace at line starts changes.
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
  /** The top-level declaration being written, and for each open brace whether it is an enum's body. */
  let statement: ts.SyntaxKind | undefined;
  const braces: boolean[] = [];
  /** The line's last code token, and where it ends in `out`. */
  let last: ts.SyntaxKind | undefined;
  let lastEnd = 0;
  const endLine = (): void => {
    if (last === undefined || CONTINUES.has(last)) return;
    const ends = depth > 0 ? braces[braces.length - 1] === false : statement === Kind.TypeKeyword;
    if (ends) out = lastEnd === out.length ? `${out};` : `${out.slice(0, lastEnd)};${out.slice(lastEnd)}`;
    if (depth === 0) statement = undefined;
  };
  for (let kind = scanner.scan(); kind !== Kind.EndOfFileToken; kind = scanner.scan()) {
    const text = scanner.getTokenText();
    if (kind === Kind.NewLineTrivia) {
      endLine();
      last = undefined;
      out += "\n";
      atLineStart = true;
      lastLine = line;
      line = "blank";
      continue;
    }
    if (kind === Kind.WhitespaceTrivia) {
      if (!atLineStart) out += text;
      continue;
    }
    const isComment = kind === Kind.MultiLineCommentTrivia || kind === Kind.SingleLineCommentTrivia;
    if (atLineStart) {
      if (depth === 0 && lastLine === "code" && (isComment || kind === Kind.ExportKeyword)) out += "\n";
      out += indentOf(kind, depth);
      atLineStart = false;
    }
    line = isComment ? "comment" : "code";
    if (kind === Kind.MultiLineCommentTrivia) {
      out += text.replace(/\n[ \t]*/g, `\n${indentOf(kind, depth)} `);
      continue;
    }
    if (kind === Kind.SingleLineCommentTrivia) {
      out += text;
      continue;
    }
    if (kind === Kind.OpenBraceToken) {
      depth++;
      braces.push(depth === 1 && statement === Kind.EnumKeyword);
    } else if (kind === Kind.CloseBraceToken) {
      depth--;
      braces.pop();
    }
    if (depth === 0 && (kind === Kind.InterfaceKeyword || kind === Kind.TypeKeyword || kind === Kind.EnumKeyword)) {
      expectName = true;
      statement = kind;
    } else if (expectName && kind === Kind.Identifier) {
      declared.push(text);
      expectName = false;
    } else {
      expectName = false;
    }
    out += text;
    last = kind;
    lastEnd = out.length;
  }
  endLine();
  return { code: out.replace(/\n{3,}/g, "\n\n").trim(), declared };
}

/** A line's indent: its depth in braces, one less on the line of a closing brace. */
function indentOf(kind: ts.SyntaxKind, depth: number): string {
  return INDENT.repeat(Math.max(0, kind === Kind.CloseBraceToken ? depth - 1 : depth));
}
