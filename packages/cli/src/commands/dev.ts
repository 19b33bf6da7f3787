import { existsSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import type { CliIo } from "../io.js";
import { parseCommandArgs } from "../command-args.js";
import { DEV_STATE_DIR, DEV_TENANT } from "../actor-signing.js";
import { isLoopbackHost } from "../credential-safety.js";
import { createDevSession, DEV_ENV_FILE } from "../dev-session.js";
import { devStateOwner } from "../dev-state-owner.js";
import { DevSupervisor, shown } from "../dev-supervisor.js";
import { listenForStop } from "../stop-signals.js";

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
    rebuilds every folder: callers generate their clients from it); after a failed build it serves
    again once every folder's build passes.

  --port <n>   the port (default: "port" in ./toolpact.config.json, else 4400; 0 picks a free one)
  --host <h>   the address to listen on (default: "host" in ./toolpact.config.json, else 127.0.0.1)
  --user <id>  the user the printed actor token acts for (default "dev")

Ctrl-C (SIGINT), SIGTERM or SIGHUP stops it and removes the throwaway state; exit 0. Exit 1 when a
folder has no plugin.json, the port is taken, or another \`toolpact dev\` runs in this folder; 2 on
usage errors.`;

/** The defaults `toolpact dev` takes from ./toolpact.config.json, when there is one. */
interface ProjectConfig {
  readonly plugins?: readonly string[];
  readonly port?: number;
  readonly host?: string;
}

/** `toolpact dev [folder...]`: runs until SIGINT, SIGTERM or SIGHUP; 0 after a clean stop. */
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
  const project = readProjectConfig(io.cwd);
  const requestedPort = values.port === undefined ? (project.port ?? 4400) : Number(values.port);
  if (!(Number.isInteger(requestedPort) && requestedPort >= 0 && requestedPort <= 65_535)) {
    io.stderr(`toolpact dev: --port must be an integer from 0 to 65535, got "${values.port}"`);
    return 2;
  }
  const portSource = values.port !== undefined ? "--port" : project.port !== undefined ? '"port" in toolpact.config.json' : "the default port";
  const folders =
    positionals.length > 0
      ? positionals.map((folder) => path.resolve(io.cwd, folder))
      : (project.plugins ?? ["."]).map((folder) => path.resolve(io.cwd, folder));
  const missing = folders.filter((folder) => !existsSync(path.join(folder, "plugin.json")));
  if (missing.length > 0) {
    for (const folder of missing) io.stderr(`toolpact dev: ${path.join(shown(io, folder), "plugin.json")} not found: each plugin folder needs its manifest`);
    io.stderr('name plugin folders (toolpact dev ./todo ./assistant), list them under "plugins" in toolpact.config.json, or run `toolpact init`');
    return 1;
  }

  const stateDir = path.join(io.cwd, DEV_STATE_DIR);
  const owner = devStateOwner(stateDir);
  if (owner.alive && owner.pid !== process.pid) {
    io.stderr(
      `toolpact dev: another toolpact dev (pid ${owner.pid}) is running in this folder (${DEV_STATE_DIR}): stop it first (Ctrl-C in its terminal), or start this one from another folder`,
    );
    return 1;
  }
  const host = values.host ?? project.host ?? "127.0.0.1";
  if (!isLoopbackHost(host)) {
    io.stderr(
      `toolpact dev: warning: listening on ${host}, which is not this machine's loopback address: other machines that reach it can ` +
        "use its confirmation page and anyone holding the printed keys can call your plugins; use --host 127.0.0.1 unless you mean to share it",
    );
  }
  // Before any build: a taken port is reported now, not after the builds.
  const port = await bindablePort(host, requestedPort);
  if (typeof port === "string") {
    io.stderr(
      `toolpact dev: cannot listen on ${host}:${requestedPort} (${portSource}): ${port}: stop what holds it, or choose another port ` +
        'with --port <n> or "port" in toolpact.config.json (--port 0 picks a free one)',
    );
    return 1;
  }
  if (existsSync(stateDir)) {
    io.stdout(
      `toolpact dev: removing stale state in ${DEV_STATE_DIR}: a toolpact dev${owner.pid === undefined ? "" : ` (pid ${owner.pid})`} did not stop cleanly`,
    );
  }
  const envFiles = folders.map((folder) => path.join(folder, DEV_ENV_FILE));
  for (const file of envFiles) rmSync(file, { force: true });

  const session = createDevSession({ cwd: io.cwd, plugins: folders, host, port });
  io.stdout(`toolpact dev: ${folders.map((folder) => shown(io, folder)).join(", ")}; throwaway secrets and database in ${DEV_STATE_DIR}`);
  if (requestedPort === 0) io.stdout(`toolpact dev: port 0 (${portSource}) picked the free port ${port}`);

  // Throwaway means gone: the secrets, the database and the callers' copies of keys and token, on
  // every exit this process can see (a signal, an error, process.exit); after a kill it cannot, and
  // the next start (or `toolpact token`) finds the state stale by its dead owner.
  let cleaned = false;
  const cleanUp = () => {
    if (cleaned) return;
    cleaned = true;
    if (devStateOwner(session.dir).pid === process.pid) rmSync(session.dir, { recursive: true, force: true });
    for (const file of envFiles) rmSync(file, { force: true });
  };
  const dev = new DevSupervisor(io, session, folders, values.user ?? "dev");
  /** Stops without waiting: the host signalled, the throwaway state removed, exit 1. */
  const stopAtOnce = (why: string, host: NodeJS.Signals): never => {
    io.stderr(`toolpact dev: ${why}`);
    dev.hostProcess?.kill(host);
    cleanUp();
    process.exit(1);
  };
  const crashed = (error: unknown) => stopAtOnce(`stopped on an unexpected error: ${(error as Error)?.stack ?? String(error)}`, "SIGTERM");
  process.once("exit", cleanUp);
  process.on("uncaughtException", crashed);
  process.on("unhandledRejection", crashed);
  const stop = listenForStop(["SIGINT", "SIGTERM", "SIGHUP"], () => stopAtOnce("stopped at once", "SIGKILL")); // a draining host ignores further signals
  void dev.start();
  const signal = await stop.first;
  io.stdout(`toolpact dev: ${signal}: stopping`);
  await dev.stop();
  stop.done();
  cleanUp();
  process.off("exit", cleanUp);
  process.off("uncaughtException", crashed);
  process.off("unhandledRejection", crashed);
  io.stdout("toolpact dev: stopped");
  return 0;
}

/** "plugins", "port" and "host" of ./toolpact.config.json; none when it is missing or not JSON (serve reports that). */
function readProjectConfig(cwd: string): ProjectConfig {
  const configFile = path.join(cwd, "toolpact.config.json");
  if (!existsSync(configFile)) return {};
  let config: Record<string, unknown>;
  try {
    const raw: unknown = JSON.parse(readFileSync(configFile, "utf8"));
    if (typeof raw !== "object" || raw === null) return {};
    config = raw as Record<string, unknown>;
  } catch {
    return {};
  }
  const plugins = config.plugins;
  return {
    ...(Array.isArray(plugins) && plugins.length > 0 && plugins.every((entry) => typeof entry === "string") ? { plugins: plugins as string[] } : {}),
    ...(typeof config.port === "number" ? { port: config.port } : {}),
    ...(typeof config.host === "string" && config.host !== "" ? { host: config.host } : {}),
  };
}

/** Binds `host:port` once and lets go: the port to serve on (a free one for 0), or why it cannot be had. */
function bindablePort(host: string, port: number): Promise<number | string> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => {
      const reasons: Record<string, string> = {
        EADDRINUSE: "the port is in use (another toolpact dev or server?)",
        EACCES: "this user may not listen on that port",
        EADDRNOTAVAIL: "that address is not one of this machine's",
      };
      resolve(reasons[error.code ?? ""] ?? `${error.code ?? error.message}`);
    });
    server.listen(port, host, () => {
      const { port: bound } = server.address() as { port: number };
      server.close(() => resolve(bound));
    });
  });
}
