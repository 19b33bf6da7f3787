// bench/codegen: codegen of 100 manifests x 20 tools (2,000) against json-schema-to-typescript alone over
// the same schemas, and the type-check cost of a caller of every tool (200 and 2,000 tools) as generated
// clients against the same tools as a tRPC v11 router with zod inputs called through createTRPCClient,
// under TypeScript 6 and 7. Runs are interleaved and each figure is the median; only ratios taken in one
// run count. Uses the built dist: run `pnpm build` first.
// The third subject is the floor: the same tools as hand-written flat interfaces (one interface per tool
// input and output, one per tool's methods, a flat client interface; no generics, no implementation),
// the least a typed caller of these tools can cost.
// Usage: node bench/codegen/run.mjs [--full] [--runs <n>] [--quick]
//   --quick: one run, only 2,000 tools, no tRPC subject (for iterating; the ratios to tRPC need a full run)
//   --no-trpc: leave out the tRPC subject;  --keep: keep the projects in bench/codegen/.tmp to look at
//   --codegen-only: only the codegen comparison, no type-checking (to compare codegen before and after a change)
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
const QUICK = args.includes("--quick");
const RUNS = runsArg >= 0 ? Number(args[runsArg + 1]) : args.includes("--full") ? 7 : QUICK ? 1 : 3;
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
 * A caller of every tool: one function per tool, as real callers are written (preview, confirm and
 * execute where confirmation is required, else execute). The same text for the generated clients and the floor.
 */
function callerSource(manifests, transportModule, clientsModule) {
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
  return [
    `import type { ToolTransport } from "${transportModule}";`,
    `import { createToolClients } from "${clientsModule}";`,
    "",
    "declare const transport: ToolTransport;",
    "const tools = createToolClients(transport);",
    "",
    ...calls,
    "",
  ].join("\n");
}

/**
 * A project with the generated clients and a caller of every tool: one function per tool, as real
 * callers are written (preview, confirm and execute where confirmation is required, else execute).
 */
async function writeToolpactProject(dir, manifests) {
  const files = await generateClients(manifests);
  await mkdir(join(dir, "generated"), { recursive: true });
  for (const file of files) await writeFile(join(dir, "generated", file.path), file.contents);
  await writeFile(join(dir, "caller.ts"), callerSource(manifests, "@toolpact/client", "./generated/index.js"));
  await writeFile(join(dir, "tsconfig.json"), JSON.stringify(TSCONFIG, null, 2));
}

const pascal = (name) => name.replace(/^./, (c) => c.toUpperCase());

/**
 * The floor: the same tools as hand-written flat interfaces. Input and output types come from
 * json-schema-to-typescript with codegen's options and part names, so they match the generated ones;
 * each tool's methods are one concrete interface (no generics, no brands), and nothing has a body.
 */
async function writeFloorProject(dir, manifests) {
  await mkdir(join(dir, "floor"), { recursive: true });
  const common = [
    "export interface ToolTransport { readonly url: string }",
    "export interface Preview { readonly summary: string; readonly details?: unknown; readonly confirmation: { readonly required: boolean } }",
    "export interface PreviewOptions { readonly runId?: string }",
    "export interface CallOptions { readonly confirmationToken?: string | undefined; readonly idempotencyKey?: string; readonly runId?: string }",
    "export interface ConfirmedCallOptions { readonly confirmationToken: string; readonly idempotencyKey?: string; readonly runId?: string }",
    "",
  ];
  await writeFile(join(dir, "floor/common.ts"), common.join("\n"));
  const clients = [];
  for (const manifest of manifests) {
    const client = clientName(manifest);
    const lines = ['import type { CallOptions, ConfirmedCallOptions, Preview, PreviewOptions } from "./common.js";', ""];
    const members = [];
    for (const tool of manifest.tools) {
      const type = pascal(methodName(tool));
      const typesOf = async (schema, root) =>
        compile(schema, root, {
          ...JSTT_OPTIONS,
          customName: (part, keyName) => {
            const name = part.title ?? part.$id ?? keyName;
            if (name === undefined || name === root) return undefined;
            return `${root}_${name
              .split(/[^A-Za-z0-9]+/)
              .filter(Boolean)
              .map(pascal)
              .join("")}`;
          },
        });
      lines.push(await typesOf(tool.inputSchema, `${type}Input`));
      const output = tool.outputSchema ? `${type}Output` : "unknown";
      if (tool.outputSchema) lines.push(await typesOf(tool.outputSchema, output));
      const confirmed = tool.requiresConfirmation;
      lines.push(
        `export interface ${type}Result { readonly operationId: string; readonly result: ${output} }`,
        `export interface ${type}Methods {`,
        `  preview(input: ${type}Input, options?: PreviewOptions): Promise<Preview>;`,
        `  confirm(preview: Preview): Promise<${confirmed ? "string" : "string | undefined"}>;`,
        `  execute(input: ${type}Input, options${confirmed ? ": ConfirmedCallOptions" : "?: CallOptions"}): Promise<${type}Result>;`,
        "}",
        "",
      );
      members.push(`  readonly ${methodName(tool)}: ${type}Methods;`);
    }
    const name = `${pascal(client)}Client`;
    lines.push(`export interface ${name} {`, ...members, "}", "");
    await writeFile(join(dir, "floor", `${client}.ts`), lines.join("\n"));
    clients.push({ client, name });
  }
  await writeFile(
    join(dir, "floor/index.ts"),
    [
      'import type { ToolTransport } from "./common.js";',
      ...clients.map(({ client, name }) => `import type { ${name} } from "./${client}.js";`),
      'export type { ToolTransport } from "./common.js";',
      "",
      "export interface ToolClients {",
      ...clients.map(({ client, name }) => `  readonly ${client}: ${name};`),
      "}",
      "",
      "export declare function createToolClients(transport: ToolTransport): ToolClients;",
      "",
    ].join("\n"),
  );
  await writeFile(join(dir, "caller.ts"), callerSource(manifests, "./floor/index.js", "./floor/index.js"));
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
    [
      'import { initTRPC } from "@trpc/server";',
      'import { z } from "zod";',
      "",
      "const t = initTRPC.create();",
      "",
      "export const appRouter = t.router({",
      ...routers,
      "});",
      "",
      "export type AppRouter = typeof appRouter;",
      "",
    ].join("\n"),
  );
  const calls = manifests.flatMap((manifest) =>
    manifest.tools.map((tool) => `client.${clientName(manifest)}.${methodName(tool)}.mutate(${inputLiteral(tool.inputSchema)})`),
  );
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
  const result = spawnSync(process.execPath, [compiler, "-p", join(dir, "tsconfig.json"), "--extendedDiagnostics"], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const output = `${result.stdout}${result.stderr}`;
  if (result.status !== 0 || /error TS\d+/.test(output)) throw new Error(`type-check of ${dir} failed:\n${output.slice(0, 4000)}`);
  const number = (label) => {
    const match = new RegExp(`^${label}:\\s+([\\d.]+)`, "m").exec(output);
    if (!match) throw new Error(`no "${label}" in the output of ${compiler}:\n${output}`);
    return Number(match[1]);
  };
  return { check: number("Check time") * 1000, memory: number("Memory used") / 1024, instantiations: number("Instantiations") };
}

const SUBJECTS = [
  { side: "toolpact (generated)", prefix: "toolpact", write: writeToolpactProject },
  { side: "floor (flat interfaces)", prefix: "floor", write: writeFloorProject },
  ...(QUICK || args.includes("--no-trpc") ? [] : [{ side: "tRPC router + zod", prefix: "trpc", write: writeTrpcProject }]),
];

async function benchTypecheck(manifests) {
  await rm(WORK, { recursive: true, force: true });
  const projects = [];
  for (const providers of QUICK ? [PROVIDERS] : [10, PROVIDERS]) {
    const subset = manifests.slice(0, providers);
    const tools = subset.reduce((sum, manifest) => sum + manifest.tools.length, 0);
    for (const subject of SUBJECTS) {
      const dir = join(WORK, `${subject.prefix}-${tools}`);
      await subject.write(dir, subset);
      projects.push({ tools, side: subject.side, prefix: subject.prefix, dir });
    }
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
  if (!args.includes("--keep")) await rm(WORK, { recursive: true, force: true });
  return results;
}

const started = performance.now();
const manifests = loadToolSet();
const toolCount = manifests.reduce((sum, manifest) => sum + manifest.tools.length, 0);
const schemaCount = manifests.reduce((sum, manifest) => sum + manifest.tools.reduce((n, tool) => n + (tool.outputSchema ? 2 : 1), 0), 0);
console.log(
  `# bench/codegen: ${PROVIDERS} manifests x ${TOOLS_EACH} tools = ${toolCount} tools (${schemaCount} schemas), median of ${RUNS} interleaved run${RUNS === 1 ? "" : "s"}\n`,
);

const CODEGEN_TARGET = 1.2;
const codegen = await benchCodegen(manifests);
console.log("## Codegen of 2,000 tools\n");
console.log("| | time | ratio |");
console.log("|---|---:|---:|");
console.log(`| json-schema-to-typescript alone (same schemas, same options) | ${ms(codegen.jstt)} | 1.00x |`);
console.log(`| toolpact codegen (types + descriptors + clients + providers, printed) | ${ms(codegen.codegen)} | ${ratio(codegen.codegen, codegen.jstt)} |`);
console.log(`\nTarget: at most ${CODEGEN_TARGET}x. ${codegen.codegen / codegen.jstt <= CODEGEN_TARGET ? "Met" : "NOT met"}.\n`);

if (args.includes("--codegen-only")) process.exit(0);

const checks = await benchTypecheck(manifests);
const find = (tools, prefix, compiler) => checks.find((r) => r.tools === tools && r.prefix === prefix && r.compiler === compiler);
const sizes = [...new Set(checks.map((r) => r.tools))];
const hasTrpc = checks.some((r) => r.prefix === "trpc");
console.log("## Type-checking a caller of every tool (`tsc --noEmit --extendedDiagnostics`)\n");
console.log("| tools | client | compiler | Check time | Memory used | Instantiations | per tool |");
console.log("|---:|---|---|---:|---:|---:|---:|");
for (const r of checks) {
  console.log(
    `| ${r.tools.toLocaleString("en-US")} | ${r.side} | ${r.compiler} | ${ms(r.check)} | ${Math.round(r.memory)} MB | ` +
      `${r.instantiations.toLocaleString("en-US")} | ${Math.round(r.instantiations / r.tools).toLocaleString("en-US")} |`,
  );
}
/** Targets at 2,000 tools: generated within 1.3x of the floor; tRPC at least 6x (TS 6) or 15x (TS 7) the generated. */
const FLOOR_TARGET = 1.3;
const TRPC_TARGET = { "TS 6": 6, "TS 7": 15 };
const verdict = (met) => (met ? "met" : "NOT met");
console.log(
  "\n| tools | compiler | toolpact / floor Check time | toolpact / floor instantiations | target |" +
    (hasTrpc ? " tRPC / toolpact Check time | tRPC / toolpact memory | tRPC / toolpact instantiations | target |" : ""),
);
console.log("|---:|---|---:|---:|---|" + (hasTrpc ? "---:|---:|---:|---|" : ""));
for (const tools of sizes) {
  for (const compiler of Object.keys(COMPILERS)) {
    const ours = find(tools, "toolpact", compiler);
    const floor = find(tools, "floor", compiler);
    const atTarget = tools === toolCount;
    const floorRatio = ours.check / floor.check;
    let row = `| ${tools.toLocaleString("en-US")} | ${compiler} | ${ratio(ours.check, floor.check)} | ${ratio(ours.instantiations, floor.instantiations)} | ${atTarget ? `at most ${FLOOR_TARGET}x: ${verdict(floorRatio <= FLOOR_TARGET)}` : ""} |`;
    if (hasTrpc) {
      const theirs = find(tools, "trpc", compiler);
      const trpcRatio = theirs.check / ours.check;
      row += ` ${ratio(theirs.check, ours.check)} | ${ratio(theirs.memory, ours.memory)} | ${ratio(theirs.instantiations, ours.instantiations)} | ${atTarget ? `at least ${TRPC_TARGET[compiler]}x: ${verdict(trpcRatio >= TRPC_TARGET[compiler])}` : ""} |`;
    }
    console.log(row);
  }
}
if (sizes.length > 1) {
  const [small, large] = sizes;
  console.log(`\n| compiler | ${SUBJECTS.map((subject) => `${subject.side} Check time, 2,000 / 200 tools`).join(" | ")} |`);
  console.log(`|---|${SUBJECTS.map(() => "---:").join("|")}|`);
  for (const compiler of Object.keys(COMPILERS)) {
    console.log(
      `| ${compiler} | ${SUBJECTS.map((subject) => ratio(find(large, subject.prefix, compiler).check, find(small, subject.prefix, compiler).check)).join(" | ")} |`,
    );
  }
}
console.log(`\n(${Math.round((performance.now() - started) / 1000)} s in all)`);
