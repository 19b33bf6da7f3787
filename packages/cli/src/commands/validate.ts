import { resolveManifestArgument } from "@toolpact/codegen";
import { formatDiagnostic, isToolpactError, loadManifest, type Manifest } from "@toolpact/contract";
import type { CliIo } from "../io.js";
import { parseCommandArgs } from "../command-args.js";

const HELP = `usage: toolpact validate <manifest...>

Checks each plugin manifest (plugin.json, JSONC allowed) against the toolpact contract.
Exit 0 when every manifest is valid (warnings are printed), 1 when any is invalid, 2 on usage errors.`;

/** `toolpact validate <manifest...>` */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs({ name: "validate", help: HELP }, io, {
    args: [...args],
    allowPositionals: true,
    options: { help: { type: "boolean", short: "h" } },
  });
  if (typeof parsed === "number") return parsed;
  if (parsed.positionals.length === 0) {
    io.stderr(`toolpact validate: name at least one manifest file\n\n${HELP}`);
    return 2;
  }

  let invalid = 0;
  for (const argument of parsed.positionals) {
    let file: string;
    let shown: string;
    try {
      ({ file, shown } = resolveManifestArgument(argument, io.cwd));
    } catch (error) {
      if (!isToolpactError(error)) throw error;
      invalid++;
      io.stderr(`toolpact validate: ${error.message}`);
      io.stdout(`invalid ${argument}: not found`);
      continue;
    }
    const result = await loadManifest(file);
    const diagnostics = result.ok ? result.warnings : result.diagnostics;
    for (const diagnostic of diagnostics) {
      io.stderr(formatDiagnostic({ ...diagnostic, file: shown }));
    }
    if (result.ok) {
      io.stdout(`ok ${shown}: ${summarize(result.manifest)}${plural(result.warnings.length, "warning", ", ")}`);
    } else {
      invalid++;
      const errors = result.diagnostics.filter((d) => d.severity === "error").length;
      io.stdout(`invalid ${shown}:${plural(errors, "error", " ")}`);
    }
  }
  return invalid === 0 ? 0 : 1;
}

function summarize(manifest: Manifest): string {
  const effects = new Map<string, number>();
  for (const tool of manifest.tools) effects.set(tool.effect, (effects.get(tool.effect) ?? 0) + 1);
  const byEffect = [...effects].map(([effect, count]) => `${count} ${effect}`).join(", ");
  const parts = [
    `${manifest.id}@${manifest.version}`,
    `${manifest.tools.length} tool${manifest.tools.length === 1 ? "" : "s"}${byEffect ? ` (${byEffect})` : ""}`,
  ];
  for (const [name, list] of [
    ["gate", manifest.gates],
    ["hook", manifest.hooks],
    ["guard", manifest.guards],
  ] as const) {
    if (list.length > 0) parts.push(`${list.length} ${name}${list.length === 1 ? "" : "s"}`);
  }
  return parts.join(", ");
}

function plural(count: number, noun: string, lead: string): string {
  return count === 0 ? "" : `${lead}${count} ${noun}${count === 1 ? "" : "s"}`;
}
