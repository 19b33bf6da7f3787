import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PLUGIN_ID_MAX_LENGTH, PLUGIN_ID_PATTERN, camelCase, formatDiagnostic, loadManifest, pascalCase, pluginClientName } from "@toolpact/contract";
import type { CliIo } from "../io.js";
import { parseCommandArgs } from "../command-args.js";

const HELP = `usage: toolpact init [dir] [--id <plugin id>]
       toolpact init [dir] --caller --provider <provider folder or plugin.json> [--id <plugin id>]

Scaffolds a plugin project in dir (default: the current folder; created if missing) that installs the
published toolpact packages at this CLI's version:
  (default)   a provider: plugin.json (a write and a read tool) with its $schema, src/index.ts built on
              the generated define<Alias>Provider, a test on the test host of @toolpact/runtime/testing,
              toolpact.config.json for \`toolpact serve\` and \`toolpact dev\`
  --caller    a caller: plugin.json with "uses" and no tools, src/main.ts calling the provider over
              HTTP with the generated client, and a test of it against the provider's contract

  --id <id>          the plugin id; default com.example.<folder name>
  --provider <path>  (with --caller) the provider's folder or manifest: clients are generated from it

An existing package.json is kept and completed (type, scripts, dependencies); any other file that
already exists stops init before it writes anything. Then: npm install && npm test.
Exit 0 when the project was written, 1 when a file is in the way or the provider cannot be read,
2 on usage errors.`;

/** Where the project templates ship: `<package>/templates/<kind>/`. */
const TEMPLATES = fileURLToPath(new URL("../../templates/", import.meta.url));

/** What fills a template's `{{name}}` placeholders. */
type Placeholders = Readonly<Record<string, string>>;

/** `toolpact init [dir] [--caller --provider <path>] [--id <plugin id>]` */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs({ name: "init", help: HELP }, io, {
    args: [...args],
    allowPositionals: true,
    options: {
      caller: { type: "boolean" },
      provider: { type: "string" },
      id: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (typeof parsed === "number") return parsed;
  const { values, positionals } = parsed;
  const usage = (message: string) => {
    io.stderr(`toolpact init: ${message}\n\n${HELP}`);
    return 2;
  };
  if (positionals.length > 1) return usage(`name one folder, got ${positionals.length}: ${positionals.join(" ")}`);
  const caller = values.caller === true;
  if (caller && values.provider === undefined) return usage("a caller calls a provider: name it with --provider <folder or plugin.json>");
  if (!caller && values.provider !== undefined) return usage("--provider goes with --caller");

  const dir = path.resolve(io.cwd, positionals[0] ?? ".");
  const shownDir = path.relative(io.cwd, dir) || ".";
  const pluginId = values.id ?? `com.example.${folderSegment(dir)}`;
  if (!PLUGIN_ID_PATTERN.test(pluginId) || pluginId.length > PLUGIN_ID_MAX_LENGTH) {
    return usage(`--id "${pluginId}" is not a plugin id: lowercase dot-separated segments of a-z, 0-9 and -, each starting with a letter (com.example.todo)`);
  }
  const lastSegment = pluginId.slice(pluginId.lastIndexOf(".") + 1);
  const placeholders: Record<string, string> = {
    packageName:
      path
        .basename(dir)
        .toLowerCase()
        .replace(/[^a-z0-9._-]+/g, "-")
        .replace(/^[._-]+/, "") || lastSegment,
    pluginId,
    alias: camelCase(lastSegment),
    Alias: pascalCase(lastSegment),
    version: cliVersion(),
  };

  if (caller) {
    const provider = await readProvider(path.resolve(io.cwd, values.provider!), dir);
    if (typeof provider === "string") {
      io.stderr(`toolpact init: ${provider}`);
      return 1;
    }
    Object.assign(placeholders, provider);
  }

  const kind = caller ? "caller" : "provider";
  const files = templateFiles(path.join(TEMPLATES, kind)).map((file) => ({
    target: file === "gitignore" ? ".gitignore" : file,
    text: fill(readFileSync(path.join(TEMPLATES, kind, file), "utf8"), placeholders, file),
  }));
  const inTheWay = files.filter((file) => file.target !== "package.json" && existsSync(path.join(dir, file.target)));
  if (inTheWay.length > 0) {
    io.stderr(
      `toolpact init: ${inTheWay.map((file) => path.join(shownDir, file.target)).join(", ")} already ${inTheWay.length === 1 ? "exists" : "exist"}: ` +
        "init writes a new project and overwrites nothing; run it in an empty folder (or one with just package.json)",
    );
    return 1;
  }

  mkdirSync(dir, { recursive: true });
  for (const file of files) {
    const target = path.join(dir, file.target);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, file.target === "package.json" && existsSync(target) ? mergePackageJson(readFileSync(target, "utf8"), file.text) : file.text);
  }

  io.stdout(`toolpact init: wrote a ${kind} plugin, ${pluginId}, in ${shownDir}`);
  for (const file of files) io.stdout(`  ${file.target}`);
  io.stdout("next:");
  if (shownDir !== ".") io.stdout(`  cd ${shownDir}`);
  io.stdout("  npm install");
  io.stdout("  npm test          # generates the typed clients, compiles, runs the test");
  io.stdout(
    caller
      ? "  npm start         # calls the provider, with the URL, key and token `toolpact dev` gives it"
      : "  npx toolpact dev  # serves it with throwaway secrets, keys and a token",
  );
  return 0;
}

/** The provider a caller calls: its id, client name and manifest path as the caller's scripts name it. */
async function readProvider(given: string, callerDir: string): Promise<Placeholders | string> {
  const manifestFile = existsSync(given) && statSync(given).isDirectory() ? path.join(given, "plugin.json") : given;
  if (!existsSync(manifestFile)) return `${manifestFile} not found: --provider names a provider's folder (with its plugin.json) or the manifest itself`;
  const loaded = await loadManifest(manifestFile);
  if (!loaded.ok) return [`${manifestFile} is not a valid manifest:`, ...loaded.diagnostics.map((d) => `  ${formatDiagnostic(d)}`)].join("\n");
  const { manifest } = loaded;
  const missing = ["add-item", "list-items"].filter((name) => !manifest.tools.some((tool) => tool.name === name));
  if (missing.length > 0) {
    return (
      `${manifest.id} does not declare ${missing.join(" and ")}: the caller's code calls the tools of the provider ` +
      "`toolpact init` scaffolds; point --provider at one, then change the calls to your own tools"
    );
  }
  const alias = pluginClientName(manifest);
  return {
    providerId: manifest.id,
    providerAlias: alias,
    ProviderAlias: alias.charAt(0).toUpperCase() + alias.slice(1),
    providerManifest: path.relative(callerDir, manifestFile).split(path.sep).join("/"),
  };
}

/** Keeps the author's package.json and adds what the template sets and it lacks (scripts, dependencies, type, main). */
function mergePackageJson(existingText: string, templateText: string): string {
  const existing = JSON.parse(existingText) as Record<string, unknown>;
  const template = JSON.parse(templateText) as Record<string, unknown>;
  const merged: Record<string, unknown> = { ...existing, type: "module" };
  if (template.main !== undefined && existing.main === undefined) merged.main = template.main;
  for (const key of ["scripts", "dependencies", "devDependencies"]) {
    const own = (existing[key] ?? {}) as Record<string, string>;
    const added = template[key] as Record<string, string>;
    // `npm init -y` writes a failing placeholder test script: the template's replaces it.
    const keep = Object.fromEntries(
      Object.entries(own).filter(([name, value]) => !(key === "scripts" && name === "test" && value.includes("no test specified"))),
    );
    merged[key] = { ...added, ...keep };
  }
  return `${JSON.stringify(merged, null, 2)}\n`;
}

/** Every file of a template folder, relative to it. */
function templateFiles(root: string, sub = ""): string[] {
  return readdirSync(path.join(root, sub), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? templateFiles(root, path.join(sub, entry.name)) : [path.join(sub, entry.name)],
  );
}

/** A template's text with every `{{name}}` filled in. */
function fill(text: string, placeholders: Placeholders, file: string): string {
  return text.replace(/\{\{(\w+)\}\}/g, (_match, name: string) => {
    const value = placeholders[name];
    if (value === undefined) throw new Error(`template ${file} names {{${name}}}, which init does not fill in`);
    return value;
  });
}

/** A folder name as a plugin id segment: lowercase a-z, 0-9 and -, starting with a letter. */
function folderSegment(dir: string): string {
  const segment = path
    .basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^[^a-z]+/, "")
    .replace(/-+$/, "");
  return segment === "" ? "plugin" : segment;
}

/** This CLI's version: the scaffold depends on the toolpact packages released with it. */
function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}
