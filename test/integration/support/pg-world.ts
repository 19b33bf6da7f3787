/**
 * The world of the PostgreSQL host tests: a shared plugin folder (a provider that logs every invocation
 * to a file and can be held until released, and a caller), config files, secrets, and admin and caller
 * helpers that speak the HTTP wire format.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ACTOR_ISSUER, mintActorToken } from "./tokens.js";
import { callerHeaders, mutate, ok, query, type WireResponse } from "./wire.js";

export const PROVIDER = "com.test.pg";
export const CALLER = "com.test.pg-caller";
export const PUBLIC_URL = "https://toolpact.test.example";

/** `charge` needs confirmation; `sync` does not; `sync-idempotent` is re-invoked by recovery when policy allows. */
export const TOOLS = ["charge", "sync", "sync-idempotent"] as const;
export type ToolName = (typeof TOOLS)[number];
export const fullName = (tool: ToolName) => `${PROVIDER}:${tool}@1`;

const input = {
  type: "object",
  properties: { title: { type: "string", maxLength: 200 }, hold: { type: "string", pattern: "^[a-z0-9-]{1,40}$" } },
  required: ["title"],
  additionalProperties: false,
};

/** Writes the provider and caller plugin folders under `root/plugins`; returns their paths. */
export function writePlugins(root: string): { provider: string; caller: string } {
  const provider = path.join(root, "plugins", "provider");
  const caller = path.join(root, "plugins", "caller");
  mkdirSync(provider, { recursive: true });
  mkdirSync(caller, { recursive: true });
  writeFileSync(
    path.join(provider, "plugin.json"),
    JSON.stringify({
      id: PROVIDER,
      version: "1.0.0",
      permissions: ["tools:provide"],
      tools: [
        { name: "charge", effect: "write", recovery: "none", timeoutMs: 60_000, inputSchema: input },
        { name: "sync", effect: "write", requiresConfirmation: false, recovery: "none", timeoutMs: 60_000, inputSchema: input },
        { name: "sync-idempotent", effect: "write", requiresConfirmation: false, recovery: "idempotent", timeoutMs: 60_000, inputSchema: input },
      ],
    }),
  );
  writeFileSync(path.join(provider, "package.json"), JSON.stringify({ type: "module", main: "./index.js" }));
  // Every process appends one line per invocation (O_APPEND: lines from processes do not interleave).
  writeFileSync(
    path.join(provider, "index.js"),
    `import { appendFileSync, existsSync } from "node:fs";
const log = new URL("./invocations.jsonl", import.meta.url);
async function heldUntilReleased(hold, signal) {
  const release = new URL("./release-" + hold, import.meta.url);
  while (!existsSync(release)) {
    if (signal.aborted) throw new Error("aborted while held");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
export function activate(sdk) {
  for (const name of ${JSON.stringify(TOOLS)}) {
    sdk.tools.provide(name, {
      preview: (input) => ({ summary: name + " " + JSON.stringify(input.title), details: { title: input.title } }),
      execute: async (input, ctx) => {
        appendFileSync(log, JSON.stringify({ tool: name, title: input.title, tenantId: ctx.tenantId, operationId: ctx.operationId, pid: process.pid }) + "\\n");
        if (input.hold !== undefined) await heldUntilReleased(input.hold, ctx.signal);
        return { done: true, title: input.title, by: process.pid };
      },
    });
  }
}
`,
  );
  writeFileSync(path.join(caller, "plugin.json"), JSON.stringify({ id: CALLER, version: "1.0.0", permissions: ["tools:call"] }));
  writeFileSync(path.join(caller, "package.json"), JSON.stringify({ type: "module", main: "./index.js" }));
  writeFileSync(path.join(caller, "index.js"), "export function activate() {}\n");
  return { provider, caller };
}

/** One provider invocation, as the plugin logged it. */
export interface Invocation {
  readonly tool: ToolName;
  readonly title: string;
  readonly tenantId: string;
  readonly operationId: string;
  readonly pid: number;
}

/** Every invocation logged so far, by any process, optionally of one tenant. */
export function invocations(root: string, tenantId?: string): Invocation[] {
  const file = path.join(root, "plugins", "provider", "invocations.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Invocation)
    .filter((entry) => tenantId === undefined || entry.tenantId === tenantId);
}

/** Lets every execute held with `hold` return (now and later). */
export function release(root: string, hold: string): void {
  writeFileSync(path.join(root, "plugins", "provider", `release-${hold}`), "");
}

/** The secrets every instance of one deployment shares, as environment variables. */
export interface DeploymentSecrets {
  readonly env: Record<string, string>;
  readonly actorSecret: Uint8Array;
  readonly adminKey: string;
}

export function makeDeploymentSecrets(): DeploymentSecrets {
  const actorSecret = new Uint8Array(randomBytes(32));
  const adminKey = randomBytes(32).toString("base64url");
  return {
    actorSecret,
    adminKey,
    env: {
      TOOLPACT_ADMIN_KEY: adminKey,
      TOOLPACT_ACTOR_SECRET: Buffer.from(actorSecret).toString("base64"),
      TOOLPACT_SIGNING_KEYS: `k1:${randomBytes(32).toString("base64")}`,
      TOOLPACT_STORAGE_KEY: randomBytes(32).toString("base64"),
    },
  };
}

/** Writes `<root>/<name>` as a config with the plugins and fast lease recovery; returns its path. */
export function writeConfig(root: string, name: string, config: Record<string, unknown>): string {
  const file = path.join(root, name);
  writeFileSync(
    file,
    JSON.stringify({
      plugins: ["./plugins/provider", "./plugins/caller"],
      port: 0,
      actorIssuer: ACTOR_ISSUER,
      publicUrl: PUBLIC_URL,
      ...config,
    }),
  );
  return file;
}

/** The error code of a wire response, or undefined for a success. */
export function codeOf(response: WireResponse): string | undefined {
  return response.body.error?.data.toolpactCode as string | undefined;
}

/** The operation id an error carries, if any. */
export function operationIdOf(response: WireResponse): string | undefined {
  return (response.body.error?.data.toolpactData as { operationId?: string } | undefined)?.operationId;
}

/** Admin calls against one instance. */
export function adminOf(url: string, adminKey: string) {
  const headers = { authorization: `Bearer ${adminKey}` };
  return {
    mutate: async <T = unknown>(procedure: string, input: unknown) => ok<T>(await mutate(url, `admin.${procedure}`, input, headers)),
    query: async <T = unknown>(procedure: string, input: unknown) => ok<T>(await query(url, `admin.${procedure}`, input, headers)),
  };
}

/** Installs both plugins for `tenantId`, sets its policy (and recovery policy), and returns caller headers. */
export async function setUpTenant(
  url: string,
  secrets: DeploymentSecrets,
  tenantId: string,
  options: { policy: Record<string, unknown>; recovery?: Record<string, unknown>; userId?: string },
): Promise<Record<string, string>> {
  const admin = adminOf(url, secrets.adminKey);
  for (const pluginId of [PROVIDER, CALLER]) await admin.mutate("installPlugin", { tenantId, pluginId });
  await admin.mutate("setPolicy", { tenantId, policy: options.policy });
  if (options.recovery !== undefined) await admin.mutate("setRecoveryPolicy", { tenantId, policy: options.recovery });
  const { key } = await admin.mutate<{ key: string }>("issuePluginKey", { tenantId, pluginId: CALLER });
  const actor = await mintActorToken(secrets.actorSecret, { tid: tenantId, sub: options.userId ?? "user-1", expiresIn: 3600 });
  return callerHeaders(key, actor);
}

/** One activity event as `admin.listActivity` returns it. */
export interface WireActivityEvent {
  readonly kind: string;
  readonly phase: string;
  readonly outcome: string;
  readonly tool?: string;
  readonly errorCode?: string;
  readonly operationId?: string;
  readonly confirmationId?: string;
}

/** Every activity event of `tenantId`, page by page through `admin.listActivity`. */
export async function allActivity(url: string, adminKey: string, tenantId: string): Promise<WireActivityEvent[]> {
  const admin = adminOf(url, adminKey);
  const events: WireActivityEvent[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const answer = await admin.query<{ events: WireActivityEvent[]; nextCursor?: string }>("listActivity", {
      tenantId,
      limit: 50,
      ...(cursor === undefined ? {} : { cursor }),
    });
    events.push(...answer.events);
    if (answer.nextCursor === undefined) return events;
    cursor = answer.nextCursor;
  }
  throw new Error("more than 100 pages of activity");
}

/** Polls `probe` every 50 ms until it returns a value, or fails naming `what` after `timeoutMs`. */
export async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}
