// The experiment behind the caller's type-check targets (docs/benchmarks.md): the generated 2,000-tool
// caller project with parts of the generated files taken out, type-checked beside the flat floor in
// interleaved runs, TypeScript 6 and 7. Each variant removes something DESIGN.md requires, so none is a
// configuration to ship; together they show what the gap to the floor is made of.
//   generated            the project as codegen writes it
//   plain tokens         `ConfirmationToken<N>` as plain `string` (and the options that carry it), all else kept
//   lean                 no provider half, no client factory bodies (declared instead), no descriptors; brands kept
//   lean, plain tokens   lean, and tokens plain
//   lean, unbranded      lean, with no brand and no generic type at all (per-tool result interfaces, as the floor has)
// Usage: node bench/codegen/variants.mjs [--runs 7]   (writes the projects under bench/codegen/.tmp first)
import { spawnSync } from "node:child_process";
import { cpSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { markdownTable, median } from "../lib/stats.mjs";

const { values } = parseArgs({ options: { runs: { type: "string", default: "7" } } });
const RUNS = Number(values.runs);
const HERE = dirname(fileURLToPath(import.meta.url));
const WORK = join(HERE, ".tmp");
const COMPILERS = { "TS 6": join(HERE, "../node_modules/typescript/bin/tsc"), "TS 7": join(HERE, "../node_modules/typescript7/bin/tsc") };

const PLAIN_OPTIONS =
  "\ninterface PlainConfirmedOptions { readonly confirmationToken: string; readonly idempotencyKey?: string; readonly runId?: string }\n" +
  "interface PlainOptions { readonly confirmationToken?: string | undefined; readonly idempotencyKey?: string; readonly runId?: string }\n";
const plainTokens = (text) =>
  text
    .replace(/toolpact\.ConfirmationToken<"[^"]+">/g, "string")
    .replace(/toolpact\.ConfirmedExecuteOptions<"[^"]+">/g, "PlainConfirmedOptions")
    .replace(/toolpact\.ExecuteCallOptions<"[^"]+">/g, "PlainOptions") + PLAIN_OPTIONS;
const noProviderHalf = (text) => text.replace(/\n\/\*\* Handlers for every tool[\s\S]*$/, "\n");
const declaredFactory = (text) =>
  text.replace(
    /export function (create\w+Client)\(transport: toolpact\.ToolTransport\): (\w+) \{[\s\S]*?\n\}\n/,
    "export declare function $1(transport: toolpact.ToolTransport): $2;\n",
  );
const noDescriptors = (text) => text.replace(/\/\*\* What the runtime needs[^\n]*\nexport const \w+Descriptor = \{[^}]*\} as const;\n/g, "");
const unbranded = (text) =>
  plainTokens(text)
    .replace(/toolpact\.ToolPreview<"[^"]+">/g, "toolpact.PreviewResult")
    .replace(/toolpact\.ExecuteResult<(\w+)Output>/g, "$1Result")
    .replace(
      /export interface (\w+)Output \{/g,
      "export interface $1Result { readonly operationId: string; readonly result: $1Output }\nexport interface $1Output {",
    );
const lean = (text) => noDescriptors(declaredFactory(noProviderHalf(text)));
const indexWithoutProviders = (text) => text.replace(/, defineProvider\d+Provider/g, "").replace(/, type Provider\d+ProviderHandlers/g, "");
const same = (text) => text;

/** name → [transform of each provider file, transform of index.ts] */
const VARIANTS = {
  "plain tokens": [plainTokens, same],
  lean: [lean, indexWithoutProviders],
  "lean, plain tokens": [(text) => plainTokens(lean(text)), indexWithoutProviders],
  "lean, unbranded": [(text) => unbranded(lean(text)), indexWithoutProviders],
};

const made = spawnSync(process.execPath, [join(HERE, "run.mjs"), "--quick", "--keep"], { encoding: "utf8" });
if (made.status !== 0) throw new Error(`bench/codegen/run.mjs --quick --keep failed:\n${made.stderr}`);
const projects = { "flat floor": join(WORK, "floor-2000"), generated: join(WORK, "toolpact-2000") };
for (const [name, [providerFile, indexFile]] of Object.entries(VARIANTS)) {
  const dir = join(WORK, `variant-${name.replace(/\W+/g, "-")}`);
  rmSync(dir, { recursive: true, force: true });
  cpSync(projects.generated, dir, { recursive: true });
  for (const file of readdirSync(join(dir, "generated"))) {
    const path = join(dir, "generated", file);
    writeFileSync(path, (file === "index.ts" ? indexFile : providerFile)(readFileSync(path, "utf8")));
  }
  projects[name] = dir;
}

const checks = {};
const instantiations = {};
for (let run = 0; run < RUNS; run++) {
  for (const [compiler, tsc] of Object.entries(COMPILERS)) {
    for (const [name, dir] of Object.entries(projects)) {
      const result = spawnSync(process.execPath, [tsc, "-p", join(dir, "tsconfig.json"), "--extendedDiagnostics"], { encoding: "utf8" });
      const errors = result.stdout.split("\n").filter((line) => line.includes("error TS"));
      if (errors.length > 0) throw new Error(`${name} (${compiler}) does not compile:\n${errors.slice(0, 5).join("\n")}`);
      ((checks[compiler] ??= {})[name] ??= []).push(Number(/Check time:\s+([\d.]+)s/.exec(result.stdout)[1]) * 1000);
      (instantiations[compiler] ??= {})[name] = Number(/Instantiations:\s+(\d+)/.exec(result.stdout)[1]);
    }
  }
}
rmSync(WORK, { recursive: true, force: true });

console.log(`# The 2,000-tool caller's check time by what the generated files hold (${RUNS} interleaved runs)\n`);
const rows = Object.keys(projects).map((name) => [
  name,
  ...Object.keys(COMPILERS).flatMap((compiler) => {
    const times = checks[compiler][name];
    const ratios = times.map((time, run) => time / checks[compiler]["flat floor"][run]);
    return [`${Math.round(median(times))} ms`, `${median(ratios).toFixed(2)}x`, instantiations[compiler][name].toLocaleString("en-US")];
  }),
]);
console.log(
  markdownTable(["project", "TS 6 Check time", "TS 6 ÷ floor", "TS 6 instantiations", "TS 7 Check time", "TS 7 ÷ floor", "TS 7 instantiations"], rows),
);
console.log("\nCheck times are medians; ratios are paired by run (each run's time over the floor's in the same run), then the median.");
