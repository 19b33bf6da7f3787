import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync, watch, type FSWatcher } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { CliIo } from "../io.js";
import { parseCommandArgs } from "../command-args.js";
import { DEV_STATE_DIR, DEV_TENANT } from "../actor-signing.js";
import { createDevSession, DEV_ENV_FILE, DEV_READY_LINE, type DevSession } from "../dev-session.js";

const HELP = `usage: toolpact dev [folder...] [--port n] [--host h] [--user id]

Serves plugin folders for trying them out: with no folder, the plugins of ./toolpact.config.json,
else the current folder. Each start is fresh: throwaway secrets and a SQLite database in
${DEV_STATE_DIR}, removed when it stops (its config holds the secrets; \`toolpact token\` mints more
tokens from it meanwhile). It
  - builds each folder first (\`npm run build\` where its package.json has a build script: the
    scaffold's regenerates the typed clients and compiles),
  - installs every plugin for the tenant "${DEV_TENANT}", with a policy that allows reads and has the user
    confirm writes and external effects on the confirmation page (platform mode),
  - prints the URL, a plugin key per plugin and an actor token for --user (default "dev"),
  - prints the link of each confirmation a preview opens: open it to approve or deny,
  - rebuilds and restarts when a manifest, a source file or a built module changes (a manifest change
    rebuilds every folder: callers generate their clients from it).

  --port <n>   the port (default 4400; 0 picks a free one)
  --host <h>   the address to listen on (default 127.0.0.1)
  --user <id>  the user the printed actor token acts for (default "dev")

Ctrl-C (SIGINT) or SIGTERM stops it; exit 0. Exit 1 when a folder has no plugin.json, 2 on usage errors.`;

/** Quiet time after the last file change before rebuilding (editors and compilers write in bursts). */
const DEBOUNCE_MS = 200;
const DEV_HOST = fileURLToPath(new URL("../dev-host.js", import.meta.url));

/** What a file change asks for: a manifest rebuilds every folder, a source its own, a module only restarts. */
type Change = { readonly kind: "manifest" | "source" | "module"; readonly folder: string; readonly file: string };

/** `toolpact dev [folder...]`: runs until SIGINT or SIGTERM; 0 after a clean stop. */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs({ name: "dev", help: HELP }, io, {
    args: [...args],
    allowPositionals: true,
    options: {
      port: { type: "string", short: "p" },
      host: { type: "string" },
      user: { type: "string", short: "u" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (typeof parsed === "number") return parsed;
  const { values, positionals } = parsed;
  const requestedPort = Number(values.port ?? "4400");
  if (!(Number.isInteger(requestedPort) && requestedPort >= 0 && requestedPort <= 65_535)) {
    io.stderr(`toolpact dev: --port must be an integer from 0 to 65535, got "${values.port}"`);
    return 2;
  }
  const folders = pluginFolders(io.cwd, positionals);
  const missing = folders.filter((folder) => !existsSync(path.join(folder, "plugin.json")));
  if (missing.length > 0) {
    for (const folder of missing) io.stderr(`toolpact dev: ${path.join(shown(io, folder), "plugin.json")} not found: each plugin folder needs its manifest`);
    io.stderr("name plugin folders (toolpact dev ./todo ./assistant), list them under \"plugins\" in toolpact.config.json, or run `toolpact init`");
    return 1;
  }
  const host = values.host ?? "127.0.0.1";
  const port = requestedPort === 0 ? await freePort(host) : requestedPort;
  const session = createDevSession({ cwd: io.cwd, plugins: folders, host, port });
  io.stdout(`toolpact dev: ${folders.map((folder) => shown(io, folder)).join(", ")}; throwaway secrets and database in ${DEV_STATE_DIR}`);

  const dev = new DevSupervisor(io, session, folders, values.user ?? "dev");
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(signal);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  void dev.start();
  const signal = await stopped;
  io.stdout(`toolpact dev: ${signal}: stopping`);
  await dev.stop();
  // Throwaway means gone: the secrets, the database and the callers' copies of keys and token.
  rmSync(session.dir, { recursive: true, force: true });
  for (const folder of folders) rmSync(path.join(folder, DEV_ENV_FILE), { force: true });
  io.stdout("toolpact dev: stopped");
  return 0;
}

/** Builds the folders, runs the dev host, and rebuilds and restarts it on changes. */
class DevSupervisor {
  readonly #io: CliIo;
  readonly #session: DevSession;
  readonly #folders: readonly string[];
  readonly #user: string;
  #host: { child: ChildProcess; exited: Promise<void> } | undefined;
  #build: ChildProcess | undefined;
  /** Watchers by the folder they watch; a folder a build creates later (dist/) is added after that build. */
  readonly #watchers = new Map<string, FSWatcher>();
  #pending: Change[] = [];
  #timer: NodeJS.Timeout | undefined;
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

  async start(): Promise<void> {
    this.#cycle = this.#rebuildAndRestart(this.#folders);
    await this.#cycle;
    this.#cycle = undefined;
    if (this.#stopping) return;
    for (const folder of this.#folders) this.#watch(folder);
    if (this.#pending.length > 0) this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#timer);
    for (const watcher of this.#watchers.values()) watcher.close();
    this.#build?.kill("SIGTERM");
    await this.#cycle;
    await this.#stopHost();
  }

  /** Watches a folder's manifest and package files, its `src/` and its `dist/`. */
  #watch(folder: string): void {
    const add = (dir: string, recursive: boolean, classify: (file: string) => Change["kind"] | undefined) => {
      if (this.#watchers.has(dir) || !existsSync(dir)) return;
      const watcher = watch(dir, { recursive }, (_event, file) => {
        const kind = file === null ? undefined : classify(file.toString());
        if (kind !== undefined) this.#changed({ kind, folder, file: path.join(dir, file!.toString()) });
      });
      // A watched folder was removed: stop watching it; a build that makes it again brings a new watcher.
      watcher.on("error", () => {
        watcher.close();
        this.#watchers.delete(dir);
      });
      this.#watchers.set(dir, watcher);
    };
    add(folder, false, (file) => {
      if (file === "plugin.json") return "manifest";
      if (file === "package.json" || file === "tsconfig.json") return "source";
      return /\.[cm]?js$/.test(file) ? "module" : undefined;
    });
    add(path.join(folder, "src"), true, (file) => (file.startsWith(`generated${path.sep}`) || file === "generated" ? undefined : "source"));
    add(path.join(folder, "dist"), true, (file) => (/\.[cm]?js$/.test(file) ? "module" : undefined));
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
    if (changes.length === 0 || this.#stopping) return;
    const manifestChanged = changes.some((change) => change.kind === "manifest");
    const toBuild = manifestChanged ? this.#folders : this.#folders.filter((folder) => changes.some((c) => c.kind === "source" && c.folder === folder));
    const files = [...new Set(changes.map((change) => shown(this.#io, change.file)))];
    const what = manifestChanged ? "regenerating clients, rebuilding and restarting" : toBuild.length > 0 ? "rebuilding and restarting" : "restarting";
    this.#io.stdout(`toolpact dev: ${files.join(", ")} changed: ${what}`);
    this.#cycle = this.#rebuildAndRestart(toBuild);
    await this.#cycle;
    this.#cycle = undefined;
    if (this.#stopping) return;
    for (const folder of toBuild) this.#watch(folder);
    if (this.#pending.length > 0) this.#schedule();
  }

  /** Builds `folders`; when every build passes, (re)starts the host. A failed build keeps the host stopped until the next change. */
  async #rebuildAndRestart(folders: readonly string[]): Promise<void> {
    await this.#stopHost();
    for (const folder of folders) {
      if (this.#stopping) return;
      if (!(await this.#buildFolder(folder))) return;
    }
    if (!this.#stopping) await this.#startHost();
  }

  /** `npm run build` in a folder whose package.json has that script; true when it passed or there is none. */
  async #buildFolder(folder: string): Promise<boolean> {
    if (!hasBuildScript(folder)) return true;
    const started = performance.now();
    const child = spawn("npm", ["run", "--silent", "build"], { cwd: folder, env: process.env, stdio: ["ignore", "pipe", "pipe"] });
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
      env: withoutToolpactSecrets(process.env),
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

/** The plugin folders to serve: those named, else the config's plugins, else the current folder. */
function pluginFolders(cwd: string, named: readonly string[]): string[] {
  if (named.length > 0) return named.map((folder) => path.resolve(cwd, folder));
  const configFile = path.join(cwd, "toolpact.config.json");
  if (existsSync(configFile)) {
    try {
      const config = JSON.parse(readFileSync(configFile, "utf8")) as { plugins?: unknown };
      if (Array.isArray(config.plugins) && config.plugins.every((entry) => typeof entry === "string") && config.plugins.length > 0) {
        return (config.plugins as string[]).map((folder) => path.resolve(cwd, folder));
      }
    } catch {
      // not readable as JSON: serve the current folder, as without a config
    }
  }
  return [cwd];
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
  return Object.fromEntries(Object.entries(env).filter(([name]) => !/^TOOLPACT_(ADMIN_KEY|ACTOR_SECRET|SIGNING_KEYS|STORAGE_KEY|DATABASE_URL)(_FILE)?$/.test(name)));
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

/** A port nobody listens on now, so the dev host keeps one URL across restarts. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function shown(io: CliIo, file: string): string {
  return path.relative(io.cwd, file) || ".";
}
