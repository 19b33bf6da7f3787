/**
 * One home per limit: the lengths, list sizes and defaults the HTTP router and the runtime share live in
 * `packages/protocol/src/limits.ts`. This check fails, naming file:line, when production code in
 * packages/server/src or packages/runtime/src writes one of those numbers inline where a limit goes
 * (`.max(8192)`, `length > 8192`, `?? 10_000`), or declares a constant named like one of protocol's.
 * Test files and the runtime's `testing/` support are not production code and are not scanned.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SCANNED = ["packages/server/src", "packages/runtime/src"];
const LIMITS_FILE = "packages/protocol/src/limits.ts";
/** The numbers that were written inline as limits: 8192 (token lengths), 1024 (cursor), 512 (tool patterns), 10_000 (policy lists), 15_000 (drain). */
const LIMIT_NUMBER = String.raw`(?:8_?192|1_?024|512|10_?000|15_?000)(?![\d_.])`;
/** Where a number acts as a limit: a schema bound, a comparison (not an arrow `=>`), or a default after `??`. */
const INLINE_LIMIT = new RegExp(String.raw`(?:\.(?:max|min|length)\(\s*|(?<!=)[<>]=?\s*|\?\?\s*)${LIMIT_NUMBER}`);

function productionFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !/\.test(-d)?\.ts$/.test(entry.name))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)))
    .filter((file) => !file.split(path.sep).includes("testing"));
}

function limitNames(): Set<string> {
  const text = readFileSync(path.join(ROOT, LIMITS_FILE), "utf8");
  return new Set([...text.matchAll(/^export const ([A-Z][A-Z0-9_]*)\s*=/gm)].map((match) => match[1]!));
}

/** Each line of each scanned file that breaks a rule, as `file:line: what`. */
function secondCopies(): string[] {
  const names = limitNames();
  const found: string[] = [];
  for (const file of SCANNED.flatMap(productionFiles)) {
    readFileSync(path.join(ROOT, file), "utf8")
      .split("\n")
      .forEach((line, index) => {
        const code = line.replace(/\/\/.*$/, "");
        const inline = INLINE_LIMIT.exec(code);
        if (inline) found.push(`${file}:${index + 1}: "${inline[0].trim()}" writes a shared limit inline: import it from ${LIMITS_FILE}`);
        const declared = /\bconst ([A-Z][A-Z0-9_]*)\s*=/.exec(code)?.[1];
        if (declared !== undefined && names.has(declared)) found.push(`${file}:${index + 1}: ${declared} is declared again: import it from ${LIMITS_FILE}`);
      });
  }
  return found;
}

describe("shared limits have one home", () => {
  it("finds no limit written inline, and no second constant of a protocol limit, in the server or the runtime", () => {
    expect(secondCopies()).toEqual([]);
  });

  it("would catch each kind of second copy (the rules themselves)", () => {
    for (const line of [
      ".max(8192)",
      "token.length > 8_192",
      "options.drainTimeoutMs ?? 10_000",
      ".max(10000)",
      "cursor.length >= 1024",
      "z.string().min(1).max(512)",
    ]) {
      expect(INLINE_LIMIT.test(line), line).toBe(true);
    }
    for (const line of ["const CACHE_LIMIT = 10_000;", "() => 512", "16 * 1024", ".max(64 * 1024 * 1024)", ".max(15_0000)", ".max(5120)"]) {
      expect(INLINE_LIMIT.test(line), line).toBe(false);
    }
    expect(limitNames()).toContain("DEFAULT_DRAIN_TIMEOUT_MS");
  });
});
