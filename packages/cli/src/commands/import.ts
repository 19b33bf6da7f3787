import { existsSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { PLUGIN_ID_MAX_LENGTH, PLUGIN_ID_PATTERN, manifestSchema } from "@toolpact/contract";
import type { CliIo } from "../io.js";
import { parseCommandArgs } from "../command-args.js";
import { CredentialFileError, isLoopbackHost, readCredentialFile } from "../credential-safety.js";
import { importedManifest, type ImportedManifest, type PluginHead } from "../mcp-import/imported-manifest.js";
import type { JsonValue } from "../mcp-import/jsonc-text.js";
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

/** `toolpact import mcp`: writes a reviewable plugin.json from an MCP server's tools. */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
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
  const fail = (problem: string) => {
    io.stderr(`toolpact import mcp: ${problem}`);
    return 1;
  };

  if (positionals[0] !== "mcp")
    return usage(
      positionals.length === 0 ? "say what to import from: toolpact import mcp ..." : `unknown source "${positionals[0]}": toolpact imports from "mcp"`,
    );
  if (positionals.length > 1) return usage(`unexpected "${positionals[1]}": put the server's command after --, e.g. -- node server.js`);
  if (values.id === undefined) return usage("--id is required: the plugin's id, e.g. --id com.example.files");
  if (values.id.length > PLUGIN_ID_MAX_LENGTH || !PLUGIN_ID_PATTERN.test(values.id)) {
    return usage(
      `--id "${values.id}" is not a plugin id: lowercase dot-separated segments of letters, digits and hyphens, each starting with a letter, e.g. com.example.files`,
    );
  }
  if (values.out === undefined) return usage("--out is required: the folder to write plugin.json into");
  const version = values.version ?? DEFAULT_VERSION;
  if (!manifestSchema.shape.version.safeParse(version).success) return usage(`--version "${version}" is not semver, e.g. 1.4.0`);
  const timeoutSeconds = Number(values.timeout ?? DEFAULT_TIMEOUT_SECONDS);
  if (!(timeoutSeconds > 0 && timeoutSeconds <= 600)) return usage(`--timeout is a number of seconds from 1 to 600, got "${values.timeout}"`);
  if (command.length > 0 === (values.url !== undefined)) {
    return usage(command.length > 0 ? "give the server's command after -- or --url, not both" : "name the server: its command after --, or --url <url>");
  }
  if (values.url === undefined && values["token-file"] !== undefined) return usage("--token-file goes with --url");
  const passEnv = [...new Set(values["pass-env"] ?? [])];
  if (values.url !== undefined && passEnv.length > 0) return usage("--pass-env goes with a stdio server's command (after --)");
  const badName = passEnv.find((name) => !ENV_NAME.safeParse(name).success);
  if (badName !== undefined) return usage(`--pass-env "${badName}": ${ENV_NAME.safeParse(badName).error?.issues[0]?.message}`);
  const ownSecret = passEnv.find((name) => name.startsWith("TOOLPACT_"));
  if (ownSecret !== undefined) return usage(`--pass-env ${ownSecret}: toolpact's own variables are never passed to a plugin`);

  const outDir = path.resolve(io.cwd, values.out);
  const file = path.join(outDir, "plugin.json");
  const relative = path.relative(io.cwd, file);
  const shown = relative.startsWith("..") || path.isAbsolute(relative) ? file : relative;
  if (existsSync(file) && values.force !== true) {
    return fail(`${shown} exists: pass --force to replace it, or import into another folder and compare the two with toolpact diff`);
  }

  let target: ServerTarget;
  let head: PluginHead;
  if (values.url !== undefined) {
    const url = values.url;
    if (!/^https?:\/\/[^/]/.test(url) || !URL.canParse(url)) return usage(`--url must be an http or https URL, got "${url}"`);
    let token: string | undefined;
    const tokenFile = values["token-file"];
    if (tokenFile !== undefined) {
      if (!isInside(outDir, path.resolve(io.cwd, tokenFile))) {
        return usage(`--token-file ${tokenFile} is outside ${values.out}: toolpact reads a plugin's token file only from its folder; move it there`);
      }
      const { protocol, hostname, host } = new URL(url);
      if (protocol === "http:" && !isLoopbackHost(hostname)) {
        return fail(
          `--url ${url} would send the token in ${tokenFile} unencrypted to ${host}, which is not this machine: use https:// (toolpact serve refuses it too)`,
        );
      }
      try {
        token = readCredentialFile(path.resolve(io.cwd, tokenFile), "a bearer token", tokenFile).trim();
      } catch (error) {
        if (error instanceof CredentialFileError) return fail(error.message);
        return fail(`cannot read --token-file ${tokenFile}: ${(error as Error).message}`);
      }
      if (token === "") return fail(`${tokenFile} is empty: it should hold the bearer token for ${url}`);
    }
    target = { kind: "http", url, ...(token === undefined ? {} : { token }) };
    head = httpHead(values.id, version, url, tokenFile === undefined ? undefined : path.relative(outDir, path.resolve(io.cwd, tokenFile)));
  } else {
    const [program, ...programArgs] = command as [string, ...string[]];
    target = { kind: "stdio", command: program, args: programArgs, cwd: outDir, env: io.env, passEnv };
    head = stdioHead(values.id, version, command as [string, ...string[]], passEnv);
  }

  // A stdio server runs in the plugin folder, as when served; a folder made for it goes again on failure.
  const made = await mkdir(outDir, { recursive: true });
  let imported: ImportedManifest;
  try {
    const listed = await listServerTools(target, timeoutSeconds * 1000);
    if (listed.tools.length === 0) {
      throw new ServerUnavailableError(
        "the server lists no tools, so there is nothing to import (toolpact serves an MCP server's tools, not its resources or prompts)",
      );
    }
    imported = importedManifest(listed, head, file);
  } catch (error) {
    if (made !== undefined) await rm(made, { recursive: true, force: true });
    if (error instanceof ServerUnavailableError) return fail(error.message);
    throw error;
  }

  const temporary = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, imported.text, { flag: "wx" });
    await rename(temporary, file);
  } finally {
    await rm(temporary, { force: true });
  }
  return report(imported, shown, io, head);
}

/** `upstream` for a stdio server: the command and args as given, run in the plugin folder as at import. */
function stdioHead(id: string, version: string, command: readonly [string, ...string[]], passEnv: readonly string[]): PluginHead {
  const [program, ...args] = command;
  const notes = [
    'the server runs in this folder, as it did at import: relative paths in "command" and "args" are relative to it',
    `it sees only the variables "env" sets and "passEnv" names (at import: ${passEnv.length === 0 ? "none" : passEnv.join(", ")}); ` +
      "give it what it needs, and nothing else",
  ];
  const upstream: Record<string, JsonValue> = { command: program, ...(args.length === 0 ? {} : { args }), ...(passEnv.length === 0 ? {} : { passEnv }) };
  return { id, version, upstream, upstreamNotes: notes };
}

/** Whether `file` is inside `folder`. */
function isInside(folder: string, file: string): boolean {
  return file.startsWith(folder + path.sep);
}

/** `upstream` for a Streamable HTTP server: its URL, and the token's file relative to the plugin folder. */
function httpHead(id: string, version: string, url: string, tokenFile: string | undefined): PluginHead {
  return {
    id,
    version,
    upstream: { url, ...(tokenFile === undefined ? {} : { tokenFile }) },
    upstreamNotes:
      tokenFile === undefined
        ? ['the server took no token at import; if it needs one when served, add "tokenFile": a file readable by its owner alone']
        : ['"tokenFile" is relative to this folder; the token in it travels as "Authorization: Bearer"; keep the file chmod 600'],
  };
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
