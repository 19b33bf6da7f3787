/**
 * A `toolpact serve` host (startHost with a config file and plugin folders) serving one provider module
 * twice: in the host's process (`com.example.inproc`) and with `"isolation": "process"`
 * (`com.example.isolated`), beside a caller. Calls go through the runtime's whole pipeline as the caller.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Principal } from "@toolpact/runtime";
import { loadHostConfig, startHost, type RunningHost } from "@toolpact/server";
import { ACTOR_ISSUER, mintActorToken } from "../../integration/support/tokens.js";

export const TENANT = "acme";
export const IN_PROCESS = "com.example.inproc";
export const ISOLATED = "com.example.isolated";
export const CALLER = "com.example.assistant";

const object = { type: "object" };
/** The tools both copies of the provider declare. */
const tools = [
  { name: "read-note", effect: "read", inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } },
  { name: "write-note", effect: "write", requiresConfirmation: false, inputSchema: object },
  { name: "strict-output", effect: "read", inputSchema: object, outputSchema: { type: "object", required: ["ok"] } },
  { name: "throws", effect: "read", inputSchema: object },
  { name: "env", effect: "read", inputSchema: object },
  { name: "hog", effect: "read", inputSchema: object, timeoutMs: 15_000 },
  { name: "spin", effect: "read", inputSchema: object, timeoutMs: 800 },
  { name: "crash", effect: "write", requiresConfirmation: false, inputSchema: object },
  { name: "guarded", effect: "read", inputSchema: object },
  { name: "waits", effect: "read", inputSchema: object, timeoutMs: 300 },
  { name: "slow", effect: "read", inputSchema: object },
  { name: "chatty", effect: "read", inputSchema: object },
  { name: "garbage", effect: "read", inputSchema: object, timeoutMs: 5000 },
];

/** The provider module both copies run: the same code, in the host or in a child. */
const PROVIDER_MODULE = `
import { writeFileSync } from "node:fs";
export function activate(sdk) {
  writeFileSync(new URL("./activated-pid", import.meta.url), String(process.pid));
  sdk.tools.provide("read-note", {
    execute: (input, ctx) => ({ id: input.id, text: "note " + input.id, tenant: ctx.tenantId, user: ctx.actor.userId, caller: ctx.callerPluginId, tool: ctx.tool, phase: ctx.phase }),
  });
  sdk.tools.provide("write-note", {
    preview: (input, ctx) => ({ summary: "Write note " + input.id, details: { phase: ctx.phase, effect: ctx.effect } }),
    execute: (input, ctx) => ({ written: input.id, sameOperation: typeof ctx.operationId === "string" && ctx.operationId.length > 0 }),
  });
  sdk.tools.provide("strict-output", { execute: () => ({ nope: 1 }) });
  sdk.tools.provide("throws", { execute: () => { throw new RangeError("the provider's own words"); } });
  sdk.tools.provide("env", { execute: () => ({ names: Object.keys(process.env).sort() }) });
  sdk.tools.provide("hog", { execute: () => { const kept = []; for (;;) kept.push(new Array(100000).fill(kept.length)); } });
  sdk.tools.provide("spin", { execute: () => { for (;;) {} } });
  sdk.tools.provide("crash", { execute: () => process.exit(3) });
  sdk.tools.provide("guarded", { authorize: (input, ctx) => ctx.actor.userId !== "mallory" && ctx.phase === "execute", execute: () => ({ allowed: true }) });
  sdk.tools.provide("waits", {
    execute: (input, ctx) => new Promise((resolve) => ctx.signal.addEventListener("abort", () => {
      writeFileSync(new URL("./aborted-" + input.mark, import.meta.url), "aborted");
      resolve({ late: true });
    })),
  });
  sdk.tools.provide("slow", { execute: () => new Promise((resolve) => setTimeout(() => resolve({ slow: true }), 400)) });
  sdk.tools.provide("chatty", { execute: () => { console.log("hello from the provider"); return { said: true }; } });
  // Not JSON-RPC, then an answer to every request id the host may have used that is not a tool result.
  sdk.tools.provide("garbage", {
    execute: () => {
      process.stdout.write("this is not JSON-RPC\\n");
      for (let id = 0; id < 300; id++) process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, result: { content: "no", structuredContent: [1] } }) + "\\n");
      return new Promise(() => {});
    },
  });
}
`;

/** What a test drives. */
export interface IsolatedHost {
  readonly host: RunningHost;
  /** The isolated copy's plugin folder. */
  readonly isolatedDir: string;
  /** What the host logged, in order. */
  readonly events: Readonly<Record<string, unknown>>[];
  /** The caller acting for `userId` in TENANT. */
  principal(userId?: string): Promise<Principal>;
  /** Resolves when the host logged an event of that name after `from` entries. */
  logged(event: string, from?: number): Promise<Readonly<Record<string, unknown>>>;
  close(): Promise<void>;
}

/** Options of `startIsolatedHost`. */
export interface IsolatedHostOptions {
  /** The isolated copy's `process` settings. */
  readonly process?: Record<string, unknown>;
  /** Variables set in the host's environment until it closes. */
  readonly hostEnv?: Record<string, string>;
  /** The isolated copy's module instead of the shared one. */
  readonly isolatedModule?: string;
  /** Receives what the host logs (also while it starts). */
  readonly onLog?: (entry: Readonly<Record<string, unknown>>) => void;
}

/** Starts the host in a temp dir; the isolated copy's child is running when this resolves. */
export async function startIsolatedHost(options: IsolatedHostOptions = {}): Promise<IsolatedHost> {
  const dir = mkdtempSync(path.join(tmpdir(), "toolpact-isolation-"));
  const writePlugin = (name: string, manifest: object, code: string) => {
    const folder = path.join(dir, "plugins", name);
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, "plugin.json"), JSON.stringify(manifest, null, 2));
    writeFileSync(path.join(folder, "package.json"), JSON.stringify({ type: "module", main: "./main.js" }));
    writeFileSync(path.join(folder, "main.js"), code);
    return folder;
  };
  const provider = { version: "1.0.0", permissions: ["tools:provide"], tools };
  const inProcess = writePlugin("inproc", { id: IN_PROCESS, ...provider }, PROVIDER_MODULE);
  const isolated = writePlugin(
    "isolated",
    { id: ISOLATED, ...provider, isolation: "process", process: { memoryMb: 64, ...options.process } },
    options.isolatedModule ?? PROVIDER_MODULE,
  );
  const caller = writePlugin("assistant", { id: CALLER, version: "1.0.0", permissions: ["tools:call"] }, "export function activate() {}\n");
  writeFileSync(path.join(dir, "toolpact.config.json"), JSON.stringify({ plugins: [inProcess, isolated, caller], actorIssuer: ACTOR_ISSUER, port: 0 }));
  const actorSecret = randomBytes(32);
  const env = {
    TOOLPACT_ADMIN_KEY: randomBytes(32).toString("base64url"),
    TOOLPACT_ACTOR_SECRET: actorSecret.toString("base64"),
    TOOLPACT_SIGNING_KEYS: `k1:${randomBytes(32).toString("base64")}`,
    TOOLPACT_STORAGE_KEY: randomBytes(32).toString("base64"),
  };
  const events: Readonly<Record<string, unknown>>[] = [];
  const waiters = new Set<() => void>();
  const log = (entry: Readonly<Record<string, unknown>>) => {
    events.push(entry);
    options.onLog?.(entry);
    for (const wake of waiters) wake();
  };
  const logger = { info: log, warn: log, error: log };
  const saved = { ...process.env };
  const restoreEnv = () => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  };
  Object.assign(process.env, options.hostEnv);
  let host: RunningHost;
  try {
    const config = await loadHostConfig({ cwd: dir, env: {} });
    // The host's environment, from which passEnv copies; quick restarts keep the tests short.
    host = await startHost({ config, env: { ...process.env, ...env }, logger, upstreamSupervision: { restartDelayMs: { initial: 50, max: 1000 } } });
  } catch (error) {
    restoreEnv();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const { admin } = host.runtime;
  for (const plugin of [IN_PROCESS, ISOLATED, CALLER]) await admin.installPlugin(TENANT, plugin);
  await admin.setPolicy(TENANT, { rules: [{ tools: "*", decision: "allow" }] });
  const { key } = await admin.issuePluginKey(TENANT, CALLER);
  return {
    host,
    isolatedDir: isolated,
    events,
    principal: async (userId = "alice") =>
      host.runtime.authenticate({ pluginKey: key, actorToken: await mintActorToken(actorSecret, { sub: userId, tid: TENANT, expiresIn: 3600 }), via: "http" }),
    logged: (event, from = 0) =>
      new Promise((resolve) => {
        const look = () => {
          const found = events.slice(from).find((entry) => entry.event === event);
          if (found === undefined) return;
          waiters.delete(look);
          resolve(found);
        };
        waiters.add(look);
        look();
      }),
    close: async () => {
      await host.close();
      restoreEnv();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
