/**
 * Keeps README.md and docs/ from rotting: every code block is compiled, run, or checked against what
 * it names, and the reference pages are checked against the code they describe.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOLPACT_ERRORS, TOOLPACT_ERROR_CODES, manifestJsonSchema, parseManifest } from "@toolpact/contract";
import {
  ASSISTANT_ID,
  DEMO_TENANT,
  adminHeaders,
  demoIdentity,
  examplesConfig,
  freePort,
  generateSecrets,
  hostEnvironment,
  mintActorToken,
  mintPresenceToken,
  setUpTenant,
  trpcMutation,
  type DemoSecrets,
} from "@toolpact/example-assistant";
import { SECRET_ENV_VARS, loadHostConfig, startHost, type RunningHost } from "@toolpact/server";
import { commandListProblems, type CommandFacts } from "./command-lists.js";
import { codeBlocks, where, type CodeBlock } from "./markdown-blocks.js";
import { isSession, runCommands, sessionCommands, sessionProblems } from "./shell-session.js";
import { typecheckSnippets } from "./snippet-typecheck.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const cliBin = path.join(repoRoot, "packages/cli/dist/bin.js");
const docFiles = [
  "README.md",
  ...readdirSync(path.join(repoRoot, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];
const docs = new Map(docFiles.map((file) => [file, readFileSync(path.join(repoRoot, file), "utf8")]));
const blocks = docFiles.flatMap((file) => codeBlocks(file, docs.get(file)!));
/**
 * Blocks of docs/getting-started.md that test/consumer/first-hour.test.ts checks instead: its
 * `first-hour` sessions run from an empty folder against the packed packages, and each
 * `first-hour-file=<path>` block is compared with the file those commands wrote (and compiled).
 */
const firstHour = (block: CodeBlock) => "first-hour" in block.attributes || "first-hour-file" in block.attributes;
const ofLang = (...langs: string[]) => blocks.filter((block) => langs.includes(block.lang));

/** Plugins the docs' host loads besides the examples: docs/plugin-sdk.md's plain-JavaScript provider and a caller of it. */
const DOCS_PLUGIN_DIRS = ["docs/examples/reminders", "examples/docs-check/plugins/caller"].map((dir) => path.join(repoRoot, dir));
/** The tenant docs/plugin-sdk.md's session sets up (the demo tenant stays as the other pages show it). */
const SDK_TENANT = "sdk";

let workDir: string;
let host: RunningHost;
let secrets: DemoSecrets;
let sessionEnv: NodeJS.ProcessEnv;
/** Variables a page's sessions see instead of the shared ones. */
const pageEnv = new Map<string, NodeJS.ProcessEnv>();

beforeAll(async () => {
  workDir = mkdtempSync(path.join(tmpdir(), "toolpact-docs-"));
  secrets = generateSecrets();
  const env = hostEnvironment(secrets, workDir);
  const configFile = path.join(workDir, "toolpact.config.json");
  const config = examplesConfig(workDir, await freePort());
  // The console on, as docs/operating.md turns it on: its session shows what a visitor without a sign-in gets.
  writeFileSync(configFile, JSON.stringify({ ...config, plugins: [...(config.plugins as string[]), ...DOCS_PLUGIN_DIRS], console: { enabled: true } }));
  process.env.NOTES_DB_PATH = env.NOTES_DB_PATH;
  process.env.MAILER_OUTBOX_PATH = env.MAILER_OUTBOX_PATH;
  try {
    host = await startHost({ config: await loadHostConfig({ cwd: workDir, file: configFile, env: {} }), env: { ...env } });
  } finally {
    delete process.env.NOTES_DB_PATH;
    delete process.env.MAILER_OUTBOX_PATH;
  }
  const { pluginKey } = await setUpTenant(host.url, secrets.adminKey);
  const identity = demoIdentity(secrets);
  const ada = { tenantId: DEMO_TENANT, userId: "ada" };

  // `toolpact` on the PATH is this repository's CLI, as `pnpm toolpact` runs it.
  const bin = path.join(workDir, "bin");
  mkdirSync(bin);
  writeFileSync(path.join(bin, "toolpact"), `#!/bin/sh\nexec "${process.execPath}" "${cliBin}" "$@"\n`, { mode: 0o755 });
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("TOOLPACT_")));
  sessionEnv = {
    ...inherited,
    PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}`,
    NO_COLOR: "1",
    TOOLPACT_URL: host.url,
    ADMIN_KEY: secrets.adminKey,
    PLUGIN_KEY: pluginKey,
    ACTOR_TOKEN: await mintActorToken(identity, ada, { level: 1, issuedTo: ASSISTANT_ID, ttlSeconds: 600 }),
    PRESENCE_TOKEN: await mintPresenceToken(identity, ada, 600),
  };
  // docs/plugin-sdk.md: ada in a tenant of her own, for whichever caller the session issues a key to.
  const adaInSdk = { tenantId: SDK_TENANT, userId: "ada" };
  pageEnv.set("docs/plugin-sdk.md", {
    ACTOR_TOKEN: await mintActorToken(identity, adaInSdk, { level: 1, ttlSeconds: 600 }),
    GUEST_ACTOR_TOKEN: await mintActorToken(identity, { tenantId: SDK_TENANT, userId: "gus" }, { level: 1, roles: ["guest"], ttlSeconds: 600 }),
  });
});

afterAll(async () => {
  await host?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe("every code block in README.md and docs/", () => {
  it("is of a kind this test checks", () => {
    const unchecked = blocks
      .filter((block) => {
        if (block.lang === "ts" || block.lang === "sh") return false;
        if (block.lang === "js") return typeof block.attributes.file !== "string";
        if (block.lang === "json" || block.lang === "jsonc") {
          return !["manifest", "config", "policy", "file", "first-hour-file"].some((role) => role in block.attributes) && block.lang === "jsonc";
        }
        return true;
      })
      .map((block) => `${where(block)}: \`\`\`${block.lang} ${Object.keys(block.attributes).join(" ")}`);
    expect(unchecked, "use ts, sh, js with file=..., json, or jsonc with manifest|config|policy|file=...|first-hour-file=...").toEqual([]);
    expect(blocks.length).toBeGreaterThan(20);
  });

  it("ts: type-checks against the real packages and the generated example clients", () => {
    const snippets = ofLang("ts").filter((block) => !firstHour(block));
    expect(snippets.length).toBeGreaterThan(5);
    expect(typecheckSnippets(repoRoot, snippets)).toEqual([]);
  }, 180_000); // one synchronous tsc program: 20-80 s beside the release gates' installs and compiles

  it("file=…: shows that file exactly as it is in the repository", () => {
    const differing = blocks
      .filter((block) => typeof block.attributes.file === "string")
      .filter((block) => readFileSync(path.join(repoRoot, block.attributes.file as string), "utf8") !== block.content)
      .map((block) => `${where(block)}: differs from ${block.attributes.file as string}`);
    expect(differing).toEqual([]);
  });

  it("js: is the module of a plugin the docs' host loaded and activated (so its sessions run it)", () => {
    const loaded = new Set(DOCS_PLUGIN_DIRS.map((dir) => path.join(dir, "index.js")));
    const notRun = ofLang("js")
      .filter((block) => !loaded.has(path.join(repoRoot, block.attributes.file as string)))
      .map((block) => `${where(block)}: ${block.attributes.file as string} is not a plugin module the docs' host loads`);
    expect(notRun).toEqual([]);
    expect(host.plugins.map((manifest) => manifest.id)).toContain("com.example.reminders");
  });

  it("json: parses; manifest blocks load (or fail, when marked invalid) as toolpact loads them", () => {
    const problems: string[] = [];
    for (const block of ofLang("json", "jsonc")) {
      if (block.lang === "json" && !("file" in block.attributes)) {
        try {
          JSON.parse(block.content);
        } catch (error) {
          problems.push(`${where(block)}: not JSON: ${(error as Error).message}`);
        }
      }
      if ("manifest" in block.attributes) {
        const result = parseManifest(block.content, where(block));
        const wantValid = !("invalid" in block.attributes);
        if (result.ok !== wantValid)
          problems.push(
            `${where(block)}: expected a${wantValid ? " valid" : "n invalid"} manifest: ${JSON.stringify(result.ok ? result.warnings : result.diagnostics)}`,
          );
      }
    }
    expect(problems).toEqual([]);
  });

  it("json config: is a toolpact.config.json that `toolpact serve` accepts", async () => {
    const configs = blocks.filter((block) => "config" in block.attributes);
    expect(configs.length).toBeGreaterThan(0);
    for (const block of configs) {
      const file = path.join(workDir, `config-${block.line}.json`);
      writeFileSync(file, block.content);
      await expect(loadHostConfig({ cwd: workDir, file, env: {} }), where(block)).resolves.toBeDefined();
    }
  });

  it("json policy: is a policy the admin API accepts", async () => {
    const policies = blocks.filter((block) => "policy" in block.attributes);
    expect(policies.length).toBeGreaterThan(0);
    for (const block of policies) {
      const policy = JSON.parse(block.content) as unknown;
      await expect(
        trpcMutation(host.url, "admin.setPolicy", { tenantId: `docs-${block.line}`, policy }, adminHeaders(secrets.adminKey)),
        where(block),
      ).resolves.toBeUndefined();
    }
  });

  it("sh lists: name real scripts, toolpact commands and flags, and the pinned pnpm", () => {
    const lists = ofLang("sh").filter((block) => !isSession(block));
    expect(lists.length).toBeGreaterThan(0);
    expect(lists.flatMap((block) => commandListProblems(block, commandFacts()))).toEqual([]);
  }, 120_000); // the first to read the facts: it runs the CLI's --help for every command

  for (const file of docFiles) {
    const sessions = blocks.filter((block) => block.file === file && block.lang === "sh" && isSession(block) && !firstHour(block));
    if (sessions.length === 0) continue;
    it(`sh sessions in ${file}: print what the doc shows`, async () => {
      const commands = sessions.flatMap(sessionCommands);
      const runs = await runCommands(commands, { cwd: repoRoot, env: { ...sessionEnv, ...pageEnv.get(file) }, timeoutMs: 300_000 });
      expect(sessionProblems(commands, runs).join("\n\n")).toBe("");
    }, 330_000); // docs/cli.md's session builds and serves with toolpact dev, beside the release gates and the suite
  }
});

describe("the reference pages", () => {
  it("manifest.md documents every manifest field", () => {
    const schema = manifestJsonSchema() as { properties: Record<string, { items?: { properties?: Record<string, unknown> } }> };
    const text = docs.get("docs/manifest.md")!;
    const fields = [
      ...Object.keys(schema.properties),
      ...["tools", "gates", "hooks", "guards"].flatMap((list) =>
        Object.keys(schema.properties[list]?.items?.properties ?? {}).map((key) => `${list}[].${key}`),
      ),
    ];
    expect(fields.length).toBeGreaterThan(20);
    const missing = fields.filter((field) => !text.includes(`| \`${field}\` |`));
    expect(missing, "each field needs a table row | `field` |").toEqual([]);
  });

  it("wire-format.md lists every error code with the tRPC code it travels as", () => {
    const text = docs.get("docs/wire-format.md")!;
    const wrong = TOOLPACT_ERROR_CODES.filter((code) => !text.includes(`| \`${code}\` | \`${TOOLPACT_ERRORS[code]}\` |`));
    expect(wrong).toEqual([]);
  });

  it("cli.md has a section for every toolpact command", () => {
    const text = docs.get("docs/cli.md")!;
    const missing = [...commandFacts().cliHelp.keys()].filter((name) => !text.includes(`## \`toolpact ${name}\``));
    expect(missing).toEqual([]);
  });

  it("operating.md names every secret the host reads", () => {
    const text = docs.get("docs/operating.md")!;
    expect(SECRET_ENV_VARS.filter((name) => !text.includes(name))).toEqual([]);
  });

  it("README.md's first screen: two sentences, the two fresh-machine commands, a provider and a caller", () => {
    const readme = docs.get("README.md")!;
    const firstScreen = readme.split("\n").slice(0, 60).join("\n");
    const intro = firstScreen.split("\n\n")[1] ?? "";
    expect(intro.split(/(?<=\.)\s+/).filter(Boolean)).toHaveLength(2);
    expect(firstScreen).toContain("npm i -g pnpm@10.34.9 && pnpm install && pnpm demo");
    expect(firstScreen).toContain("npm i -g pnpm@10.34.9 && pnpm install && pnpm test");
    const firstBlocks = codeBlocks("README.md", firstScreen).filter((block) => block.lang === "ts");
    expect(firstBlocks.map((block) => block.content).join("\n")).toMatch(/defineNotesProvider[\s\S]*createToolClients/);
  });
});

/** What command lists are checked against, read once. */
let facts: CommandFacts | undefined;
function commandFacts(): CommandFacts {
  if (facts !== undefined) return facts;
  const root = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { packageManager: string; scripts: Record<string, string> };
  const packageScripts = new Map<string, ReadonlySet<string>>();
  const publishedPackages = new Set<string>();
  const packageDirs = [...["examples", "packages"].flatMap((dir) => readdirSync(path.join(repoRoot, dir)).map((name) => path.join(dir, name))), "codegen"];
  for (const dir of packageDirs) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(repoRoot, dir, "package.json"), "utf8")) as {
        name: string;
        private?: boolean;
        scripts?: Record<string, string>;
      };
      packageScripts.set(pkg.name, new Set(Object.keys(pkg.scripts ?? {})));
      if (pkg.private !== true) publishedPackages.add(pkg.name);
    } catch {
      // not a package folder
    }
  }
  const usage = execFileSync(process.execPath, [cliBin, "--help"], { encoding: "utf8" });
  const commands = [...usage.matchAll(/^ {2}([a-z]+) /gm)].map((match) => match[1]!);
  const cliHelp = new Map(commands.map((name) => [name, execFileSync(process.execPath, [cliBin, name, "--help"], { encoding: "utf8" })]));
  facts = {
    packageManager: root.packageManager,
    rootScripts: new Set(Object.keys(root.scripts)),
    packageScripts,
    publishedPackages,
    cliHelp,
    knownVariables: new Set([...SECRET_ENV_VARS, "NOTES_DB_PATH", "MAILER_OUTBOX_PATH", "TOOLPACT_URL", "PLUGIN_KEY", "ACTOR_TOKEN", "PORT"]),
    readScript: (file) => {
      const resolved = path.resolve(repoRoot, file);
      if (!resolved.startsWith(repoRoot) || !existsSync(resolved)) return undefined;
      return readFileSync(resolved, "utf8");
    },
  };
  return facts;
}
