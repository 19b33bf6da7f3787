import type { GeneratedFile } from "./generated-file.js";
import { listGeneratedFiles, readIfExists, targetPath } from "./output-dir.js";

/** How the files on disk differ from freshly generated ones; all paths relative, posix, sorted. */
export interface GeneratedFilesCheck {
  /** Every path that is not up to date: the union of the three lists below. */
  readonly stale: readonly string[];
  /** On disk with other contents. */
  readonly changed: readonly string[];
  /** Not on disk. */
  readonly missing: readonly string[];
  /** Generated earlier (it has codegen's header) but no longer produced, e.g. a removed provider. */
  readonly extra: readonly string[];
}

/** Compares generated files with `outDir` without writing anything (`toolpact codegen --check`). */
export async function checkGeneratedFiles(outDir: string, files: readonly GeneratedFile[]): Promise<GeneratedFilesCheck> {
  const changed: string[] = [];
  const missing: string[] = [];
  for (const file of files) {
    const current = await readIfExists(targetPath(outDir, file));
    if (current === undefined) missing.push(file.path);
    else if (current !== file.contents) changed.push(file.path);
  }
  const produced = new Set(files.map((file) => file.path));
  const extra = (await listGeneratedFiles(outDir)).filter((path) => !produced.has(path));
  return { stale: [...changed, ...missing, ...extra].sort(), changed: changed.sort(), missing: missing.sort(), extra };
}
