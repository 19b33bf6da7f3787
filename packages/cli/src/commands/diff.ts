import { diffManifests, resolveManifestArgument } from "@toolpact/codegen";
import { formatDiagnostic, isToolpactError, loadManifest, type Manifest } from "@toolpact/contract";
import type { CliIo } from "../io.js";
import { parseCommandArgs } from "../command-args.js";

const HELP = `usage: toolpact diff <old-manifest> <new-manifest>

Prints the breaking changes per tool between two versions of a plugin manifest: input (new required
field, removed or retyped property, narrowed enum, tightened constraint), output (removed or retyped
property), effect, confirmation or verification level tightened, tool version removed.

Exit 0 when there is no breaking change or each comes with a version bump (a new tool version beside
the old one; a major plugin version for a removed tool version), 1 when one lacks a version bump or a
manifest is invalid, 2 on usage errors.`;

/** `toolpact diff <old-manifest> <new-manifest>` */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs({ name: "diff", help: HELP }, io, {
    args: [...args],
    allowPositionals: true,
    options: { help: { type: "boolean", short: "h" } },
  });
  if (typeof parsed === "number") return parsed;
  if (parsed.positionals.length !== 2) return usage(io, `name exactly two manifests, the old and the new one; got ${parsed.positionals.length}`);

  const before = await load(parsed.positionals[0]!, io);
  const after = await load(parsed.positionals[1]!, io);
  if (!before || !after) return 1;

  const diff = diffManifests(before, after);
  for (const tool of diff.tools) {
    io.stdout(`${tool.tool}: ${tool.lacksVersionBump ? "breaking, without a version bump" : "breaking, with a version bump"}`);
    for (const change of tool.changes) io.stdout(`  ${change.kind}: ${change.message}`);
  }
  for (const added of diff.added) io.stdout(`${added}: new`);
  const unversioned = diff.tools.filter((tool) => tool.lacksVersionBump).length;
  if (unversioned > 0) {
    io.stderr(
      `toolpact diff: ${unversioned} tool version${unversioned === 1 ? " changes" : "s change"} incompatibly without a version bump: ` +
        "declare the change as a new tool version beside the old one (or bump the plugin's major version to remove one)",
    );
    return 1;
  }
  io.stdout(
    diff.tools.length === 0
      ? `toolpact diff: no breaking changes in ${after.id} (${before.version} -> ${after.version})`
      : `toolpact diff: ${diff.tools.length} breaking change${diff.tools.length === 1 ? "" : "s"}, each with a version bump`,
  );
  return 0;
}

async function load(argument: string, io: CliIo): Promise<Manifest | undefined> {
  let resolved: string;
  let shown: string;
  try {
    ({ file: resolved, shown } = resolveManifestArgument(argument, io.cwd));
  } catch (error) {
    if (!isToolpactError(error)) throw error;
    io.stderr(`toolpact diff: ${error.message}`);
    return undefined;
  }
  const result = await loadManifest(resolved);
  if (result.ok) return result.manifest;
  for (const diagnostic of result.diagnostics) io.stderr(formatDiagnostic({ ...diagnostic, file: shown }));
  io.stderr(`toolpact diff: ${shown} is invalid`);
  return undefined;
}

function usage(io: CliIo, message: string): number {
  io.stderr(`toolpact diff: ${message}\n\n${HELP}`);
  return 2;
}
