import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TreeWatcher } from "./tree-watcher.js";

let root: string;
let watcher: TreeWatcher | undefined;
afterEach(() => {
  watcher?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Waits until `seen` holds `file`, then empties it. */
async function saw(seen: string[], file: string): Promise<void> {
  for (const start = Date.now(); !seen.includes(file); ) {
    if (Date.now() - start > 5000) throw new Error(`no change of ${file} reported; saw ${JSON.stringify(seen)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  seen.length = 0;
}

describe("TreeWatcher", () => {
  it("keeps seeing a file saved again and again by renaming a new copy over it, as editors do", async () => {
    root = mkdtempSync(path.join(tmpdir(), "toolpact-tree-watcher-"));
    mkdirSync(path.join(root, "lib"));
    writeFileSync(path.join(root, "lib/main.js"), "1");
    const seen: string[] = [];
    watcher = new TreeWatcher(root, { onChange: (file) => seen.push(file) });
    for (let save = 0; save < 4; save++) {
      writeFileSync(path.join(root, "lib/.main.js.swp"), String(save));
      renameSync(path.join(root, "lib/.main.js.swp"), path.join(root, "lib/main.js"));
      await saw(seen, path.join("lib", "main.js"));
      writeFileSync(path.join(root, "lib/main.js"), `in place ${save}`);
      await saw(seen, path.join("lib", "main.js"));
    }
  });

  it("watches folders made after it started, skips the ones it is told to, and watches a removed folder again once it is back", async () => {
    root = mkdtempSync(path.join(tmpdir(), "toolpact-tree-watcher-"));
    const seen: string[] = [];
    watcher = new TreeWatcher(root, { onChange: (file) => seen.push(file), skip: (dir) => path.basename(dir) === "generated" });
    mkdirSync(path.join(root, "a/b"), { recursive: true });
    await saw(seen, "a");
    await new Promise((resolve) => setTimeout(resolve, 50));
    writeFileSync(path.join(root, "a/b/c.ts"), "x");
    await saw(seen, path.join("a", "b", "c.ts"));
    mkdirSync(path.join(root, "generated"));
    writeFileSync(path.join(root, "generated/x.ts"), "x");
    writeFileSync(path.join(root, "d.ts"), "x");
    await saw(seen, "d.ts");
    expect(seen.filter((file) => file.startsWith("generated"))).toEqual([]);
    rmSync(path.join(root, "a"), { recursive: true });
    await saw(seen, "a");
    mkdirSync(path.join(root, "a"));
    watcher.rescan();
    writeFileSync(path.join(root, "a/e.ts"), "x");
    await saw(seen, path.join("a", "e.ts"));
  });
});
