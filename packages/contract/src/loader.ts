import { readFile } from "node:fs/promises";
import { createScanner, parseTree, type Node, type ParseError } from "jsonc-parser";
import { ToolpactError } from "@toolpact/protocol";
import { didYouMean } from "./hints.js";
import { deepFreezeJson } from "./input.js";
import {
  applyManifestDefaults,
  gateDeclarationSchema,
  guardDeclarationSchema,
  hookDeclarationSchema,
  httpUpstreamSchema,
  manifestSchema,
  processIsolationSchema,
  stdioUpstreamSchema,
  toolDeclarationSchema,
  type Manifest,
} from "./manifest.js";
import {
  MAX_NESTING,
  ManifestCheck,
  expectedName,
  keyNodeOf,
  labelOf,
  memberOf,
  nearestNode,
  plural,
  pointerOf,
  propertyOf,
  show,
  typeName,
  valueAtPath,
  type Diagnostic,
  type Path,
} from "./manifest-document.js";
import { checkCrossFieldRules } from "./manifest-rules.js";
import { syntaxProblems } from "./parse-errors.js";
import { checkToolSchemas } from "./schema-checks.js";

export type { Diagnostic } from "./manifest-document.js";

/** The outcome of loading a manifest: the manifest with its warnings, or every diagnostic. */
export type ManifestLoadResult =
  | { readonly ok: true; readonly manifest: Manifest; readonly warnings: readonly Diagnostic[] }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

type ManifestIssue = NonNullable<ReturnType<typeof manifestSchema.safeParse>["error"]>["issues"][number];

const MANIFEST_KEYS = Object.keys(manifestSchema.shape);
const TOOL_KEYS = Object.keys(toolDeclarationSchema.shape);
const ENTRY_KEYS: Readonly<Record<string, readonly string[]>> = {
  tools: TOOL_KEYS,
  gates: Object.keys(gateDeclarationSchema.shape),
  hooks: Object.keys(hookDeclarationSchema.shape),
  guards: Object.keys(guardDeclarationSchema.shape),
};

/** The keys of the manifest's object-valued sections. */
const OBJECT_KEYS: Readonly<Record<string, readonly string[]>> = {
  upstream: [...new Set([...Object.keys(stdioUpstreamSchema.shape), ...Object.keys(httpUpstreamSchema.shape)])],
  process: Object.keys(processIsolationSchema.shape),
};

// ---------------------------------------------------------------------------------------------------------
// Field-level rules: zod issues, mapped to nodes.

function reportZodIssue(check: ManifestCheck, root: Node, value: unknown, issue: ManifestIssue): void {
  const path = issue.path.filter((segment): segment is string | number => typeof segment !== "symbol");
  // A value the tree walk already refused (an overflowing number) has nothing more to say.
  if (check.hasErrorAt(pointerOf(path))) return;
  const { node, depth } = nearestNode(root, path);
  const found = depth === path.length;
  const label = labelOf(path);
  const actual = found ? valueAtPath(value, path) : undefined;

  switch (issue.code) {
    case "invalid_union": {
      // One branch's own issues say more than "Invalid input": report the branch that came closest.
      const branches = (issue as { errors?: readonly (readonly ManifestIssue[])[] }).errors ?? [];
      const closest = [...branches].sort((a, b) => a.length - b.length)[0];
      if (closest !== undefined && closest.length > 0) {
        for (const inner of closest) reportZodIssue(check, root, value, { ...inner, path: [...issue.path, ...inner.path] } as ManifestIssue);
      } else {
        check.error(node, path, `${label} ${show(actual)}: ${issue.message}`);
      }
      return;
    }
    case "invalid_key": {
      const inner = (issue as { issues?: readonly { message: string }[] }).issues?.[0]?.message ?? issue.message;
      check.error(node, path, `${label}: the key ${JSON.stringify(path[path.length - 1])} is refused: ${inner}`);
      return;
    }
    case "unrecognized_keys": {
      const allowed = allowedKeysAt(path);
      for (const key of issue.keys) {
        const keyNode = keyNodeOf(propertyOf(node, key)) ?? node;
        const hint = didYouMean(key, allowed);
        const where = path.length === 0 ? "the manifest" : label;
        check.error(keyNode, [...path, key], `unknown key ${JSON.stringify(key)} in ${where}${hint || `; allowed keys: ${allowed.join(", ")}`}`);
      }
      return;
    }
    case "invalid_type": {
      if (!found) {
        const parentPath = path.slice(0, -1);
        const key = path[path.length - 1];
        const where = parentPath.length === 0 ? "the manifest" : labelOf(parentPath);
        check.error(node, path, `${where} is missing required key ${JSON.stringify(key)} (${expectedName(issue.expected)})`);
        return;
      }
      check.error(node, path, `${label} must be ${expectedName(issue.expected)}; got ${typeName(actual)}`);
      return;
    }
    case "invalid_value": {
      const values = issue.values;
      const choices = values.map((choice) => JSON.stringify(choice)).join(", ");
      const hint =
        typeof actual === "string"
          ? didYouMean(
              actual,
              values.filter((v): v is string => typeof v === "string"),
            )
          : "";
      const expected = values.length === 1 ? choices : `one of ${choices}`;
      check.error(node, path, `${label} must be ${expected}; got ${show(actual)}${hint}`);
      return;
    }
    case "too_small":
    case "too_big": {
      const small = issue.code === "too_small";
      const bound = Number(small ? (issue as { minimum: unknown }).minimum : (issue as { maximum: unknown }).maximum);
      const inclusive = (issue as { inclusive?: boolean }).inclusive !== false;
      if (issue.origin === "array") {
        const message =
          small && bound === 1
            ? `${label} must not be empty: add an entry or remove ${JSON.stringify(path[path.length - 1])}`
            : `${label} must have ${small ? "at least" : "at most"} ${plural(bound, "entry", "entries")}`;
        check.error(node, path, message);
      } else if (issue.origin === "string") {
        check.error(node, path, `${label} must have ${small ? "at least" : "at most"} ${plural(bound, "character", "characters")}`);
      } else {
        const relation = small ? (inclusive ? "at least" : "greater than") : inclusive ? "at most" : "less than";
        check.error(node, path, `${label} must be ${relation} ${bound}; got ${show(actual)}`);
      }
      return;
    }
    default:
      // invalid_format and custom carry the schema's own message ("a tool name is lowercase words ...").
      check.error(node, path, `${label} ${show(actual)}: ${issue.message}`);
  }
}

function allowedKeysAt(path: Path): readonly string[] {
  if (path.length === 0) return MANIFEST_KEYS;
  const section = path[0];
  if (path.length === 2 && typeof section === "string" && typeof path[1] === "number") return ENTRY_KEYS[section] ?? [];
  if (path.length === 1 && typeof section === "string") return OBJECT_KEYS[section] ?? [];
  return [];
}

// ---------------------------------------------------------------------------------------------------------

/** Parses and checks a manifest's text (JSONC: comments and trailing commas allowed); reports every problem. */
export function parseManifest(text: string, file: string): ManifestLoadResult {
  // A byte-order mark becomes a space, so offsets (and columns) stay true.
  const source = text.charCodeAt(0) === 0xfeff ? " " + text.slice(1) : text;
  const check = new ManifestCheck(file, source);
  // The parser recurses per nesting level; find absurd nesting first, without recursion.
  const tooDeep = firstOffsetDeeperThan(source, MAX_NESTING);
  if (tooDeep !== undefined) {
    check.report("error", tooDeep, [], `nested more than ${MAX_NESTING} levels deep; a manifest is not that deep`);
    return { ok: false, diagnostics: check.sorted() };
  }
  const syntaxErrors: ParseError[] = [];
  const root = parseTree(source, syntaxErrors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true });

  if (syntaxErrors.length > 0) {
    for (const { offset, message } of syntaxProblems(source, syntaxErrors)) check.report("error", offset, [], `syntax error: ${message}`);
    return { ok: false, diagnostics: check.sorted() };
  }
  if (!root) {
    check.report("error", 0, [], 'the manifest is empty: it must be a JSON object with "id", "version" and "permissions"');
    return { ok: false, diagnostics: check.sorted() };
  }
  if (root.type !== "object") {
    check.error(root, [], `the manifest must be a JSON object; got ${root.type === "array" ? "an array" : `a ${root.type}`}`);
    return { ok: false, diagnostics: check.sorted() };
  }

  const value = check.valueOf(root, []);
  const parsed = manifestSchema.safeParse(value);
  if (!parsed.success) for (const issue of parsed.error.issues) reportZodIssue(check, root, value, issue);
  checkCrossFieldRules(check, root);
  checkToolSchemas(check, root, value);

  if (!parsed.success || check.hasErrors()) return { ok: false, diagnostics: check.sorted() };
  // The checked tree value, not zod's copy: zod's record copy drops a "__proto__" key from a schema, and the
  // schemas must be exactly what was checked. zod only adds the `permissions` default.
  const checked = { ...(value as object), permissions: parsed.data.permissions } as typeof parsed.data;
  return { ok: true, manifest: deepFreezeJson(applyManifestDefaults(checked)), warnings: check.sorted() };
}

/** jsonc-parser's SyntaxKind values (a const enum, which verbatimModuleSyntax cannot import). */
const TOKEN = { openBrace: 1, closeBrace: 2, openBracket: 3, closeBracket: 4, eof: 17 } as const;

/** Offset of the first `{` or `[` that opens nesting level `limit + 1`, if any. */
function firstOffsetDeeperThan(text: string, limit: number): number | undefined {
  const scanner = createScanner(text, true);
  let depth = 0;
  for (let token: number = scanner.scan(); token !== TOKEN.eof; token = scanner.scan()) {
    if (token === TOKEN.openBrace || token === TOKEN.openBracket) {
      if (++depth > limit) return scanner.getTokenOffset();
    } else if (token === TOKEN.closeBrace || token === TOKEN.closeBracket) {
      depth--;
    }
  }
  return undefined;
}

/** Reads and checks a manifest file; an unreadable file is one diagnostic at 1:1. */
export async function loadManifest(file: string): Promise<ManifestLoadResult> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message;
    return {
      ok: false,
      diagnostics: [{ file, line: 1, column: 1, severity: "error", message: `cannot read the manifest: ${reason}`, pointer: "" }],
    };
  }
  return parseManifest(text, file);
}

/** "file:line:col: error: message" (1-based line and column). */
export function formatDiagnostic(diagnostic: Diagnostic): string {
  return `${diagnostic.file}:${diagnostic.line}:${diagnostic.column}: ${diagnostic.severity}: ${diagnostic.message}`;
}

/** Returns the manifest, or throws ToolpactError MANIFEST_INVALID whose message lists every formatted diagnostic. */
export async function loadManifestOrThrow(file: string): Promise<Manifest> {
  const result = await loadManifest(file);
  if (result.ok) return result.manifest;
  const errors = result.diagnostics.filter((diagnostic) => diagnostic.severity === "error").length;
  throw new ToolpactError(
    "MANIFEST_INVALID",
    `manifest ${file} is invalid (${plural(errors, "error", "errors")}); fix these and load it again:\n${result.diagnostics.map(formatDiagnostic).join("\n")}`,
  );
}
