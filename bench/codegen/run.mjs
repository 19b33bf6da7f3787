// bench/codegen: codegen of 100 manifests x 20 tools (2,000) against json-schema-to-typescript alone over
// the same schemas, and the type-check cost of a caller of every tool (200 and 2,000 tools) as generated
// clients against the same tools as a tRPC v11 router with zod inputs called through createTRPCClient,
// under TypeScript 6 and 7. Runs are interleaved and each figure is the median; only ratios taken in one
// run count. Uses the built dist: run `pnpm build` first.
// Usage: node bench/codegen/run.mjs [--full] [--runs <n>]
import { spawnSync } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateClients, JSON_SCHEMA_TO_TYPESCRIPT_OPTIONS as JSTT_OPTIONS } from "@toolpact/codegen";
import { formatDiagnostic, parseManifest } from "@toolpact/contract";
import { compile } from "json-schema-to-typescript";
import { clientName, createToolSet, inputLiteral, methodName, zodSource } from "./tool-set.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const WORK = join(HERE, ".tmp");
const BENCH = dirname(HERE);
const COMPILERS = {
  "TS 6": join(BENCH, "node_modules/typescript/bin/tsc"),
  "TS 7": join(BENCH, "node_modules/typescript7/bin/tsc"),
};
const args = process.argv.slice(2);
const runsArg = args.indexOf("--runs");
const RUNS = runsArg >= 0 ? Number(args[runsArg + 1]) : args.includes("--full") ? 7 : 3;
const PROVIDERS = 100;
const TOOLS_EACH = 20;


const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (value) => `${Math.round(value).toLocaleString("en-US")} ms`;
const ratio = (a, b) => `${(a / b).toFixed(2)}x`;

function loadToolSet() {
  return createToolSet(PROVIDERS, TOOLS_EACH).map((draft) => {
    const result = parseManifest(JSON.stringify(draft), `${draft.id}.plugin.json`);
    if (!result.ok) throw new Error(`bench manifest ${draft.id} is invalid:\n${result.diagnostics.map(formatDiagnostic).join("\n")}`);
    return result.manifest;
  });
}

async function jsttAlone(manifests) {
  let bytes = 0;
  for (const manifest of manifests) {
    for (const tool of manifest.tools) {
      const name = methodName(tool).replace(/^./, (c) => c.toUpperCase());
      bytes += (await compile(tool.inputSchema, `${name}Input`, JSTT_OPTIONS)).length;
      if (tool.outputSchema) bytes += (await compile(tool.outputSchema, `${name}Output`, JSTT_OPTIONS)).length;
    }
  }
  return bytes;
}

async function timeIt(action) {
  const start = performance.now();
  await action();
  return performance.now() - start;
}

async function benchCodegen(manifests) {
  // Warm-up: module loading and JIT are not what is compared.
  await jsttAlone(manifests.slice(0, 5));
  await generateClients(manifests.slice(0, 5));
  const jstt = [];
  const codegen = [];
  for (let run = 0; run < RUNS; run++) {
    if (run % 2 === 0) {
      jstt.push(await timeIt(() => jsttAlone(manifests)));
      codegen.push(await timeIt(() => generateClients(manifests)));
    } else {
      codegen.push(await timeIt(() => generateClients(manifests)));
      jstt.push(await timeIt(() => jsttAlone(manifests)));
    }
  }
  return { jstt: median(jstt), codegen: median(codegen) };
}

const TSCONFIG = {
  compilerOptions: {
    target: "es2023",
    lib: ["es2023"],
    module: "nodenext",
    moduleResolution: "nodenext",
    types: ["node"],
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    verbatimModuleSyntax: true,
    skipLibCheck: true,
    noEmit: true,
  },
  files: ["caller.ts"],
};

/**
 * A project with the generated clients and a caller of every tool: one function per tool, as real
 * callers are written (preview, confirm and execute where confirmation is required, else execute).
 */
async function writeToolpactProject(dir, manifests) {
  const files = await generateClients(manifests);
  await mkdir(join(dir, "generated"), { recursive: true });
  for (const file of files) await writeFile(join(dir, "generated", file.path), file.contents);
  const calls = [];
  for (const manifest of manifests) {
    for (const tool of manifest.tools) {
      const method = `tools.${clientName(manifest)}.${methodName(tool)}`;
      const input = inputLiteral(tool.inputSchema);
      const body = tool.requiresConfirmation
        ? [
            `  const preview = await ${method}.preview(${input});`,
            `  const confirmationToken = await ${method}.confirm(preview);`,
            `  return (await ${method}.execute(${input}, { confirmationToken })).result;`,
          ]
        : [`  return (await ${method}.execute(${input})).result;`];
      calls.push(`export async function call${calls.length}() {`, ...body, "}");
    }
  }
  await writeFile(
    join(dir, "caller.ts"),
    [
      'import type { ToolTransport } from "@toolpact/client";',
      'import { createToolClients } from "./generated/index.js";',
      "",
      "declare const transport: ToolTransport;",
      "const tools = createToolClients(transport);",
      "",
      ...calls,
      "",
    ].join("\n"),
  );
  await writeFile(join(dir, "tsconfig.json"), JSON.stringify(TSCONFIG, null, 2));
}

/** The same tools as one tRPC v11 router (a sub-router per provider, zod inputs), called through createTRPCClient the same way. */
async function writeTrpcProject(dir, manifests) {
  await mkdir(dir, { recursive: true });
  const routers = manifests.map((manifest) => {
    const procedures = manifest.tools.map(
      (tool) => `    ${methodName(tool)}: t.procedure.input(${zodSource(tool.inputSchema)}).mutation(({ input }) => ({ operationId: "op", input })),`,
    );
    return `  ${clientName(manifest)}: t.router({\n${procedures.join("\n")}\n  }),`;
  });
  await writeFile(
    join(dir, "router.ts"),
    ['import { initTRPC } from "@trpc/server";', 'import { z } from "zod";', "", "const t = initTRPC.create();", "", "export const appRouter = t.router({", ...routers, "});", "", "export type AppRouter = typeof appRouter;", ""].join("\n"),
  );
  const calls = manifests.flatMap((manifest) => manifest.tools.map((tool) => `client.${clientName(manifest)}.${methodName(tool)}.mutate(${inputLiteral(tool.inputSchema)})`));
  await writeFile(
    join(dir, "caller.ts"),
    [
      'import { createTRPCClient, httpLink } from "@trpc/client";',
      'import type { AppRouter } from "./router.js";',
      "",
      'const client = createTRPCClient<AppRouter>({ links: [httpLink({ url: "http://127.0.0.1:4400/trpc" })] });',
      "",
      ...calls.flatMap((call, index) => [`export async function call${index}() {`, `  return await ${call};`, "}"]),
      "",
    ].join("\n"),
  );
  await writeFile(join(dir, "tsconfig.json"), JSON.stringify(TSCONFIG, null, 2));
}

function typecheck(compiler, dir) {
  const result = spawnSync(process.execPath, [compiler, "-p", join(dir, "tsconfig.json"), "--extendedDiagnostics"], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const output = `${result.stdout}${result.stderr}`;
  if (result.status !== 0 || /error TS\d+/.test(output)) throw new Error(`type-check of ${dir} failed:\n${output.slice(0, 4000)}`);
  const number = (label) => {
    const match = new RegExp(`^${label}:\\s+([\\d.]+)`, "m").exec(output);
    if (!match) throw new Error(`no "${label}" in the output of ${compiler}:\n${output}`);
    return Number(match[1]);
  };
  return { check: number("Check time") * 1000, memory: number("Memory used") / 1024, instantiations: number("Instantiations") };
}

async function benchTypecheck(manifests) {
  await rm(WORK, { recursive: true, force: true });
  const projects = [];
  for (const providers of [10, PROVIDERS]) {
    const subset = manifests.slice(0, providers);
    const tools = subset.reduce((sum, manifest) => sum + manifest.tools.length, 0);
    const toolpact = join(WORK, `toolpact-${tools}`);
    const trpc = join(WORK, `trpc-${tools}`);
    await writeToolpactProject(toolpact, subset);
    await writeTrpcProject(trpc, subset);
    projects.push({ tools, side: "toolpact (generated)", dir: toolpact }, { tools, side: "tRPC router + zod", dir: trpc });
  }
  const samples = new Map();
  for (let run = 0; run < RUNS; run++) {
    for (const [compilerName, compiler] of Object.entries(COMPILERS)) {
      for (const project of run % 2 === 0 ? projects : [...projects].reverse()) {
        const key = `${compilerName}|${project.dir}`;
        samples.set(key, [...(samples.get(key) ?? []), typecheck(compiler, project.dir)]);
      }
    }
  }
  const results = [];
  for (const project of projects) {
    for (const compilerName of Object.keys(COMPILERS)) {
      const runs = samples.get(`${compilerName}|${project.dir}`);
      results.push({
        ...project,
        compiler: compilerName,
        check: median(runs.map((r) => r.check)),
        memory: median(runs.map((r) => r.memory)),
        instantiations: median(runs.map((r) => r.instantiations)),
      });
    }
  }
  await rm(WORK, { recursive: true, force: true });
  return results;
}

const started = performance.now();
const manifests = loadToolSet();
const toolCount = manifests.reduce((sum, manifest) => sum + manifest.tools.length, 0);
const schemaCount = manifests.reduce((sum, manifest) => sum + manifest.tools.reduce((n, tool) => n + (tool.outputSchema ? 2 : 1), 0), 0);
console.log(`# bench/codegen: ${PROVIDERS} manifests x ${TOOLS_EACH} tools = ${toolCount} tools (${schemaCount} schemas), median of ${RUNS} interleaved runs\n`);

const codegen = await benchCodegen(manifests);
console.log("## Codegen of 2,000 tools\n");
console.log("| | time | ratio |");
console.log("|---|---:|---:|");
console.log(`| json-schema-to-typescript alone (same schemas, same options) | ${ms(codegen.jstt)} | 1.00x |`);
console.log(`| toolpact codegen (types + descriptors + clients + providers, printed) | ${ms(codegen.codegen)} | ${ratio(codegen.codegen, codegen.jstt)} |`);
console.log(`\nTarget: at most 1.5x. ${codegen.codegen / codegen.jstt <= 1.5 ? "Met" : "NOT met"}.\n`);

const checks = await benchTypecheck(manifests);
const find = (tools, side, compiler) => checks.find((r) => r.tools === tools && r.side.startsWith(side) && r.compiler === compiler);
console.log("## Type-checking a caller of every tool (`tsc --noEmit --extendedDiagnostics`)\n");
console.log("| tools | client | compiler | Check time | Memory used | Instantiations |");
console.log("|---:|---|---|---:|---:|---:|");
for (const r of checks) {
  console.log(`| ${r.tools.toLocaleString("en-US")} | ${r.side} | ${r.compiler} | ${ms(r.check)} | ${Math.round(r.memory)} MB | ${r.instantiations.toLocaleString("en-US")} |`);
}
console.log("\n| tools | compiler | tRPC / toolpact Check time | tRPC / toolpact memory | tRPC / toolpact instantiations | target |");
console.log("|---:|---|---:|---:|---:|---|");
for (const tools of [...new Set(checks.map((r) => r.tools))]) {
  for (const compiler of Object.keys(COMPILERS)) {
    const ours = find(tools, "toolpact", compiler);
    const theirs = find(tools, "tRPC", compiler);
    const target = tools === toolCount ? (compiler === "TS 6" ? "at least 5x" : "at least 10x") : "";
    console.log(
      `| ${tools.toLocaleString("en-US")} | ${compiler} | ${ratio(theirs.check, ours.check)} | ${ratio(theirs.memory, ours.memory)} | ${ratio(theirs.instantiations, ours.instantiations)} | ${target} |`,
    );
  }
}
console.log("\n| compiler | toolpact Check time, 2,000 / 200 tools | tRPC Check time, 2,000 / 200 tools |");
console.log("|---|---:|---:|");
const [small, large] = [...new Set(checks.map((r) => r.tools))];
for (const compiler of Object.keys(COMPILERS)) {
  console.log(`| ${compiler} | ${ratio(find(large, "toolpact", compiler).check, find(small, "toolpact", compiler).check)} | ${ratio(find(large, "tRPC", compiler).check, find(small, "tRPC", compiler).check)} |`);
}
console.log(`\n(${Math.round((performance.now() - started) / 1000)} s in all)`);
