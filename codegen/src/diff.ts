import { EFFECTS, toolFullName, type Manifest, type ToolDeclaration } from "@toolpact/contract";
import { compare } from "./names.js";
import { compareSchemas, type SchemaChange } from "./schema-compare.js";

/** What kind of break a change is. */
export type BreakingChangeKind =
  | "tool-removed"
  | "input-required-added"
  | "input-property-removed"
  | "input-property-retyped"
  | "input-enum-narrowed"
  | "input-constraint-tightened"
  | "output-property-removed"
  | "output-property-retyped"
  | "effect-tightened"
  | "confirmation-tightened"
  | "verification-tightened";

/** One change that breaks callers (or, for outputs, readers) of a tool version. */
export interface BreakingChange {
  readonly kind: BreakingChangeKind;
  /** JSON Pointer into the input or output value's shape; "" for the tool itself. */
  readonly pointer: string;
  readonly message: string;
}

/** The breaking changes of one tool version of the old manifest. */
export interface ToolDiff {
  /** The old full name, `<pluginId>:<name>@<version>`. */
  readonly tool: string;
  readonly changes: readonly BreakingChange[];
  /**
   * True when the change reaches callers of a version they still ask for: the same (name, version)
   * changed incompatibly, or a tool version was removed without a major bump of the plugin's version.
   */
  readonly lacksVersionBump: boolean;
}

/** Breaking changes between two manifests of one plugin. */
export interface ManifestDiff {
  readonly providerId: string;
  /** Tool versions of the old manifest with breaking changes, by full name. */
  readonly tools: readonly ToolDiff[];
  /** Tool versions only the new manifest has, by full name (not breaking). */
  readonly added: readonly string[];
  /** True when any breaking change lacks a version bump: `toolpact diff` exits 1. */
  readonly lacksVersionBump: boolean;
}

const INPUT_KINDS: Readonly<Record<SchemaChange["kind"], BreakingChangeKind>> = {
  "required-added": "input-required-added",
  "property-removed": "input-property-removed",
  retyped: "input-property-retyped",
  "enum-narrowed": "input-enum-narrowed",
  "constraint-tightened": "input-constraint-tightened",
};
const OUTPUT_KINDS: Readonly<Record<SchemaChange["kind"], BreakingChangeKind>> = {
  "required-added": "output-property-retyped",
  "property-removed": "output-property-removed",
  retyped: "output-property-retyped",
  "enum-narrowed": "output-property-retyped",
  "constraint-tightened": "output-property-retyped",
};

/**
 * Breaking changes per tool from `before` to `after` (DESIGN.md, Codegen): input (new required
 * field, removed or retyped property, narrowed enum, tightened constraint), output (removed or
 * retyped property), effect, confirmation or verification level tightened, tool version removed.
 * A changed tool version lacks a version bump: its callers still ask for that (name, version).
 */
export function diffManifests(before: Manifest, after: Manifest): ManifestDiff {
  const key = (tool: ToolDeclaration) => `${tool.name}@${tool.version}`;
  const samePlugin = before.id === after.id;
  const next = new Map(samePlugin ? after.tools.map((tool) => [key(tool), tool]) : []);
  const previous = new Set(before.tools.map(key));
  const majorBump = isMajorBump(before.version, after.version);

  const tools: ToolDiff[] = [];
  for (const tool of before.tools) {
    const fullName = toolFullName(before.id, tool.name, tool.version);
    const successor = next.get(key(tool));
    if (!successor) {
      const message = samePlugin
        ? `removed${majorBump ? "" : ` without a major version bump of the plugin (${before.version} -> ${after.version})`}`
        : `removed: the plugin id changed from ${before.id} to ${after.id}`;
      tools.push({ tool: fullName, changes: [{ kind: "tool-removed", pointer: "", message }], lacksVersionBump: !majorBump });
      continue;
    }
    const changes = toolChanges(tool, successor);
    if (changes.length > 0) tools.push({ tool: fullName, changes, lacksVersionBump: true });
  }
  const added = samePlugin
    ? after.tools.filter((tool) => !previous.has(key(tool))).map((tool) => toolFullName(after.id, tool.name, tool.version))
    : after.tools.map((tool) => toolFullName(after.id, tool.name, tool.version));
  tools.sort((a, b) => compare(a.tool, b.tool));
  return { providerId: before.id, tools, added: added.sort(compare), lacksVersionBump: tools.some((tool) => tool.lacksVersionBump) };
}

function toolChanges(before: ToolDeclaration, after: ToolDeclaration): BreakingChange[] {
  const changes: BreakingChange[] = [];
  if (EFFECTS.indexOf(after.effect) > EFFECTS.indexOf(before.effect)) {
    changes.push({ kind: "effect-tightened", pointer: "", message: `effect ${before.effect} became ${after.effect}` });
  }
  if (after.requiresConfirmation && !before.requiresConfirmation) {
    changes.push({ kind: "confirmation-tightened", pointer: "", message: "now requires confirmation" });
  }
  if (after.minVerificationLevel > before.minVerificationLevel) {
    changes.push({
      kind: "verification-tightened",
      pointer: "",
      message: `minVerificationLevel ${before.minVerificationLevel} became ${after.minVerificationLevel}`,
    });
  }
  for (const change of compareSchemas(before.inputSchema, after.inputSchema, "input")) {
    changes.push({ kind: INPUT_KINDS[change.kind], pointer: change.pointer, message: `input ${change.pointer || "/"}: ${change.message}` });
  }
  if (before.outputSchema !== undefined) {
    const newOutput = after.outputSchema ?? {};
    for (const change of compareSchemas(before.outputSchema, newOutput, "output")) {
      const message = after.outputSchema === undefined ? "outputSchema was removed: results are no longer typed" : change.message;
      changes.push({ kind: OUTPUT_KINDS[change.kind], pointer: change.pointer, message: `output ${change.pointer || "/"}: ${message}` });
      if (after.outputSchema === undefined) break;
    }
  }
  return changes;
}

/** A major bump: the major version grew, or (below 1.0.0, where the minor is the breaking digit) the minor did. */
function isMajorBump(before: string, after: string): boolean {
  const [oldMajor = 0, oldMinor = 0] = before.split(/[.+-]/).map(Number);
  const [newMajor = 0, newMinor = 0] = after.split(/[.+-]/).map(Number);
  if (newMajor !== oldMajor) return newMajor > oldMajor;
  return newMajor === 0 && newMinor > oldMinor;
}
