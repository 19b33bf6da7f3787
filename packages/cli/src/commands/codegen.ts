import { watch, type FSWatcher } from "node:fs";
import path from "node:path";
import { checkGeneratedFiles, generateClients, writeGeneratedFiles, type GeneratedFile } from "@toolpact/codegen";
import { formatDiagnostic, isToolpactError, loadManifest, type Manifest } from "@toolpact/contract";
import type { CliIo } from "../io.js";
import { parseCommandArgs } from "../command-args.js";

const HELP = `usage: toolpact codegen --out <dir> [--check | --watch] <manifest...>

Generates typed clients from plugin manifests: <dir>/index.ts with createToolClients(transport),
and one file per provider with its types, descriptors, client and define<Alias>Provider.
Every manifest is validated first; nothing is written unless all are valid, and files are
replaced whole (never half-written).

  -o, --out <dir>  the folder to write (created if missing)
  --check          write nothing; exit 1 listing files that are stale, missing or no longer generated
  --watch          regenerate whenever a manifest changes (stop with Ctrl-C); errors are printed
                   and the last good output is kept

Exit 0 when the output was written (with --check: is up to date), 1 on an invalid manifest,
a codegen error or stale files, 2 on usage errors.`;

/** Quiet time after the last manifest change before regenerating (editors write in bursts). */
const WATCH_DEBOUNCE_MS = 100;

interface Options {
  readonly out: string;
  readonly outShown: string;
  readonly manifests: readonly { readonly file: string; readonly shown: string }[];
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
      help: { type: "boolean", short: "h" },
    },
  });
  if (typeof parsed === "number") return parsed;
  const { values, positionals } = parsed;
  if (values.out === undefined || values.out === "") return usage(io, "say where to write with --out <dir>");
  if (positionals.length === 0) return usage(io, "name at least one manifest file");
  if (values.check && values.watch) return usage(io, "--check and --watch do not go together");

  const out = path.resolve(io.cwd, values.out);
  const options: Options = {
    out,
    outShown: shownPath(io, out),
    manifests: positionals.map((file) => {
      const resolved = path.resolve(io.cwd, file);
      return { file: resolved, shown: shownPath(io, resolved) };
    }),
  };
  if (values.check) return check(options, io);
  if (values.watch) return watchManifests(options, io);
  return generate(options, io);
}

/** Validates every manifest and generates in memory; undefined (after printing why) when either fails. */
async function build(options: Options, io: CliIo): Promise<{ files: GeneratedFile[]; manifests: Manifest[] } | undefined> {
  const manifests: Manifest[] = [];
  let invalid = 0;
  for (const { file, shown } of options.manifests) {
    const result = await loadManifest(file);
    for (const diagnostic of result.ok ? result.warnings : result.diagnostics) io.stderr(formatDiagnostic({ ...diagnostic, file: shown }));
    if (result.ok) manifests.push(result.manifest);
    else invalid++;
  }
  if (invalid > 0) {
    io.stderr(`toolpact codegen: ${invalid} of ${options.manifests.length} manifest${options.manifests.length === 1 ? " is" : "s are"} invalid; nothing was written`);
    return undefined;
  }
  try {
    return { files: await generateClients(manifests), manifests };
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
  io.stderr(`toolpact codegen --check: ${count(stale.length, "file")} in ${options.outShown} ${stale.length === 1 ? "is" : "are"} stale; run toolpact codegen without --check`);
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
  for (const { file } of options.manifests) {
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
