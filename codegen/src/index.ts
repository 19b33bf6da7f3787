export { generateClients, type GenerateOptions } from "./generate.js";
export { GENERATED_HEADER_PREFIX, type GeneratedFile } from "./emit.js";
export { writeGeneratedFiles, type WriteResult } from "./write.js";
export { checkGeneratedFiles, type GeneratedFilesCheck } from "./check.js";
export { diffManifests, type ManifestDiff, type ToolDiff, type BreakingChange, type BreakingChangeKind } from "./diff.js";
export { JSON_SCHEMA_TO_TYPESCRIPT_OPTIONS } from "./schema-types.js";
export { resolveManifestArgument, type ManifestLocation } from "./manifest-source.js";
export { fetchServerManifests, type ServerManifestsOptions, type ServerManifest } from "./server-manifests.js";
