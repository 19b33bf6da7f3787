import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, watch, type FSWatcher } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { CliIo } from "./io.js";
import { DEV_READY_LINE, type DevSession } from "./dev-session.js";
import { TreeWatcher } from "./tree-watcher.js";

/** Quiet time after the last file change before rebuilding (editors and compilers write in bursts). */
const DEBOUNCE_MS = 200;
const DEV_HOST = fileURLToPath(new URL("./dev-host.js", import.meta.url));

/** What a file change asks for: a manifest rebuilds every folder, a source its own, a module only restarts. */
type Change = { readonly kind: "manifest" | "source" | "module"; readonly folder: string; readonly file: string };

/** One plugin folder's watchers: the folder itself (manifest, package files, modules), its `src/` and its `dist/`. */
interface FolderWatch {
  root: FSWatcher | undefined;
  readonly src: TreeWatcher;
  readonly dist: TreeWatcher;
}

/**
 * Builds the folders, runs the dev host, and rebuilds and restarts it on changes. A folder whose build
 * did not pass (or did not run, because one before it failed) stays stale until a build of it passes:
 * every later cycle builds it again, and the host starts only when no folder is stale, so "serving"
 * never stands over a stale build.
 */
export class DevSupervisor {
  readonly #io: CliIo;
  readonly #session: DevSession;
  readonly #folders: readonly string[];
  readonly #user: string;
  #host: { child: ChildProcess; exited: Promise<void> } | undefined;
  #build: ChildProcess | undefined;
  readonly #watches = new Map<string, FolderWatch>();
  /** Folders whose last build failed or never ran: built again, in order, before the host starts. */
  readonly #stale = new Set<string>();
  #pending: Change[] = [];
  #timer: NodeJS.Timeout | undefined;
  #rearm: NodeJS.Timeout | undefined;
  /** The cycle (build, restart) in progress; changes that arrive meanwhile wait for the next. */
  #cycle: Promise<void> | undefined;
  #setUp = false;
  #stopping = false;

  constructor(io: CliIo, session: DevSession, folders: readonly string[], user: string) {
    this.#io = io;
    this.#session = session;
    this.#folders = folders;
    this.#user = user;
  }

  /** The dev host's process, while it runs (to stop it at once when the supervisor dies). */
  get hostProcess(): ChildProcess | undefined {
    return this.#host?.child;
  }

  async start(): Promise<void> {
    this.#watchAll();
    await this.#runCycle(this.#folders);
    if (this.#pending.length > 0) this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#rearm);
    for (const folderWatch of this.#watches.values()) {
      folderWatch.root?.close();
      folderWatch.src.close();
      folderWatch.dist.close();
    }
    this.#build?.kill("SIGTERM");
    await this.#cycle;
    await this.#stopHost();
  }

  /** Runs one cycle, then makes sure every folder is watched again (a build may have made or replaced folders). */
  async #runCycle(folders: readonly string[]): Promise<void> {
    this.#cycle = this.#rebuildAndRestart(folders);
    await this.#cycle;
    this.#cycle = undefined;
    if (!this.#stopping) this.#watchAll();
  }

  /** Watches every folder, again where a watcher was lost; cheap for folders already watched. */
  #watchAll(): void {
    for (const folder of this.#folders) {
      const existing = this.#watches.get(folder);
      if (existing === undefined) {
        const onChange = (kind: (file: string) => Change["kind"] | undefined, dir: string) => (file: string) => {
          const what = kind(file);
          if (what !== undefined) this.#changed({ kind: what, folder, file: path.join(dir, file) });
        };
        const src = path.join(folder, "src");
        const dist = path.join(folder, "dist");
        this.#watches.set(folder, {
          root: this.#watchRoot(folder),
          src: new TreeWatcher(src, { onChange: onChange(() => "source", src), skip: (dir) => dir === "generated" }),
          dist: new TreeWatcher(dist, { onChange: onChange((file) => (/\.[cm]?js$/.test(file) ? "module" : undefined), dist) }),
        });
        continue;
      }
      existing.root ??= this.#watchRoot(folder);
      existing.src.rescan();
      existing.dist.rescan();
    }
  }

  /** The folder itself, not its subfolders: the manifest, package.json, tsconfig.json and modules at its top. */
  #watchRoot(folder: string): FSWatcher | undefined {
    if (!existsSync(folder)) return undefined;
    const watcher = watch(folder, (_event, name) => {
      const file = name?.toString();
      const kind =
        file === "plugin.json"
          ? "manifest"
          : file === "package.json" || file === "tsconfig.json"
            ? "source"
            : file !== undefined && /\.[cm]?js$/.test(file)
              ? "module"
              : undefined;
      if (kind !== undefined) this.#changed({ kind, folder, file: path.join(folder, file!) });
    });
    // A lost watcher is made again shortly (and after every cycle): saves must never go unnoticed.
    watcher.on("error", () => {
      watcher.close();
      const folderWatch = this.#watches.get(folder);
      if (folderWatch !== undefined) folderWatch.root = undefined;
      clearTimeout(this.#rearm);
      this.#rearm = setTimeout(() => !this.#stopping && this.#cycle === undefined && this.#watchAll(), DEBOUNCE_MS);
    });
    return watcher;
  }

  #changed(change: Change): void {
    if (this.#stopping) return;
    // What a build writes (dist/, while it runs) is its own output, not a change to react to.
    if (this.#cycle !== undefined && change.kind === "module") return;
    this.#pending.push(change);
    if (this.#cycle === undefined) this.#schedule();
  }

  #schedule(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#runPending(), DEBOUNCE_MS);
  }

  async #runPending(): Promise<void> {
    const changes = this.#pending;
    this.#pending = [];
    if (changes.length === 0 || this.#stopping || this.#cycle !== undefined) {
      this.#pending.unshift(...changes);
      return;
    }
    const manifestChanged = changes.some((change) => change.kind === "manifest");
    const toBuild = manifestChanged ? this.#folders : this.#folders.filter((folder) => changes.some((c) => c.kind === "source" && c.folder === folder));
    const alsoStale = this.#folders.filter((folder) => this.#stale.has(folder) && !toBuild.includes(folder));
    // An editor's swap or backup file, gone by now, is not what the author changed.
    const changed = [...new Set(changes.map((change) => change.file))];
    const present = changed.filter((file) => existsSync(file));
    const files = (present.length > 0 ? present : changed).map((file) => shown(this.#io, file));
    const what = manifestChanged
      ? "regenerating clients, rebuilding and restarting"
      : toBuild.length > 0 || alsoStale.length > 0
        ? "rebuilding and restarting"
        : "restarting";
    const also = alsoStale.length === 0 ? "" : ` (also ${alsoStale.map((folder) => shown(this.#io, folder)).join(", ")}, not built since a build failed)`;
    this.#io.stdout(`toolpact dev: ${files.join(", ")} changed: ${what}${also}`);
    await this.#runCycle(toBuild);
    if (!this.#stopping && this.#pending.length > 0) this.#schedule();
  }

  /** Marks `folders` stale, builds every stale folder in order; when all pass, (re)starts the host. */
  async #rebuildAndRestart(folders: readonly string[]): Promise<void> {
    await this.#stopHost();
    for (const folder of folders) this.#stale.add(folder);
    for (const folder of this.#folders) {
      if (this.#stopping) return;
      if (!this.#stale.has(folder)) continue;
      if (!(await this.#buildFolder(folder))) {
        const waiting = this.#folders.filter((each) => this.#stale.has(each)).map((each) => shown(this.#io, each));
        this.#io.stderr(`toolpact dev: not serving until ${waiting.length === 1 ? "this build passes" : `these builds pass: ${waiting.join(", ")}`}`);
        return;
      }
      this.#stale.delete(folder);
    }
    if (!this.#stopping) await this.#startHost();
  }

  /** `npm run build` in a folder whose package.json has that script; true when it passed or there is none. */
  async #buildFolder(folder: string): Promise<boolean> {
    if (!hasBuildScript(folder)) return true;
    const started = performance.now();
    const child = spawn("npm", ["run", "--silent", "build"], { cwd: folder, env: this.#io.env, stdio: ["ignore", "pipe", "pipe"] });
    this.#build = child;
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => {
      child.once("error", () => resolve(null));
      child.once("close", resolve);
    });
    this.#build = undefined;
    if (this.#stopping) return false;
    if (code !== 0) {
      this.#io.stderr(`toolpact dev: npm run build in ${shown(this.#io, folder)} failed (exit ${code}); fix it and save again:\n${output.trimEnd()}`);
      return false;
    }
    this.#io.stdout(`toolpact dev: built ${shown(this.#io, folder)} (npm run build, ${((performance.now() - started) / 1000).toFixed(1)} s)`);
    return true;
  }

  async #startHost(): Promise<void> {
    const setUp = !this.#setUp;
    const child = spawn(process.execPath, [DEV_HOST, this.#session.configFile, "--user", this.#user, ...(setUp ? ["--setup"] : [])], {
      cwd: this.#io.cwd,
      env: withoutToolpactSecrets(this.#io.env),
      // Its own process group: a terminal's Ctrl-C reaches the supervisor, which stops the host in order.
      // Its stdin is the supervisor's lifeline: it ends when the supervisor is gone, and the host stops.
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    this.#host = { child, exited };
    const ready = new Promise<boolean>((resolve) => {
      void exited.then(() => resolve(false));
      forwardLines(child.stdout!, (line) => {
        this.#io.stdout(line);
        if (line.startsWith(DEV_READY_LINE)) resolve(true);
      });
      forwardLines(child.stderr!, (line) => this.#io.stderr(line));
    });
    if (await ready) {
      if (setUp) this.#setUp = true;
    } else if (!this.#stopping) {
      this.#io.stderr("toolpact dev: the host stopped; fix the problem above and save again");
    }
  }

  async #stopHost(): Promise<void> {
    const running = this.#host;
    if (running === undefined) return;
    this.#host = undefined;
    if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill("SIGTERM");
    await running.exited;
  }
}

function hasBuildScript(folder: string): boolean {
  try {
    const pkg = JSON.parse(readFileSync(path.join(folder, "package.json"), "utf8")) as { scripts?: Record<string, unknown> };
    return typeof pkg.scripts?.build === "string";
  } catch {
    return false;
  }
}

/** The environment without toolpact's secret variables: the dev host serves with the session's own. */
function withoutToolpactSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(([name]) => !/^TOOLPACT_(ADMIN_KEY|ACTOR_SECRET|SIGNING_KEYS|STORAGE_KEY|DATABASE_URL)(_FILE)?$/.test(name)),
  );
}

function forwardLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let buffered = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split("\n");
    buffered = lines.pop()!;
    for (const line of lines) onLine(line);
  });
  stream.on("end", () => buffered !== "" && onLine(buffered));
}

/** A path as the user named it: relative to the working directory. */
export function shown(io: CliIo, file: string): string {
  return path.relative(io.cwd, file) || ".";
}
