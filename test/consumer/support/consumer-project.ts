/**
 * A plugin author's own project, outside this repository: a provider of its own manifest, a caller of
 * it (and of a manifest another package ships), and the settings of a strict consumer: `strict`,
 * `skipLibCheck: false`, no `dom` lib.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

export const PROVIDER_ID = "com.acme.todo";
export const CALLER_ID = "com.acme.assistant";

/** A finished child process. */
export interface CommandRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/**
 * Runs a command to completion (killed after `timeoutMs`). The environment is the test's own minus
 * what pnpm and vitest set for scripts (`npm_*`, `pnpm_*`, `VITEST*`, `TOOLPACT_*`), so package managers
 * and the CLI behave as in a reader's shell.
 */
export function runCommand(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<CommandRun> {
  const started = performance.now();
  const child = spawn(command, args, { cwd: options.cwd, env: { ...shellEnv(), ...options.env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** Throws with the command's output unless it exited 0; returns the run. */
export async function runOk(command: string, args: readonly string[], options: Parameters<typeof runCommand>[2]): Promise<CommandRun> {
  const run = await runCommand(command, args, options);
  if (run.code !== 0) {
    throw new Error(`\`${[command, ...args].join(" ")}\` in ${options.cwd} exited ${run.code}:\n${run.stdout}\n${run.stderr}`);
  }
  return run;
}

/** The test's environment as a reader's shell would have it. */
export function shellEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined && !/^(npm_|pnpm_|vitest|toolpact_)/i.test(entry[0])),
  );
}

/** What the project's package.json starts with; installs add the rest, as a reader's commands would. */
export interface ProjectPackageJson {
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
  /** npm's `overrides`, or pnpm's `pnpm.overrides` with `packageManager: "pnpm"`. */
  readonly overrides: Record<string, string>;
  readonly packageManager: "npm" | "pnpm";
}

/** Writes the project: package.json, tsconfigs, the provider's manifest and code, the caller, a caller plugin folder. */
export function writeConsumerProject(dir: string, pkg: ProjectPackageJson, npmrc: string): void {
  const file = (name: string, text: string) => {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  };
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  const { overrides, packageManager, ...deps } = pkg;
  file(
    "package.json",
    json({
      name: "acme-todo",
      version: "1.0.0",
      private: true,
      type: "module",
      // The host loads this project as the provider plugin: its plugin.json and this module.
      main: "./src/provider.js",
      ...deps,
      ...(packageManager === "npm" ? { overrides } : { pnpm: { overrides } }),
    }),
  );
  // The machine's package-manager settings (here: where node-gyp finds Node's headers for a native build).
  file(".npmrc", npmrc);
  const compilerOptions = {
    target: "es2022",
    module: "nodenext",
    moduleResolution: "nodenext",
    lib: ["es2023"],
    types: ["node"],
    strict: true,
    skipLibCheck: false,
  };
  file("tsconfig.json", json({ compilerOptions, include: ["src"] }));
  // What a caller compiles: its code, the generated clients, and the public types of what it installed.
  file("tsconfig.caller.json", json({ extends: "./tsconfig.json", include: ["src/caller.ts", "src/caller-surface.ts", "src/generated"] }));

  file(
    "plugin.json",
    json({
      $schema: "./node_modules/@toolpact/contract/manifest.schema.json",
      id: PROVIDER_ID,
      version: "1.0.0",
      permissions: ["tools:provide"],
      tools: [
        {
          name: "add-item",
          title: "Add item",
          effect: "write",
          inputSchema: { type: "object", properties: { text: { type: "string", minLength: 1 } }, required: ["text"], additionalProperties: false },
          outputSchema: {
            type: "object",
            properties: { id: { type: "string" }, targetId: { type: "string" } },
            required: ["id", "targetId"],
          },
        },
        {
          name: "list-items",
          effect: "read",
          inputSchema: { type: "object", additionalProperties: false },
          outputSchema: { type: "object", properties: { items: { type: "array", items: { type: "string" } } }, required: ["items"] },
        },
      ],
    }),
  );
  file(
    "src/provider.ts",
    `import type { PluginSdk } from "@toolpact/runtime";
import { defineTodoProvider } from "./generated/index.js";

const lists = new Map<string, string[]>();

export function activate(sdk: PluginSdk): void {
  sdk.tools.provideAll(defineTodoProvider({
    addItem: {
      preview: (input) => ({ summary: \`Add "\${input.text}"\` }),
      execute: (input, ctx) => {
        const list = \`\${ctx.tenantId}/\${ctx.actor.userId}\`;
        lists.set(list, [...(lists.get(list) ?? []), input.text]);
        return { id: ctx.operationId, targetId: ctx.operationId };
      },
    },
    listItems: { execute: (_input, ctx) => ({ items: lists.get(\`\${ctx.tenantId}/\${ctx.actor.userId}\`) ?? [] }) },
  }));
}
`,
  );
  file(
    "src/caller.ts",
    `import { createHttpTransport, isToolpactError } from "@toolpact/client";
import { createToolClients, type Notes } from "./generated/index.js";

function env(name: string): string {
  const value = process.env[name];
  if (value === undefined) throw new Error(\`\${name} is not set\`);
  return value;
}

const tools = createToolClients(createHttpTransport({ url: env("TOOLPACT_URL"), pluginKey: env("PLUGIN_KEY"), actorToken: env("ACTOR_TOKEN") }));
const input = { text: "Buy milk" };
const preview = await tools.todo.addItem.preview(input);
const confirmationToken = await tools.todo.addItem.confirm(preview);
const written = await tools.todo.addItem.execute(input, { confirmationToken });
const { result } = await tools.todo.listItems.execute({});
let reuse = "accepted";
try {
  await tools.todo.addItem.execute(input, { confirmationToken });
} catch (error) {
  reuse = isToolpactError(error) ? error.code : String(error);
}
console.log(JSON.stringify({ summary: preview.summary, operationId: written.operationId, items: result.items, reuse }));

// The generated types hold in the caller's own compiler: a write that needs confirmation takes its token,
// and the client of the manifest another package ships is typed from it.
// @ts-expect-error: no confirmation token
export const unconfirmed = () => tools.todo.addItem.execute(input);
export const note: Notes.CreateRecordInput = { title: "Q3 plan" };
`,
  );
  file("assistant/plugin.json", json({ id: CALLER_ID, version: "1.0.0", permissions: ["tools:call"] }));
  file("assistant/package.json", json({ type: "module", main: "./index.js" }));
  file("assistant/index.js", "export function activate() {}\n");
}

/** A source file that imports the types of every entry point, so `tsc` checks every public declaration file. */
export function writeSurface(dir: string, name: string, entryPoints: readonly string[]): void {
  const lines = entryPoints.map((entry, index) => `export type * as entry${index} from ${JSON.stringify(entry)};`);
  writeFileSync(path.join(dir, "src", name), `${lines.join("\n")}\n`);
}

/** The provider package another team publishes: only its manifest, exported as `<pkg>/plugin.json`. */
export function writeManifestPackage(dir: string, name: string, manifest: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, "package.json"),
    `${JSON.stringify({ name, version: "1.0.0", type: "module", files: ["plugin.json"], exports: { "./plugin.json": "./plugin.json" } }, null, 2)}\n`,
  );
  writeFileSync(path.join(dir, "plugin.json"), manifest);
}
