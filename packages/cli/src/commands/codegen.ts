import { watch, type FSWatcher } from "node:fs";
import path from "node:path";
import {
  checkGeneratedFiles,
  fetchServerManifests,
  generateClients,
  resolveManifestArgument,
  writeGeneratedFiles,
  type GeneratedFile,
  type ManifestLocation,
  type ServerManifestsOptions,
} from "@toolpact/codegen";
import { formatDiagnostic, isToolpactError, loadManifest, parseManifest, type Manifest, type ManifestLoadResult } from "@toolpact/contract";
import type { CliIo } from "../io.js";
import { parseCommandArgs } from "../command-args.js";
import { CredentialFileError, plainHttpProblem, readCredentialFile } from "../credential-safety.js";

const HELP = `usage: toolpact codegen --out <dir> [--check | --watch] [--caller <manifest>] <manifest...>
       toolpact codegen --out <dir> [--check] --from <url> [<manifest...>]

Generates typed clients from plugin manifests: <dir>/index.ts with createToolClients(transport),
and one file per provider with its types, descriptors, client and define<Alias>Provider.
A manifest is a path to a plugin.json, or the name of an installed package that ships one
(exported as <package>/plugin.json). Every manifest is validated first; nothing is written unless
all are valid, and files are replaced whole (never half-written).

  -o, --out <dir>            the folder to write (created if missing)
  --check                    write nothing; exit 1 listing files that are stale, missing or no longer generated
  --watch                    regenerate whenever a manifest file changes (stop with Ctrl-C); errors are
                             printed and the last good output is kept
  --caller <manifest>        the calling plugin's own manifest: the clients hold only the tools its "uses"
                             allows, so a call the runtime would refuse does not compile
  --from <url>               also take the manifests a running server lets this caller call (tools.manifests),
                             as the plugin whose key is in TOOLPACT_PLUGIN_KEY, for the actor whose token is
                             in TOOLPACT_ACTOR_TOKEN
  --plugin-key-file <file>   read the plugin key from this file instead of TOOLPACT_PLUGIN_KEY
  --actor-token-file <file>  read the actor token from this file instead of TOOLPACT_ACTOR_TOKEN
  --insecure                 allow --from over plain http to another machine (the key and token travel
                             unencrypted); without it, only https or this machine's http is accepted
  Keys never go on the command line, where other users could read them in the process list, and a file
  holding one must be readable by its owner alone (chmod 600).

Exit 0 when the output was written (with --check: is up to date), 1 on an invalid manifest,
a codegen error or stale files, 2 on usage errors.`;

/** Quiet time after the last manifest change before regenerating (editors write in bursts). */
const WATCH_DEBOUNCE_MS = 100;

interface Options {
  readonly out: string;
  readonly outShown: string;
  readonly manifests: readonly ManifestLocation[];
  readonly caller: ManifestLocation | undefined;
  readonly server: ServerManifestsOptions | undefined;
}

/** `toolpact codegen --out <dir> [--check | --watch] <manifest...>` */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs({ name: "codegen", help: HELP }, io, {
    args: [...args],
    allowPositionals: true,
    options: {
      out: { type: "string", short: "o" },
      check: { type: "boolean" },
      watch: { type: "boolean" },
      caller: { type: "string" },
      from: { type: "string" },
      "plugin-key-file": { type: "string" },
      "actor-token-file": { type: "string" },
      insecure: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (typeof parsed === "number") return parsed;
  const { values, positionals } = parsed;
  if (values.out === undefined || values.out === "") return usage(io, "say where to write with --out <dir>");
  if (positionals.length === 0 && values.from === undefined)
    return usage(io, "name at least one manifest (a file or a package), or a server with --from <url>");
  if (values.check && values.watch) return usage(io, "--check and --watch do not go together");
  if (values.watch && values.from !== undefined)
    return usage(io, "--watch watches manifest files; with --from, run codegen again when the server's plugins change");
  if (values.from === undefined && (values["plugin-key-file"] !== undefined || values["actor-token-file"] !== undefined)) {
    return usage(io, "--plugin-key-file and --actor-token-file go with --from <url>");
  }
  if (values.from === undefined && values.insecure === true) return usage(io, "--insecure goes with --from <url>");

  let options: Options;
  try {
    const out = path.resolve(io.cwd, values.out);
    options = {
      out,
      outShown: shownPath(io, out),
      manifests: positionals.map((argument) => resolveManifestArgument(argument, io.cwd)),
      caller: values.caller === undefined ? undefined : resolveManifestArgument(values.caller, io.cwd),
      server: values.from === undefined ? undefined : await serverOptions(values.from, values, io),
    };
  } catch (error) {
    if (!isToolpactError(error) && !(error instanceof SetupError) && !(error instanceof CredentialFileError)) throw error;
    io.stderr(`toolpact codegen: ${error.message}; nothing was written`);
    return 1;
  }
  if (values.check) return check(options, io);
  if (values.watch) return watchManifests(options, io);
  return generate(options, io);
}

/** `--from`: the URL and the caller's credentials, from files named by flags or from the environment, never from argv. */
async function serverOptions(
  url: string,
  values: { readonly "plugin-key-file"?: string | undefined; readonly "actor-token-file"?: string | undefined; readonly insecure?: boolean | undefined },
  io: CliIo,
): Promise<ServerManifestsOptions> {
  if (!/^https?:\/\/[^/]/.test(url) || !URL.canParse(url))
    throw new SetupError(`--from takes the server's http(s) URL, e.g. http://127.0.0.1:4400; got ${JSON.stringify(url)}`);
  const insecure = plainHttpProblem(url, "--from", values.insecure === true);
  if (insecure !== undefined) throw new SetupError(insecure);
  const pluginKey = await secret({ what: "plugin key", variable: "TOOLPACT_PLUGIN_KEY", flag: "--plugin-key-file", file: values["plugin-key-file"] }, io);
  const actorToken = await secret({ what: "actor token", variable: "TOOLPACT_ACTOR_TOKEN", flag: "--actor-token-file", file: values["actor-token-file"] }, io);
  return { url, pluginKey, actorToken };
}

/** Where one credential comes from: the file its flag names, else its environment variable. */
interface SecretSource {
  readonly what: string;
  readonly variable: string;
  readonly flag: string;
  readonly file: string | undefined;
}

async function secret(source: SecretSource, io: CliIo): Promise<string> {
  let value: string | undefined;
  if (source.file !== undefined) {
    try {
      value = readCredentialFile(path.resolve(io.cwd, source.file), `${/^[aeiou]/.test(source.what) ? "an" : "a"} ${source.what}`, source.file).trim();
    } catch (error) {
      if (error instanceof CredentialFileError) throw error;
      throw new SetupError(`cannot read the ${source.what} from ${source.file}: ${(error as Error).message}`);
    }
  } else {
    value = io.env[source.variable]?.trim();
  }
  if (value === undefined || value === "") {
    throw new SetupError(`--from needs the calling plugin's ${source.what}: set ${source.variable}, or name a file holding it with ${source.flag} <file>`);
  }
  return value;
}

/** A `--from` setting that cannot work (no key, an unreadable file, not a URL): exit 1 with the message. */
class SetupError extends Error {}

/** Validates every manifest and generates in memory; undefined (after printing why) when either fails. */
async function build(options: Options, io: CliIo): Promise<{ files: GeneratedFile[]; manifests: Manifest[] } | undefined> {
  const results: { shown: string; result: ManifestLoadResult }[] = [];
  try {
    for (const { file, shown } of options.manifests) results.push({ shown, result: await loadManifest(file) });
    if (options.server !== undefined) {
      for (const { source, text } of await fetchServerManifests(options.server)) results.push({ shown: source, result: parseManifest(text, source) });
    }
  } catch (error) {
    if (!isToolpactError(error)) throw error;
    io.stderr(`toolpact codegen: ${error.message}; nothing was written`);
    return undefined;
  }
  let caller: Manifest | undefined;
  if (options.caller !== undefined) {
    const result = await loadManifest(options.caller.file);
    for (const diagnostic of result.ok ? result.warnings : result.diagnostics) io.stderr(formatDiagnostic({ ...diagnostic, file: options.caller.shown }));
    if (!result.ok) {
      io.stderr(`toolpact codegen: the caller's manifest ${options.caller.shown} is invalid; nothing was written`);
      return undefined;
    }
    caller = result.manifest;
  }
  const manifests: Manifest[] = [];
  let invalid = 0;
  for (const { shown, result } of results) {
    for (const diagnostic of result.ok ? result.warnings : result.diagnostics) io.stderr(formatDiagnostic({ ...diagnostic, file: shown }));
    if (result.ok) manifests.push(result.manifest);
    else invalid++;
  }
  if (invalid > 0) {
    io.stderr(`toolpact codegen: ${invalid} of ${results.length} manifest${results.length === 1 ? " is" : "s are"} invalid; nothing was written`);
    return undefined;
  }
  try {
    return { files: await generateClients(manifests, caller === undefined ? {} : { caller }), manifests };
  } catch (error) {
    if (!isToolpactError(error)) throw error;
    io.stderr(`toolpact codegen: ${error.message}; nothing was written`);
    return undefined;
  }
}

async function generate(options: Options, io: CliIo): Promise<number> {
  const built = await build(options, io);
  if (!built) return 1;
  let result;
  try {
    result = await writeGeneratedFiles(options.out, built.files);
  } catch (error) {
    io.stderr(`toolpact codegen: cannot write ${options.outShown}: ${(error as Error).message}`);
    return 1;
  }
  const providers = built.manifests.filter((manifest) => manifest.tools.length > 0).length;
  const tools = built.manifests.reduce((sum, manifest) => sum + manifest.tools.length, 0);
  io.stdout(
    `toolpact codegen: ${options.outShown}: ${count(providers, "provider")}, ${count(tools, "tool")}; ` +
      `${count(result.written.length, "file")} written, ${result.unchanged.length} unchanged, ${result.removed.length} removed`,
  );
  return 0;
}

async function check(options: Options, io: CliIo): Promise<number> {
  const built = await build(options, io);
  if (!built) return 1;
  const { stale, changed, missing } = await checkGeneratedFiles(options.out, built.files);
  if (stale.length === 0) {
    io.stdout(`toolpact codegen --check: ${options.outShown} is up to date (${count(built.files.length, "file")})`);
    return 0;
  }
  for (const file of stale) {
    const reason = changed.includes(file) ? "differs from the manifests" : missing.includes(file) ? "is missing" : "is no longer generated";
    io.stderr(`stale: ${path.join(options.outShown, file)} ${reason}`);
  }
  io.stderr(
    `toolpact codegen --check: ${count(stale.length, "file")} in ${options.outShown} ${stale.length === 1 ? "is" : "are"} stale; run toolpact codegen without --check`,
  );
  return 1;
}

/** Regenerates on every manifest change until SIGINT or SIGTERM; a failed run keeps the last good output. */
async function watchManifests(options: Options, io: CliIo): Promise<number> {
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const regenerate = () => {
    running = running.then(async () => {
      try {
        if ((await generate(options, io)) !== 0) io.stderr(`toolpact codegen --watch: kept the last good output in ${options.outShown}`);
      } catch (error) {
        io.stderr(`toolpact codegen --watch: ${(error as Error).message}; kept the last good output in ${options.outShown}`);
      }
    });
    return running;
  };
  await regenerate();

  // Editors often replace a file instead of writing it in place, so watch each manifest's folder.
  const byFolder = new Map<string, Set<string>>();
  for (const { file } of options.caller === undefined ? options.manifests : [...options.manifests, options.caller]) {
    const names = byFolder.get(path.dirname(file)) ?? new Set<string>();
    names.add(path.basename(file));
    byFolder.set(path.dirname(file), names);
  }
  const watchers: FSWatcher[] = [];
  for (const [folder, names] of byFolder) {
    watchers.push(
      watch(folder, (_event, name) => {
        if (name !== null && !names.has(name.toString())) return;
        clearTimeout(timer);
        timer = setTimeout(regenerate, WATCH_DEBOUNCE_MS);
      }),
    );
  }
  io.stdout(`toolpact codegen --watch: watching ${count(options.manifests.length, "manifest")}; stop with Ctrl-C`);

  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  clearTimeout(timer);
  for (const watcher of watchers) watcher.close();
  await running;
  return 0;
}

function usage(io: CliIo, message: string): number {
  io.stderr(`toolpact codegen: ${message}\n\n${HELP}`);
  return 2;
}

function shownPath(io: CliIo, absolute: string): string {
  return path.relative(io.cwd, absolute) || ".";
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
