/**
 * What the published declaration files make a consumer's compiler load. `@toolpact/runtime` (and
 * `/testing`) name no type of better-sqlite3 or pg: their types are dev dependencies, so a consumer
 * compiling with `skipLibCheck: false` would fail on them. `@toolpact/client` types its HTTP transport
 * with the server's router, but only inside the implementation: its declarations name neither the
 * server nor tRPC, only `@toolpact/protocol` (which has no dependencies). Reads the built `dist` folders (the test command builds first).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const PACKAGES = resolve(dirname(fileURLToPath(import.meta.url)), "../../packages");

/** Every declaration file reachable from `entry` through relative imports, and the packages they import. */
function declarationGraph(entry: string): { files: string[]; packages: string[] } {
  const files: string[] = [];
  const packages = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.includes(file)) continue;
    files.push(file);
    for (const match of readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
      const specifier = match[1]!;
      if (specifier.startsWith(".")) pending.push(resolve(dirname(file), specifier.replace(/\.js$/, ".d.ts")));
      else packages.add(specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!);
    }
  }
  return { files, packages: [...packages].sort() };
}

function graphOf(entry: string): { files: string[]; packages: string[] } {
  const file = resolve(PACKAGES, entry);
  expect(existsSync(file), `${file} is missing: build first (pnpm build)`).toBe(true);
  return declarationGraph(file);
}

describe("published declarations", () => {
  for (const entry of ["runtime/dist/index.d.ts", "runtime/dist/testing/index.d.ts"]) {
    it(`${entry} reaches no database driver's types`, () => {
      const { files, packages } = graphOf(entry);
      expect(files.length).toBeGreaterThan(3);
      expect(packages.filter((name) => name === "better-sqlite3" || name === "pg" || name.startsWith("@types/"))).toEqual([]);
    });
  }

  it("client/dist/index.d.ts reaches neither the server's types nor tRPC's (which need the DOM lib)", () => {
    const { files, packages } = graphOf("client/dist/index.d.ts");
    expect(files.some((file) => file.endsWith("http-transport.d.ts"))).toBe(true);
    expect(packages).toEqual(["@toolpact/protocol"]);
  });
});
