import { existsSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { PLUGIN_ID_MAX_LENGTH, PLUGIN_ID_PATTERN, manifestSchema } from "@toolpact/contract";
import type { CliIo } from "../io.js";
import { parseCommandArgs } from "../command-args.js";
import { CredentialFileError, isLoopbackHost, readCredentialFile } from "../credential-safety.js";
import { importedManifest, type ImportedManifest, type PluginHead } from "../mcp-import/imported-manifest.js";
import { httpHead, stdioHead } from "../mcp-import/plugin-head.js";
import { ServerUnavailableError, listServerTools, type ServerTarget } from "../mcp-import/server-tools.js";

const HELP = `usage: toolpact import mcp --id <plugin id> --out <folder> [options] -- <command> [args...]
       toolpact import mcp --id <plugin id> --out <folder> [options] --url <url> [--token-file <file>]

Asks an MCP server for its tools and writes <folder>/plugin.json (JSONC), a plugin whose tools that
server provides, for a person to review before serving it. Tool names are made toolpact names
(read_text_file -> read-text-file; the server's name is kept as "upstreamName"); titles, descriptions
and input/output schemas are carried over. The effect comes from the server's hints, conservatively:
"read" only with readOnlyHint: true, "external" with openWorldHint: true, otherwise "write"; each
inference has a // note saying what to check. "recovery": "idempotent" is never set for you.

  --id <plugin id>     the plugin's id, e.g. com.example.files
  --out <folder>       where plugin.json is written (created if missing)
  --version <semver>   the plugin's version; default 0.1.0
  --force              replace an existing <folder>/plugin.json
  --timeout <seconds>  how long the server has to start and list its tools; default 30
  -- <command> [args]  a stdio server: started as given in <folder> (relative paths are relative to it, as
                       when served), asked, and stopped
  --pass-env <NAME>    a variable of your environment the server may see, now and when served
                       ("passEnv"; its value is never written); repeat for more. It sees no other, as when
                       served: a server started with npx needs at least --pass-env PATH --pass-env HOME
  --url <url>          a Streamable HTTP server instead
  --token-file <file>  a file in <folder> holding the bearer token for --url (readable by its owner alone,
                       chmod 600); sent only over https, or http to this machine

Exit 0 when plugin.json was written and loads, 1 when the server could not be asked, listed no tools,
or a tool is refused as written (the file is still written, with the tool marked REFUSED), 2 on usage errors.`;

const DEFAULT_VERSION = "0.1.0";
const DEFAULT_TIMEOUT_SECONDS = 30;
/** What `--pass-env` takes: the manifest's own rule for a `passEnv` name. */
const ENV_NAME = manifestSchema.shape.upstream.unwrap().options[0].shape.passEnv.unwrap().element;

/** An import's options, checked, with every default filled in. */
interface ImportOptions {
  readonly id: string;
  readonly version: string;
  /** The plugin folder, absolute, and its plugin.json as printed. */
  readonly outDir: string;
  readonly file: string;
  readonly shown: string;
  readonly force: boolean;
  readonly timeoutMs: number;
  /** The server: a command after `--`, or a URL with an optional token file (as given). */
  readonly server:
    | { readonly kind: "stdio"; readonly command: readonly [string, ...string[]]; readonly passEnv: readonly string[] }
    | { readonly kind: "http"; readonly url: string; readonly tokenFile?: string };
}

/** `toolpact import mcp`: writes a reviewable plugin.json from an MCP server's tools. */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const options = importOptions(args, io);
  if (typeof options === "number") return options;
  const fail = (problem: string) => {
    io.stderr(`toolpact import mcp: ${problem}`);
    return 1;
  };
  if (existsSync(options.file) && !options.force) {
    return fail(`${options.shown} exists: pass --force to replace it, or import into another folder and compare the two with toolpact diff`);
  }
  const server = serverOf(options, io);
  if (typeof server === "string") return fail(server);

  // A stdio server runs in the plugin folder, as when served; a folder made for it goes again on failure.
  const made = await mkdir(options.outDir, { recursive: true });
  let imported: ImportedManifest | string;
  try {
    const listed = await listServerTools(server.target, options.timeoutMs);
    imported =
      listed.tools.length === 0
        ? "the server lists no tools, so there is nothing to import (toolpact serves an MCP server's tools, not its resources or prompts)"
        : importedManifest(listed, server.head, options.file);
  } catch (error) {
    if (!(error instanceof ServerUnavailableError)) throw error;
    imported = error.message;
  }
  if (typeof imported === "string") {
    if (made !== undefined) await rm(made, { recursive: true, force: true });
    return fail(imported);
  }

  const temporary = `${options.file}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, imported.text, { flag: "wx" });
    await rename(temporary, options.file);
  } finally {
    await rm(temporary, { force: true });
  }
  return report(imported, options.shown, io, server.head);
}

/** The command line read and checked; a number is the exit code of a usage error (or of --help). */
function importOptions(args: readonly string[], io: CliIo): ImportOptions | number {
  const dashes = args.indexOf("--");
  const command = dashes < 0 ? [] : args.slice(dashes + 1);
  const parsed = parseCommandArgs({ name: "import", help: HELP }, io, {
    args: dashes < 0 ? [...args] : args.slice(0, dashes),
    allowPositionals: true,
    options: {
      id: { type: "string" },
      out: { type: "string", short: "o" },
      version: { type: "string" },
      force: { type: "boolean" },
      timeout: { type: "string" },
      url: { type: "string" },
      "token-file": { type: "string" },
      "pass-env": { type: "string", multiple: true },
      help: { type: "boolean", short: "h" },
    },
  });
  if (typeof parsed === "number") return parsed;
  const { values, positionals } = parsed;
  const usage = (problem: string) => {
    io.stderr(`toolpact import: ${problem}\n\n${HELP}`);
    return 2;
  };

  if (positionals[0] !== "mcp") {
    return usage(
      positionals.length === 0 ? "say what to import from: toolpact import mcp ..." : `unknown source "${positionals[0]}": toolpact imports from "mcp"`,
    );
  }
  if (positionals.length > 1) return usage(`unexpected "${positionals[1]}": put the server's command after --, e.g. -- node server.js`);
  const { id, out } = values;
  if (id === undefined) return usage("--id is required: the plugin's id, e.g. --id com.example.files");
  if (id.length > PLUGIN_ID_MAX_LENGTH || !PLUGIN_ID_PATTERN.test(id)) {
    return usage(
      `--id "${id}" is not a plugin id: lowercase dot-separated segments of letters, digits and hyphens, each starting with a letter, e.g. com.example.files`,
    );
  }
  if (out === undefined) return usage("--out is required: the folder to write plugin.json into");
  const version = values.version ?? DEFAULT_VERSION;
  if (!manifestSchema.shape.version.safeParse(version).success) return usage(`--version "${version}" is not semver, e.g. 1.4.0`);
  const timeoutSeconds = Number(values.timeout ?? DEFAULT_TIMEOUT_SECONDS);
  if (!(timeoutSeconds > 0 && timeoutSeconds <= 600)) return usage(`--timeout is a number of seconds from 1 to 600, got "${values.timeout}"`);
  if (command.length > 0 === (values.url !== undefined)) {
    return usage(command.length > 0 ? "give the server's command after -- or --url, not both" : "name the server: its command after --, or --url <url>");
  }
  const passEnv = [...new Set(values["pass-env"] ?? [])];
  const outDir = path.resolve(io.cwd, out);
  const file = path.join(outDir, "plugin.json");
  const relative = path.relative(io.cwd, file);
  const common = {
    id,
    version,
    outDir,
    file,
    shown: relative.startsWith("..") || path.isAbsolute(relative) ? file : relative,
    force: values.force === true,
    timeoutMs: timeoutSeconds * 1000,
  };

  if (values.url !== undefined) {
    const { url } = values;
    const tokenFile = values["token-file"];
    if (!/^https?:\/\/[^/]/.test(url) || !URL.canParse(url)) return usage(`--url must be an http or https URL, got "${url}"`);
    if (passEnv.length > 0) return usage("--pass-env goes with a stdio server's command (after --)");
    if (tokenFile !== undefined && !path.resolve(io.cwd, tokenFile).startsWith(outDir + path.sep)) {
      return usage(`--token-file ${tokenFile} is outside ${out}: toolpact reads a plugin's token file only from its folder; move it there`);
    }
    return { ...common, server: { kind: "http", url, ...(tokenFile === undefined ? {} : { tokenFile }) } };
  }
  if (values["token-file"] !== undefined) return usage("--token-file goes with --url");
  const badName = passEnv.find((name) => !ENV_NAME.safeParse(name).success);
  if (badName !== undefined) return usage(`--pass-env "${badName}": ${ENV_NAME.safeParse(badName).error?.issues[0]?.message}`);
  const ownSecret = passEnv.find((name) => name.startsWith("TOOLPACT_"));
  if (ownSecret !== undefined) return usage(`--pass-env ${ownSecret}: toolpact's own variables are never passed to a plugin`);
  return { ...common, server: { kind: "stdio", command: command as [string, ...string[]], passEnv } };
}

/** Who to ask and what `upstream` to write; a string says why the server cannot be asked (its token). */
function serverOf(options: ImportOptions, io: CliIo): { target: ServerTarget; head: PluginHead } | string {
  const { server, id, version, outDir } = options;
  if (server.kind === "stdio") {
    const [program, ...args] = server.command;
    return {
      target: { kind: "stdio", command: program, args, cwd: outDir, env: io.env, passEnv: server.passEnv },
      head: stdioHead(id, version, server.command, server.passEnv),
    };
  }
  const { url, tokenFile } = server;
  if (tokenFile === undefined) return { target: { kind: "http", url }, head: httpHead(id, version, url, undefined) };
  const { protocol, hostname, host } = new URL(url);
  if (protocol === "http:" && !isLoopbackHost(hostname)) {
    return `--url ${url} would send the token in ${tokenFile} unencrypted to ${host}, which is not this machine: use https:// (toolpact serve refuses it too)`;
  }
  const absolute = path.resolve(io.cwd, tokenFile);
  let token: string;
  try {
    token = readCredentialFile(absolute, "a bearer token", tokenFile).trim();
  } catch (error) {
    return error instanceof CredentialFileError ? error.message : `cannot read --token-file ${tokenFile}: ${(error as Error).message}`;
  }
  if (token === "") return `${tokenFile} is empty: it should hold the bearer token for ${url}`;
  return { target: { kind: "http", url, token }, head: httpHead(id, version, url, path.relative(outDir, absolute)) };
}

function report(imported: ImportedManifest, shown: string, io: CliIo, head: PluginHead): number {
  const width = Math.max(...imported.tools.map((tool) => tool.name.length));
  for (const tool of imported.tools) {
    const from = tool.upstreamName === tool.name ? "" : `  (${JSON.stringify(tool.upstreamName)} on the server)`;
    io.stdout(`  ${tool.name.padEnd(width)}  ${tool.effect.padEnd(8)}${tool.refusals.length > 0 ? "REFUSED" : ""}${from}`.trimEnd());
  }
  const refused = imported.tools.filter((tool) => tool.refusals.length > 0);
  for (const tool of refused) {
    for (const refusal of tool.refusals) io.stderr(`toolpact import mcp: tool "${tool.name}" is refused as written: ${refusal}`);
  }
  for (const refusal of imported.refusals) io.stderr(`toolpact import mcp: ${shown} is refused as written: ${refusal}`);
  const effects = new Map<string, number>();
  for (const tool of imported.tools) effects.set(tool.effect, (effects.get(tool.effect) ?? 0) + 1);
  const counts = [...effects].map(([effect, count]) => `${count} ${effect}`).join(", ");
  const total = `${imported.tools.length} tool${imported.tools.length === 1 ? "" : "s"} (${counts})`;
  if (refused.length > 0 || imported.refusals.length > 0) {
    io.stderr(
      `toolpact import mcp: wrote ${shown} (${head.id}@${head.version}, ${total}), but toolpact will not load it as written: ` +
        `${refused.length > 0 ? `${refused.length} tool${refused.length === 1 ? " is" : "s are"} marked REFUSED` : "see above"}; fix or remove ${refused.length === 1 ? "it" : "them"}, then run toolpact validate ${shown}`,
    );
    return 1;
  }
  io.stdout(`toolpact import mcp: wrote ${shown}: ${head.id}@${head.version}, ${total}; review each // note in it before serving it`);
  return 0;
}
