/**
 * What importing the package loads: the light exports (resolveManifestArgument, diffManifests, behind
 * `toolpact validate` and `diff`) come without ts-morph and TypeScript, which load on the first
 * generateClients. Run against the build (`pnpm build`), in a Node process of its own.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const built = fileURLToPath(new URL("../dist/index.js", import.meta.url));
if (!existsSync(built)) throw new Error(`${built} is not built: run \`pnpm build\` before this test`);

/** The CommonJS packages loaded after `steps` (ts-morph's TypeScript and json-schema-to-typescript are CommonJS), by package folder. */
function loadedAfter(steps: string): string[] {
  const script = [
    'import { createRequire } from "node:module";',
    `const codegen = await import(${JSON.stringify(built)});`,
    steps,
    "const cache = Object.keys(createRequire(import.meta.url).cache);",
    "const names = new Set(cache.flatMap((file) => file.match(/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\/(?!.*node_modules)/)?.[1] ?? []));",
    "console.log(JSON.stringify([...names].sort()));",
  ].join("\n");
  return JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })) as string[];
}

it("importing it loads neither ts-morph (with its TypeScript) nor json-schema-to-typescript; the first generateClients does", () => {
  const manifest = '{ id: "com.example.todo", version: "1.0.0", permissions: ["tools:provide"], tools: [] }';
  const light = loadedAfter(`codegen.diffManifests(${manifest}, ${manifest}); codegen.resolveManifestArgument("plugin.json", process.cwd());`);
  // @ts-morph/common holds ts-morph's TypeScript; json-schema-to-typescript brings prettier's parts.
  const heavy = ["@ts-morph/common", "json-schema-to-typescript"];
  expect(light.filter((name) => heavy.includes(name))).toEqual([]);
  expect(loadedAfter(`await codegen.generateClients([${manifest}]);`)).toEqual(expect.arrayContaining(heavy));
});
