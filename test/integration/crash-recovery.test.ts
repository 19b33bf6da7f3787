/**
 * A `toolpact serve` process is SIGKILLed while a provider's execute runs; a new process on the same
 * database settles the operations whose lease expired: a `recovery: "none"` tool becomes `unknown`
 * with no second effect, and an `idempotent` one is re-invoked exactly once with the same operation
 * id because the tenant's recovery policy allows it. The plugin writes every invocation to a file.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { killHard, pluginDir, requireBuiltCli, startServe, type ServeProcess } from "./support/serve-process.js";
import { ACTOR_ISSUER, mintActorToken } from "./support/tokens.js";
import { callerHeaders, mutate, ok, query } from "./support/wire.js";

requireBuiltCli();

const PROVIDER = "com.test.crash";
const CALLER = "com.test.crash-caller";

let dir: string;
const running: ServeProcess[] = [];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-crash-"));
});

afterEach(async () => {
  for (const serve of running.splice(0)) await killHard(serve);
  rmSync(dir, { recursive: true, force: true });
});

const titleInput = { type: "object", properties: { title: { type: "string" } }, required: ["title"], additionalProperties: false };

/** The provider: each execute appends `{ tool, operationId, pid }` to invocations.jsonl, then blocks until `release` exists. */
function writeProviderPlugin(): void {
  const folder = pluginDir(dir, "crash");
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    path.join(folder, "plugin.json"),
    JSON.stringify({
      id: PROVIDER,
      version: "1.0.0",
      permissions: ["tools:provide"],
      tools: [
        { name: "charge-once", effect: "write", requiresConfirmation: false, recovery: "none", timeoutMs: 60_000, inputSchema: titleInput },
        { name: "sync-record", effect: "write", requiresConfirmation: false, recovery: "idempotent", timeoutMs: 60_000, inputSchema: titleInput },
      ],
    }),
  );
  writeFileSync(path.join(folder, "package.json"), JSON.stringify({ type: "module", main: "./index.js" }));
  writeFileSync(
    path.join(folder, "index.js"),
    `import { appendFileSync, existsSync } from "node:fs";
const invocations = new URL("./invocations.jsonl", import.meta.url);
const release = new URL("./release", import.meta.url);
async function blockUntilReleased() {
  while (!existsSync(release)) await new Promise((resolve) => setTimeout(resolve, 20));
}
export function activate(sdk) {
  for (const name of ["charge-once", "sync-record"]) {
    sdk.tools.provide(name, {
      execute: async (input, ctx) => {
        appendFileSync(invocations, JSON.stringify({ tool: name, operationId: ctx.operationId, pid: process.pid }) + "\\n");
        await blockUntilReleased();
        return { done: true, title: input.title };
      },
    });
  }
}
`,
  );
}

function writeCallerPlugin(): void {
  const folder = pluginDir(dir, "caller");
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, "plugin.json"), JSON.stringify({ id: CALLER, version: "1.0.0", permissions: ["tools:call"] }));
  writeFileSync(path.join(folder, "package.json"), JSON.stringify({ type: "module", main: "./index.js" }));
  writeFileSync(path.join(folder, "index.js"), "export function activate() {}\n");
}

interface Invocation {
  readonly tool: string;
  readonly operationId: string;
  readonly pid: number;
}

function invocations(): Invocation[] {
  const file = path.join(pluginDir(dir, "crash"), "invocations.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Invocation);
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe("SIGKILL during a provider's execute, then a restart on the same database", () => {
  it("settles: no second effect for a recovery-none tool (unknown), one re-invocation with the same operation id for an idempotent one", async () => {
    writeProviderPlugin();
    writeCallerPlugin();
    const actorSecret = randomBytes(32);
    const adminKey = randomBytes(32).toString("base64url");
    const env = {
      TOOLPACT_ADMIN_KEY: adminKey,
      TOOLPACT_ACTOR_SECRET: actorSecret.toString("base64"),
      TOOLPACT_SIGNING_KEYS: `k1:${randomBytes(32).toString("base64")}`,
      TOOLPACT_STORAGE_KEY: randomBytes(32).toString("base64"),
    };
    writeFileSync(
      path.join(dir, "toolpact.config.json"),
      JSON.stringify({
        plugins: ["./plugins/crash", "./plugins/caller"],
        database: "./data/toolpact.db",
        port: 0,
        actorIssuer: ACTOR_ISSUER,
        limits: { leaseMs: 1000, recoveryIntervalMs: 200 },
      }),
    );
    const serve = async () => {
      const started = await startServe({ cwd: dir, args: [], env });
      running.push(started);
      return started;
    };

    const first = await serve();
    const admin = { authorization: `Bearer ${adminKey}` };
    for (const pluginId of [PROVIDER, CALLER]) ok(await mutate(first.url, "admin.installPlugin", { tenantId: "t1", pluginId }, admin));
    ok(await mutate(first.url, "admin.setPolicy", { tenantId: "t1", policy: { rules: [{ tools: `${PROVIDER}:*`, decision: "allow" }] } }, admin));
    ok(
      await mutate(
        first.url,
        "admin.setRecoveryPolicy",
        { tenantId: "t1", policy: { rules: [{ tools: `${PROVIDER}:sync-record`, retry: "reinvoke", maxAttempts: 1 }] } },
        admin,
      ),
    );
    const { key } = ok<{ key: string }>(await mutate(first.url, "admin.issuePluginKey", { tenantId: "t1", pluginId: CALLER }, admin));
    const headers = callerHeaders(key, await mintActorToken(new Uint8Array(actorSecret), { sub: "u-crash", expiresIn: 3600 }));

    // Both executes block inside the provider; the calls never get an answer from this process.
    const lost = ["charge-once", "sync-record"].map((tool) =>
      mutate(first.url, "tools.execute", { ref: { providerId: PROVIDER, tool }, input: { title: tool } }, headers).then(
        (response) => ({ response }),
        (error: unknown) => ({ error }),
      ),
    );
    const started = await until("both invocations", () => (invocations().length === 2 ? invocations() : undefined));
    await killHard(first);
    for (const outcome of await Promise.all(lost)) expect("error" in outcome, JSON.stringify(outcome)).toBe(true);
    const charge = started.find((entry) => entry.tool === "charge-once")!;
    const sync = started.find((entry) => entry.tool === "sync-record")!;
    expect(charge.operationId).not.toBe(sync.operationId);

    // From now on the provider returns at once: a re-invocation completes.
    writeFileSync(path.join(pluginDir(dir, "crash"), "release"), "");
    const second = await serve();
    const stateOf = async (operationId: string) =>
      ok<{ state: string; errorCode?: string }>(await query(second.url, "tools.operation", { operationId }, headers));
    const chargeState = await until("charge-once to settle", async () => {
      const view = await stateOf(charge.operationId);
      return view.state === "running" ? undefined : view;
    });
    const syncState = await until("sync-record to settle", async () => {
      const view = await stateOf(sync.operationId);
      return view.state === "running" ? undefined : view;
    });
    expect(chargeState.state).toBe("unknown");
    expect(syncState.state).toBe("succeeded");

    // Several more recovery rounds pass: still exactly one re-invocation, and none for charge-once.
    await sleep(1_500);
    const all = invocations();
    expect(all.filter((entry) => entry.tool === "charge-once")).toEqual([charge]);
    const syncRuns = all.filter((entry) => entry.tool === "sync-record");
    expect(syncRuns).toHaveLength(2);
    expect(syncRuns[1]!.operationId).toBe(sync.operationId);
    expect(syncRuns[1]!.pid).toBe(second.pid);

    const activity = ok<{ events: { kind: string; phase: string; outcome: string; operationId?: string }[] }>(
      await query(second.url, "admin.listActivity", { tenantId: "t1", limit: 100 }, admin),
    );
    const recoveries = activity.events.filter((event) => event.kind === "recovery");
    expect(recoveries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ operationId: charge.operationId, outcome: "unknown" }),
        expect.objectContaining({ operationId: sync.operationId, outcome: "succeeded" }),
      ]),
    );
  });
});
