import { readdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { applyManifestDefaults, formatDiagnostic, loadManifest, manifestSchema, type Manifest, type ManifestInput } from "@toolpact/contract";

const here = dirname(fileURLToPath(import.meta.url));

/** `codegen/fixtures`: manifests whose generated clients are committed under `codegen/golden`. */
export const FIXTURES_DIR = resolve(here, "../fixtures");
/** `codegen/golden`: the expected output for the fixtures. */
export const GOLDEN_DIR = resolve(here, "../golden");
/** `codegen/fixtures/callers/assistant.plugin.json`: a caller whose `uses` narrows the fixtures' clients. */
export const CALLER_FIXTURE = resolve(FIXTURES_DIR, "callers/assistant.plugin.json");
/** `codegen/golden/caller`: the fixtures' output for that caller. */
export const CALLER_GOLDEN_DIR = resolve(GOLDEN_DIR, "caller");

/** Loads every fixture manifest through the real loader; a fixture that does not load fails loudly. */
export async function loadFixtures(): Promise<Manifest[]> {
  const names = (await readdir(FIXTURES_DIR)).filter((name) => name.endsWith(".plugin.json")).sort();
  const manifests: Manifest[] = [];
  for (const name of names) {
    const result = await loadManifest(join(FIXTURES_DIR, name));
    if (!result.ok) throw new Error(`fixture ${name} does not load:\n${result.diagnostics.map(formatDiagnostic).join("\n")}`);
    manifests.push(result.manifest);
  }
  return manifests;
}

/** The caller fixture, through the real loader. */
export async function loadCallerFixture(): Promise<Manifest> {
  const result = await loadManifest(CALLER_FIXTURE);
  if (!result.ok) throw new Error(`${CALLER_FIXTURE} does not load:\n${result.diagnostics.map(formatDiagnostic).join("\n")}`);
  return result.manifest;
}

/**
 * A manifest from a plain object, with defaults applied but without the loader's checks, the way a
 * library caller could hand one to `generateClients`: codegen must hold its own line.
 */
export function manifestOf(input: ManifestInput): Manifest {
  return applyManifestDefaults(manifestSchema.parse(input));
}

/** A one-tool read manifest with the given input schema. */
export function oneTool(inputSchema: Record<string, unknown>, outputSchema?: Record<string, unknown>): Manifest {
  return manifestOf({
    id: "com.example.probe",
    version: "1.0.0",
    permissions: ["tools:provide"],
    tools: [{ name: "probe", effect: "read", inputSchema, ...(outputSchema ? { outputSchema } : {}) }],
  });
}
