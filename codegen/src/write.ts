import { randomBytes } from "node:crypto";
import { mkdir, open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { GeneratedFile } from "./generated-file.js";
import { listGeneratedFiles, readIfExists, targetPath } from "./output-dir.js";

/** What `writeGeneratedFiles` did; paths relative, posix, sorted. */
export interface WriteResult {
  readonly written: readonly string[];
  readonly unchanged: readonly string[];
  /** Files codegen generated earlier that the new output no longer has. */
  readonly removed: readonly string[];
}

/**
 * Writes generated files into `outDir` so that no file is ever half-written: every changed file is
 * first written in full (and synced) to a temporary file beside its target, and only when all of
 * them are on disk are they renamed over their targets; if any write fails, the temporaries are
 * removed and the folder is left as it was. Unchanged files are not touched (their mtimes stay),
 * and files an earlier run generated that are no longer produced are removed. Files without
 * codegen's header are never touched.
 */
export async function writeGeneratedFiles(outDir: string, files: readonly GeneratedFile[]): Promise<WriteResult> {
  const targets = files.map((file) => ({ file, path: targetPath(outDir, file) }));
  const produced = new Set(files.map((file) => file.path));
  const removed = (await listGeneratedFiles(outDir)).filter((path) => !produced.has(path));

  const changes: { file: GeneratedFile; path: string }[] = [];
  const unchanged: string[] = [];
  for (const target of targets) {
    if ((await readIfExists(target.path)) === target.file.contents) unchanged.push(target.file.path);
    else changes.push(target);
  }

  const suffix = `${process.pid}-${randomBytes(6).toString("hex")}.tmp`;
  const staged: { temp: string; path: string }[] = [];
  try {
    for (const { file, path } of changes) {
      await mkdir(dirname(path), { recursive: true });
      const temp = join(dirname(path), `.${basename(path)}.${suffix}`);
      staged.push({ temp, path });
      const handle = await open(temp, "wx");
      try {
        await handle.writeFile(file.contents, "utf8");
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
  } catch (error) {
    await Promise.all(staged.map(({ temp }) => rm(temp, { force: true })));
    throw error;
  }
  for (const { temp, path } of staged) await rename(temp, path);
  for (const path of removed) await rm(join(outDir, path), { force: true });

  return { written: changes.map(({ file }) => file.path).sort(), unchanged: unchanged.sort(), removed };
}
