/**
 * A manifest's JSON syntax errors as people read them: one per position (the parser reports every closing
 * brace a cut-off file lacks, all at its end), and a file that simply stops is said to be cut off, with
 * the brackets that would close it.
 */
import { printParseErrorCode, type ParseError } from "jsonc-parser";

/** A syntax error to report: where (an offset into the text) and what. */
export interface SyntaxProblem {
  readonly offset: number;
  readonly message: string;
}

const PARSE_MESSAGES: Readonly<Record<string, string>> = {
  InvalidSymbol: "unexpected character",
  InvalidNumberFormat: "malformed number",
  PropertyNameExpected: "expected a property name in double quotes",
  ValueExpected: "expected a value",
  ColonExpected: "expected ':' after the property name",
  CommaExpected: "expected ',' between entries",
  CloseBraceExpected: "expected '}' to close the object",
  CloseBracketExpected: "expected ']' to close the array",
  EndOfFileExpected: "unexpected content after the end of the manifest",
  InvalidCommentToken: "malformed comment",
  UnexpectedEndOfComment: "unterminated comment",
  UnexpectedEndOfString: "unterminated string",
  UnexpectedEndOfNumber: "unterminated number",
  InvalidUnicode: "invalid \\u escape",
  InvalidEscapeCharacter: "invalid escape character",
  InvalidCharacter: "invalid character in a string (control characters must be escaped)",
};

const CLOSERS: Readonly<Record<string, "}" | "]">> = { CloseBraceExpected: "}", CloseBracketExpected: "]" };

function messageOf(error: ParseError): string {
  const code = printParseErrorCode(error.error);
  return PARSE_MESSAGES[code] ?? code;
}

/**
 * The syntax errors of `source` to report, in order: errors at one position become one (the first the
 * parser found there, which the others follow from), and the errors at the end of a file that stops
 * early become one "unexpected end of file" naming what to close.
 */
export function syntaxProblems(source: string, errors: readonly ParseError[]): SyntaxProblem[] {
  const end = source.trimEnd().length;
  const atEnd = errors.filter((error) => error.offset >= end);
  // A token the end cuts through (a string, a literal) is part of the cut, not an error of its own.
  const cut = atEnd.length > 0 ? errors.filter((error) => error.offset < end && error.offset + error.length >= end) : [];
  const before = errors.filter((error) => error.offset < end && !cut.includes(error));
  const problems: SyntaxProblem[] = [];
  for (const error of before) {
    if (problems.at(-1)?.offset !== error.offset) problems.push({ offset: error.offset, message: messageOf(error) });
  }
  if (atEnd.length > 0) problems.push({ offset: atEnd[0]!.offset, message: endOfFile(atEnd, cut, problems.length === 0) });
  return problems;
}

/** The one message for the errors at the end of the file. */
function endOfFile(atEnd: readonly ParseError[], cut: readonly ParseError[], cutOff: boolean): string {
  const codes = atEnd.map((error) => printParseErrorCode(error.error));
  const closers = codes.flatMap((code) => CLOSERS[code] ?? []).join("");
  const inString = cut.some((error) => printParseErrorCode(error.error) === "UnexpectedEndOfString");
  // Anything else the end lacks (a value, a ':', the rest of a cut token) belongs to the last entry.
  const unfinished = cut.length > 0 || codes.some((code) => CLOSERS[code] === undefined);
  const what = cutOff ? `unexpected end of file: the JSON is cut off${inString ? " inside a string" : ""}` : "unexpected end of file";
  const steps = [unfinished ? "finish the last entry" : "", closers ? `add ${JSON.stringify(closers)} to close the open ${openings(closers)}` : ""].filter(
    Boolean,
  );
  return steps.length > 0 ? `${what}; ${steps.join(" and ")}` : what;
}

/** "object", "arrays and object", ... for the closing brackets `closers`, innermost first. */
function openings(closers: string): string {
  const noun = (closer: string, name: string): string[] => {
    const count = [...closers].filter((c) => c === closer).length;
    return count === 0 ? [] : [count === 1 ? name : `${name}s`];
  };
  return [...noun("}", "object"), ...noun("]", "array")].join(" and ");
}
