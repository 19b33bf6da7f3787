import type { Manifest } from "@toolpact/contract";
import type { GeneratedFile } from "./generated-file.js";
import type { GenerateOptions } from "./generate.js";

export type { GenerateOptions } from "./generate.js";
export { GENERATED_HEADER_PREFIX, type GeneratedFile } from "./generated-file.js";
export { writeGeneratedFiles, type WriteResult } from "./write.js";
export { checkGeneratedFiles, type GeneratedFilesCheck } from "./check.js";
export { diffManifests, type ManifestDiff, type ToolDiff, type BreakingChange, type BreakingChangeKind } from "./diff.js";
export { JSON_SCHEMA_TO_TYPESCRIPT_OPTIONS } from "./schema-options.js";
export { resolveManifestArgument, type ManifestLocation } from "./manifest-source.js";
export { fetchServerManifests, type ServerManifestsOptions, type ServerManifest } from "./server-manifests.js";

/**
 * Turns manifests into typed clients: `index.ts` with `createToolClients(transport)`, and one file
 * per provider with its input/output types, descriptors, client and `define<Alias>Provider`.
 * Nothing touches the disk; the same manifests give the same bytes, whatever their order.
 * With `caller`, the clients hold only the tools that caller's manifest lets it call (`tools:call`
 * and its `uses`), so a call the runtime would refuse at step 3 does not compile; providers keep
 * their descriptors, handlers and `define<Alias>Provider` whole.
 * Throws ToolpactError MANIFEST_INVALID on a name collision or a schema it cannot compile.
 *
 * ts-morph and json-schema-to-typescript (TypeScript itself with them: most of this package's load
 * time) are imported on the first call, so that the light exports (resolveManifestArgument,
 * diffManifests: `toolpact validate` and `diff`) start without them.
 */
export async function generateClients(manifests: readonly Manifest[], options: GenerateOptions = {}): Promise<GeneratedFile[]> {
  const generate = await import("./generate.js");
  return generate.generateClients(manifests, options);
}
