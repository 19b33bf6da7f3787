import { open, readFile, readdir } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";
import { codegenError } from "./codegen-error.js";
import { GENERATED_HEADER_PREFIX, type GeneratedFile } from "./generated-file.js";

/** The absolute path of a generated file, refusing any path that would land outside `outDir`. */
export function targetPath(outDir: string, file: GeneratedFile): string {
  const target = join(outDir, file.path);
  const back = relative(outDir, target);
  if (file.path.includes("\\") || isAbsolute(file.path) || back === "" || back.startsWith("..") || isAbsolute(back)) {
    throw codegenError(`generated file path ${JSON.stringify(file.path)} is not a relative path inside the output folder`);
  }
  return target;
}

/** The file's text, or undefined when it does not exist. */
export async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
    throw error;
  }
}

/**
 * `.ts` files directly in `outDir` that codegen wrote (they start with its header). Files anyone
 * else wrote are never listed, so they are never reported or removed; subfolders are not searched
 * (codegen writes none), so pointing `--out` at a large folder stays cheap.
 */
export async function listGeneratedFiles(outDir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(outDir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const generated: string[] = [];
  for (const entry of entries.filter((e) => e.isFile() && e.name.endsWith(".ts")).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (await startsWithHeader(join(outDir, entry.name))) generated.push(entry.name);
  }
  return generated;
}

async function startsWithHeader(path: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, "r");
  } catch {
    return false;
  }
  try {
    const buffer = Buffer.alloc(GENERATED_HEADER_PREFIX.length);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.toString("utf8", 0, bytesRead) === GENERATED_HEADER_PREFIX;
  } catch {
    return false;
  } finally {
    await handle.close();
  }
}
