/**
 * What the docs say a project installs, checked against what installs it: the README's table against
 * the package.json `toolpact init` writes for each kind of project, the number of published packages
 * against the workspace, snippets that import only what a reader can install, and plugin keys shown in
 * the shape the runtime issues them.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { codeBlocks, where } from "./markdown-blocks.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const read = (file: string) => readFileSync(path.join(repoRoot, file), "utf8");
const docFiles = [
  "README.md",
  ...readdirSync(path.join(repoRoot, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** The `@toolpact/*` packages a scaffold's package.json installs, dependencies and dev dependencies alike. */
function scaffoldPackages(kind: "provider" | "caller"): string[] {
  const pkg = JSON.parse(read(`packages/cli/templates/${kind}/package.json`)) as Record<string, Record<string, string> | undefined>;
  return Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })
    .filter((name) => name.startsWith("@toolpact/"))
    .sort();
}

/** The `@toolpact/*` packages the "installs" cell of the README's row for a project names. */
function readmeRowPackages(rowStart: string): string[] {
  const row = read("README.md")
    .split("\n")
    .find((line) => line.startsWith(rowStart));
  if (row === undefined) throw new Error(`README.md has no table row starting "${rowStart}"`);
  const installs = row.split(" | ")[1] ?? "";
  return [...installs.matchAll(/`(@toolpact\/[a-z-]+)`/g)].map((match) => match[1]!).sort();
}

/** The workspace packages that are published (not private). */
function publishedPackages(): string[] {
  const dirs = [...readdirSync(path.join(repoRoot, "packages")).map((name) => `packages/${name}`), "codegen"];
  return dirs
    .map((dir) => JSON.parse(read(`${dir}/package.json`)) as { name: string; private?: boolean })
    .filter((pkg) => pkg.private !== true)
    .map((pkg) => pkg.name)
    .sort();
}

const NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];

describe("what the docs say a project installs", () => {
  it("README's table lists exactly the toolpact packages `toolpact init` installs in a provider and in a caller", () => {
    expect(readmeRowPackages("| a provider plugin (`toolpact init`) |")).toEqual(scaffoldPackages("provider"));
    expect(readmeRowPackages("| a caller plugin (`toolpact init --caller`) |")).toEqual(scaffoldPackages("caller"));
  });

  it("says how many library packages are published, and names each", () => {
    const published = publishedPackages();
    const statements = docFiles.flatMap((file) =>
      [...read(file).matchAll(/The (\w+) library packages([^.]*\))?/g)].map((match) => ({ file, count: match[1]!.toLowerCase(), names: match[2] ?? "" })),
    );
    expect(statements.length).toBeGreaterThan(0);
    for (const { file, count, names } of statements) {
      expect(NUMBER_WORDS.indexOf(count), `${file}: "The ${count} library packages"`).toBe(published.length);
      const missing = published.filter((name) => !names.includes(`\`${name}\``) && !names.includes(`\`${name.replace("@toolpact/", "")}\``));
      expect(missing, `${file}: the list after "The ${count} library packages" leaves out`).toEqual([]);
    }
  });

  it("has snippets import only published toolpact packages (the examples are private)", () => {
    const published = new Set(publishedPackages());
    const unpublished = docFiles
      .flatMap((file) => codeBlocks(file, read(file)))
      .filter((block) => block.lang === "ts")
      .flatMap((block) =>
        [...block.content.matchAll(/from "(@toolpact\/[a-z-]+)[^"]*"/g)]
          .filter((match) => !published.has(match[1]!))
          .map((match) => `${where(block)}: imports ${match[1]!}, which is not published`),
      );
    expect(unpublished).toEqual([]);
  });

  it("shows plugin keys as the runtime issues them (tpk_…)", () => {
    const wrong = docFiles.flatMap((file) =>
      read(file)
        .split("\n")
        .flatMap((line, index) => (/(?<![A-Za-z0-9_])pk_/.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(wrong).toEqual([]);
  });
});
