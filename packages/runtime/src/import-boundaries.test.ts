/**
 * The runtime's shape, kept by a test: each step of the call path stands alone (steps never import
 * each other), stores know nothing of the call path, production code never imports test support, and
 * no source file grows past what one reading holds.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = dirname(fileURLToPath(import.meta.url));
/** The most lines a source file (tests aside) may have; past it, a file holds more than one idea. */
const MAX_SOURCE_LINES = 400;
const PACKAGES = resolve(SRC, "../..");

/** Every .ts file under `dir`, as absolute paths. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "dist" ? [] : sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

const isTest = (file: string) => /\.test(-d)?\.ts$/.test(file);

/** The module specifiers a file imports or re-exports (static and dynamic). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  const patterns = [/^\s*(?:import|export)\s[^;]*?\sfrom\s*["']([^"']+)["']/gm, /^\s*import\s*["']([^"']+)["']/gm, /import\(\s*["']([^"']+)["']\s*\)/g];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.push(match[1]!);
  return found;
}

/** The files of this package a file imports, relative to src, without extension. */
function localImports(file: string): string[] {
  return importsOf(file)
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) =>
      relative(SRC, resolve(dirname(file), specifier))
        .split(sep)
        .join("/")
        .replace(/\.js$/, ""),
    );
}

const runtimeFiles = sourceFiles(SRC);
const production = runtimeFiles.filter((file) => !isTest(file) && !relative(SRC, file).startsWith(`testing${sep}`));
const name = (file: string) => relative(SRC, file).split(sep).join("/");

describe("import boundaries", () => {
  it("finds the files it checks", () => {
    expect(production.map(name)).toEqual(expect.arrayContaining(["runtime.ts", "calls/compose.ts", "calls/steps/ledger.ts", "store/store.ts"]));
  });

  it("steps of the call path do not import each other", () => {
    const steps = production.filter((file) => name(file).startsWith("calls/steps/"));
    expect(steps.length).toBeGreaterThanOrEqual(15);
    const crossings = steps.flatMap((file) =>
      localImports(file)
        .filter((target) => target.startsWith("calls/steps/"))
        .map((target) => `${name(file)} imports ${target}`),
    );
    expect(crossings).toEqual([]);
  });

  it("stores never import the call path", () => {
    const stores = runtimeFiles.filter((file) => name(file).startsWith("store/"));
    const crossings = stores.flatMap((file) =>
      localImports(file)
        .filter((target) => target.startsWith("calls/"))
        .map((target) => `${name(file)} imports ${target}`),
    );
    expect(crossings).toEqual([]);
  });

  it("production code never imports test support", () => {
    const crossings = production.flatMap((file) =>
      localImports(file)
        .filter((target) => target.startsWith("testing/") || target === "testing")
        .map((target) => `${name(file)} imports ${target}`),
    );
    const otherPackages = readdirSync(PACKAGES)
      .map((pkg) => join(PACKAGES, pkg, "src"))
      .filter((dir) => existsSync(dir))
      .flatMap((dir) => sourceFiles(dir).filter((file) => !isTest(file)))
      .flatMap((file) =>
        importsOf(file)
          .filter((specifier) => specifier === "@toolpact/runtime/testing")
          .map(() => `${relative(PACKAGES, file)} imports @toolpact/runtime/testing`),
      );
    expect([...crossings, ...otherPackages]).toEqual([]);
  });

  it(`no source file is over ${MAX_SOURCE_LINES} lines`, () => {
    const long = runtimeFiles
      .filter((file) => !isTest(file))
      .map((file) => ({ file: name(file), lines: readFileSync(file, "utf8").split("\n").length - 1 }))
      .filter(({ lines }) => lines > MAX_SOURCE_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(long).toEqual([]);
  });
});
