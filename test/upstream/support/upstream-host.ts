/**
 * A host (`startHost`, as `toolpact serve` runs it) with one plugin whose tools an upstream MCP server
 * provides, and a caller plugin; calls go in process through the runtime, so every step of the pipeline runs.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client, type Tool } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { ExecuteOptions } from "@toolpact/contract";
import type { Principal, ToolpactRuntime } from "@toolpact/runtime";
import { loadHostConfig } from "../../../packages/server/src/host/config.js";
import { startHost, type RunningHost, type StartHostOptions } from "../../../packages/server/src/host/start-host.js";
import { ACTOR_ISSUER, mintActorToken } from "../../integration/support/tokens.js";

export const UPSTREAM_ID = "mcp.upstream";
export const CALLER_ID = "com.test.agent";
export const TENANT = "t1";

const require = createRequire(import.meta.url);

/** `node <bin>` of a registry MCP server installed as a dev dependency (never an npx download). */
export function registryServer(name: "server-filesystem" | "server-memory" | "server-everything"): string {
  const packageFile = require.resolve(`@modelcontextprotocol/${name}/package.json`);
  const bin = (require(packageFile) as { bin: Record<string, string> }).bin;
  return path.join(path.dirname(packageFile), Object.values(bin)[0]!);
}

/** The v2 SDK fixture server in ./fixtures (2026-07-28 and 2025-11-25). */
export const V2_SERVER = fileURLToPath(new URL("../fixtures/v2-server.mjs", import.meta.url));

/** A log entry the host wrote, with its level. */
export type LogEntry = Readonly<Record<string, unknown>> & { readonly level: "info" | "warn" | "error" };

/** What a test picks from a server's live tools: toolpact name, effect and the rest, by upstream name. */
export type ToolPick = Readonly<Record<string, { name: string; effect: "read" | "write" | "external" } & Readonly<Record<string, unknown>>>>;

const listed = new Map<string, Promise<readonly Tool[]>>();

/** A stdio server's live tools (2025-11-25 handshake), listed once per arguments in this test file. */
function liveTools(args: readonly string[], env: Record<string, string>): Promise<readonly Tool[]> {
  const key = JSON.stringify([args, env]);
  let tools = listed.get(key);
  if (tools === undefined) {
    tools = (async () => {
      const client = new Client({ name: "test", version: "1" });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [...args], env, stderr: "ignore" }));
      try {
        return (await client.listTools()).tools;
      } finally {
        await client.close();
      }
    })();
    listed.set(key, tools);
  }
  return tools;
}

/** Lists a stdio server's tools and declares the picked ones as the manifest would (what `toolpact import mcp` does). */
export async function declareTools(args: readonly string[], pick: ToolPick, env: Record<string, string> = {}): Promise<Record<string, unknown>[]> {
  const tools = await liveTools(args, env);
  return Object.entries(pick).map(([upstreamName, chosen]) => {
    const live = tools.find((tool) => tool.name === upstreamName);
    if (live === undefined) throw new Error(`the server lists no tool ${upstreamName}`);
    return {
      upstreamName,
      inputSchema: live.inputSchema,
      ...(live.outputSchema === undefined ? {} : { outputSchema: live.outputSchema }),
      ...chosen,
    };
  });
}

/** A started world: the host, a principal for the caller, the plugin folder, and the host's log. */
export interface UpstreamWorld {
  readonly host: RunningHost;
  readonly runtime: ToolpactRuntime;
  readonly principal: Principal;
  readonly dir: string;
  readonly pluginDir: string;
  readonly logs: LogEntry[];
  /** Preview, then execute with the preview's token when one is required. */
  confirmAndExecute(tool: string, input: unknown, options?: ExecuteOptions): Promise<unknown>;
  /** Execute with no token. */
  execute(tool: string, input: unknown, options?: ExecuteOptions): Promise<unknown>;
  /** Resolves with the first log entry `match` accepts, waiting at most `ms`. */
  logged(match: (entry: LogEntry) => boolean, ms?: number): Promise<LogEntry>;
  close(): Promise<void>;
}

/** The part of the upstream plugin's manifest a test chooses. */
export interface UpstreamPluginJson {
  readonly upstream: Record<string, unknown>;
  readonly tools: readonly Record<string, unknown>[];
}

/** Options of `startUpstreamWorld`. */
export interface UpstreamWorldOptions {
  /** The upstream plugin's `upstream` and `tools` (id, version and permissions are filled in), or a function of its folder giving them. */
  readonly plugin: UpstreamPluginJson | ((pluginDir: string) => UpstreamPluginJson);
  /** Files written into the plugin folder first (relative name -> content, mode 600). */
  readonly files?: Readonly<Record<string, string>>;
  readonly supervision?: StartHostOptions["upstreamSupervision"];
  /** Runs on the plugin folder once its files are written, before the host starts. */
  readonly beforeStart?: (pluginDir: string) => void;
  /** Extra host environment (passEnv reads it). */
  readonly env?: Readonly<Record<string, string>>;
}

/** Starts a host with the upstream plugin and a caller allowed to confirm in token mode. */
export async function startUpstreamWorld(options: UpstreamWorldOptions): Promise<UpstreamWorld> {
  const dir = mkdtempSync(path.join(tmpdir(), "toolpact-upstream-"));
  const pluginDir = path.join(dir, "upstream");
  const callerDir = path.join(dir, "caller");
  mkdirSync(pluginDir);
  mkdirSync(callerDir);
  for (const [name, content] of Object.entries(options.files ?? {})) {
    mkdirSync(path.dirname(path.join(pluginDir, name)), { recursive: true });
    writeFileSync(path.join(pluginDir, name), content, { mode: 0o600 });
  }
  options.beforeStart?.(pluginDir);
  const chosen = typeof options.plugin === "function" ? options.plugin(pluginDir) : options.plugin;
  const manifest = { id: UPSTREAM_ID, version: "1.0.0", permissions: ["tools:provide"], ...chosen };
  writeFileSync(path.join(pluginDir, "plugin.json"), JSON.stringify(manifest, null, 2));
  writeFileSync(path.join(callerDir, "plugin.json"), JSON.stringify({ id: CALLER_ID, version: "1.0.0", permissions: ["tools:call"] }));
  writeFileSync(
    path.join(dir, "toolpact.config.json"),
    JSON.stringify({ plugins: ["./upstream", "./caller"], actorIssuer: ACTOR_ISSUER, port: 0, database: "./toolpact.db" }),
  );
  const actorSecret = randomBytes(32);
  const env: NodeJS.ProcessEnv = {
    TOOLPACT_ADMIN_KEY: randomBytes(32).toString("base64url"),
    TOOLPACT_ACTOR_SECRET: actorSecret.toString("base64"),
    TOOLPACT_SIGNING_KEYS: `k1:${randomBytes(32).toString("base64")}`,
    TOOLPACT_STORAGE_KEY: randomBytes(32).toString("base64"),
    ...options.env,
  };
  const logs: LogEntry[] = [];
  const waiters = new Set<() => void>();
  const log = (level: LogEntry["level"]) => (entry: Readonly<Record<string, unknown>>) => {
    logs.push({ ...entry, level });
    for (const wake of waiters) wake();
  };
  let host: RunningHost;
  try {
    host = await startHost({
      config: await loadHostConfig({ cwd: dir, env: {} }),
      env,
      logger: { info: log("info"), warn: log("warn"), error: log("error") },
      upstreamSupervision: { restartDelayMs: { initial: 100, max: 1000 }, connectTimeoutMs: 30_000, ...options.supervision },
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const details = (error as { details?: readonly string[] }).details ?? [];
    if (details.length > 0) (error as Error).message += `\n${details.join("\n")}`;
    throw error;
  }
  const { runtime } = host;
  await runtime.admin.installPlugin(TENANT, UPSTREAM_ID);
  await runtime.admin.installPlugin(TENANT, CALLER_ID);
  await runtime.admin.setPolicy(TENANT, { rules: [{ tools: "*", decision: "allow", mode: "token" }], trustedConfirmationUis: [CALLER_ID] });
  const { key } = await runtime.admin.issuePluginKey(TENANT, CALLER_ID);
  const principal = await runtime.authenticate({ pluginKey: key, actorToken: await mintActorToken(actorSecret, { tid: TENANT }) });
  const ref = (tool: string) => ({ providerId: UPSTREAM_ID, tool });

  return {
    host,
    runtime,
    principal,
    dir,
    pluginDir,
    logs,
    execute: async (tool, input, executeOptions = {}) => (await runtime.execute(principal, ref(tool), input, executeOptions)).result,
    confirmAndExecute: async (tool, input, executeOptions = {}) => {
      const preview = await runtime.preview(principal, ref(tool), input);
      const token = preview.confirmation.required && preview.confirmation.mode === "token" ? preview.confirmation.token : undefined;
      return (await runtime.execute(principal, ref(tool), input, { ...executeOptions, ...(token === undefined ? {} : { confirmationToken: token }) })).result;
    },
    logged: (match, ms = 30_000) =>
      new Promise((resolve, reject) => {
        const look = () => {
          const found = logs.find(match);
          if (found === undefined) return false;
          waiters.delete(look);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(look);
          reject(new Error(`no such log entry within ${ms} ms; logged: ${JSON.stringify(logs.map((entry) => entry.event))}`));
        }, ms);
        if (!look()) waiters.add(look);
      }),
    close: async () => {
      await host.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The code of a rejected call ("ran" when it resolved). */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => "ran",
    (error: { code?: string }) => error.code ?? String(error),
  );
}
