import { readdirSync, watch, type FSWatcher } from "node:fs";
import path from "node:path";

/** What a TreeWatcher reports: a path relative to its root, and the watcher's own trouble. */
export interface TreeWatcherOptions {
  /** Called with each changed path, relative to the root (the path of a file or folder created, written, renamed or removed). */
  readonly onChange: (file: string) => void;
  /** Folder names (at any depth) not to watch, such as `generated` or `node_modules`. */
  readonly skip?: (relativeDir: string) => boolean;
}

/**
 * Watches a folder and every folder under it, one directory watcher each. Node 20's own recursive
 * watcher on Linux watches each file's inode, so a file an editor saves by renaming a new copy over it
 * is seen once and then never again; a directory's watch outlives any file saved in it. A folder that
 * appears is watched at once; a folder that disappears (or a watcher that fails) is dropped, and
 * `rescan()` watches whatever exists again.
 */
export class TreeWatcher {
  readonly #root: string;
  readonly #options: TreeWatcherOptions;
  readonly #watchers = new Map<string, FSWatcher>();
  #closed = false;

  constructor(root: string, options: TreeWatcherOptions) {
    this.#root = root;
    this.#options = options;
    this.rescan();
  }

  /** Watches every folder under the root that is not watched yet (the root itself included, once it exists). */
  rescan(): void {
    this.#add("");
  }

  close(): void {
    this.#closed = true;
    for (const watcher of this.#watchers.values()) watcher.close();
    this.#watchers.clear();
  }

  #add(relativeDir: string): void {
    if (this.#closed || (relativeDir !== "" && this.#options.skip?.(relativeDir) === true)) return;
    const dir = path.join(this.#root, relativeDir);
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // gone, or not a folder: nothing to watch
    }
    if (!this.#watchers.has(relativeDir)) {
      try {
        const watcher = watch(dir, (_event, name) => this.#changed(relativeDir, name?.toString()));
        watcher.on("error", () => this.#drop(relativeDir));
        this.#watchers.set(relativeDir, watcher);
      } catch {
        return;
      }
    }
    for (const entry of entries) if (entry.isDirectory()) this.#add(path.join(relativeDir, entry.name));
  }

  #changed(relativeDir: string, name: string | undefined): void {
    if (this.#closed) return;
    const file = name === undefined ? relativeDir : path.join(relativeDir, name);
    if (name !== undefined) {
      // A folder created (or moved in) is watched at once; one removed drops its watchers.
      this.#add(file);
      if (this.#watchers.has(file)) this.#dropIfGone(file);
    }
    if (file !== "" && this.#options.skip?.(file) !== true && !isInsideSkipped(file, this.#options.skip)) this.#options.onChange(file);
  }

  #dropIfGone(relativeDir: string): void {
    try {
      readdirSync(path.join(this.#root, relativeDir));
    } catch {
      this.#drop(relativeDir);
    }
  }

  /** Stops watching a folder and everything under it. */
  #drop(relativeDir: string): void {
    for (const [dir, watcher] of this.#watchers) {
      if (dir === relativeDir || relativeDir === "" || dir.startsWith(relativeDir + path.sep)) {
        watcher.close();
        this.#watchers.delete(dir);
      }
    }
  }
}

function isInsideSkipped(file: string, skip: ((relativeDir: string) => boolean) | undefined): boolean {
  if (skip === undefined) return false;
  const parts = file.split(path.sep);
  for (let i = 1; i < parts.length; i++) if (skip(parts.slice(0, i).join(path.sep))) return true;
  return false;
}
