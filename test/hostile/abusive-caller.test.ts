/**
 * One abusive caller beside a well-behaved one, against a real `toolpact serve` process on SQLite and on
 * PostgreSQL. The abuser holds 3,000 `confirmations.wait` long-polls open at once and, all the while,
 * sends bodies of deeply nested arrays eight at a time (the two findings of the outside review: the pool
 * exhausted by long-polls, the event loop blocked by parsing). The well-behaved caller, in another tenant,
 * makes sequential durable calls; its p99 under the abuse stays within 3x of its p99 without it, the
 * abuser's excess is refused with RATE_LIMITED and Retry-After, and /healthz keeps answering.
 *
 * Latency is measured on this shared 2-core machine, so the unloaded p99 has a floor (FLOOR_MS): below it,
 * a ratio measures timer noise, not the server. What this test guards against is seconds, not microseconds.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, postgresSkipReason, type TestDatabase } from "../integration/support/postgres.js";
import { PROVIDER, makeDeploymentSecrets, setUpTenant, writeConfig, writePlugins, type DeploymentSecrets } from "../integration/support/pg-world.js";
import { killHard, requireBuiltCli, startServe, type ServeProcess } from "../integration/support/serve-process.js";
import { mutate, ok } from "../integration/support/wire.js";

requireBuiltCli();
const pgSkip = await postgresSkipReason("the abusive-caller load test on PostgreSQL");

/** Calls the well-behaved caller makes per phase. */
const CALLS = 150;
/** Long-polls the abuser opens at once. */
const WAITS = 3_000;
/** Deep bodies in flight at once, and their nesting. */
const DEEP_IN_FLIGHT = 8;
const DEEP_NESTING = 400_000;
/** Below this, a p99 on this machine is noise. */
const FLOOR_MS = 15;

let root: string;
let db: TestDatabase | undefined;
const children: ServeProcess[] = [];

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), "toolpact-hostile-"));
  writePlugins(root);
  if (pgSkip === undefined) db = await openTestDatabase();
});

afterAll(async () => {
  await Promise.all(children.map((child) => killHard(child)));
  await db?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

const allowSync = { rules: [{ tools: `${PROVIDER}:sync`, decision: "allow" }, { tools: `${PROVIDER}:charge`, decision: "confirm", mode: "platform" }] };
const syncRef = { providerId: PROVIDER, tool: "sync" };

function p99(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
}

/** `CALLS` sequential durable calls; returns each one's latency in ms. */
async function wellBehaved(url: string, headers: Record<string, string>, phase: string): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    ok(await mutate(url, "tools.execute", { ref: syncRef, input: { title: `${phase}-${i}` } }, headers));
    latencies.push(performance.now() - started);
  }
  return latencies;
}

interface Abuse {
  /** Stops the deep-body loop and waits for every request to settle. */
  stop(): Promise<void>;
  /** Answers by HTTP status. */
  readonly statuses: Map<number, number>;
  /** Retry-After values seen on 429 answers. */
  readonly retryAfter: string[];
}

/** Opens WAITS long-polls on one pending confirmation and sends deep bodies until stopped. */
async function abuse(url: string, headers: Record<string, string>): Promise<Abuse> {
  const statuses = new Map<number, number>();
  const retryAfter: string[] = [];
  const record = (response: Response) => {
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    const header = response.headers.get("retry-after");
    if (response.status === 429 && header !== null) retryAfter.push(header);
  };
  const preview = ok<{ confirmation: { requestId: string } }>(
    await mutate(url, "tools.preview", { ref: { providerId: PROVIDER, tool: "charge" }, input: { title: "abuse" } }, headers),
  );
  const waitUrl = `${url}/trpc/confirmations.wait?input=${encodeURIComponent(JSON.stringify({ requestId: preview.confirmation.requestId, timeoutMs: 20_000 }))}`;
  const controller = new AbortController();
  const waits = Array.from({ length: WAITS }, () =>
    fetch(waitUrl, { headers, signal: controller.signal }).then(
      async (response) => {
        record(response);
        await response.arrayBuffer();
      },
      () => undefined,
    ),
  );
  const deepBody = `{"ref":{"providerId":"${PROVIDER}","tool":"sync"},"input":{"title":${"[".repeat(DEEP_NESTING)}${"]".repeat(DEEP_NESTING)}}}`;
  let running = true;
  const deepLoops = Array.from({ length: DEEP_IN_FLIGHT }, async () => {
    // Bounded: at most 10 s or 200 bodies per loop, whichever comes first.
    const deadline = Date.now() + 10_000;
    for (let sent = 0; running && sent < 200 && Date.now() < deadline; sent++) {
      try {
        const response = await fetch(`${url}/trpc/tools.execute`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: deepBody });
        record(response);
        await response.arrayBuffer();
      } catch {
        // A refused or reset connection is an answer too: the server chose not to read the body.
      }
    }
  });
  return {
    statuses,
    retryAfter,
    stop: async () => {
      running = false;
      await Promise.all(deepLoops);
      controller.abort();
      await Promise.all(waits);
    },
  };
}

async function healthzMs(url: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${url}/healthz`);
  await response.arrayBuffer();
  expect(response.status).toBe(200);
  return performance.now() - started;
}

async function runScenario(server: ServeProcess, secrets: DeploymentSecrets): Promise<void> {
  const good = await setUpTenant(server.url, secrets, "tenant-good", { policy: allowSync });
  const bad = await setUpTenant(server.url, secrets, "tenant-bad", { policy: allowSync });

  await wellBehaved(server.url, good, "warm-up");
  const unloaded = p99(await wellBehaved(server.url, good, "unloaded"));

  const abuser = await abuse(server.url, bad);
  let loaded: number;
  let health: number;
  try {
    // Let the long-polls land and the deep bodies start before measuring.
    await new Promise((resolve) => setTimeout(resolve, 300));
    loaded = p99(await wellBehaved(server.url, good, "loaded"));
    health = await healthzMs(server.url);
  } finally {
    await abuser.stop();
  }

  const summary = `unloaded p99 ${unloaded.toFixed(1)} ms, loaded p99 ${loaded.toFixed(1)} ms, /healthz ${health.toFixed(1)} ms, abuser's answers ${JSON.stringify(Object.fromEntries(abuser.statuses))}`;
  console.log(summary);
  expect(loaded, summary).toBeLessThanOrEqual(3 * Math.max(unloaded, FLOOR_MS));
  expect(health, summary).toBeLessThan(3 * Math.max(unloaded, FLOOR_MS));
  // The excess is refused as RATE_LIMITED with a Retry-After, never a 5xx.
  expect(abuser.statuses.get(429) ?? 0, summary).toBeGreaterThan(0);
  expect(abuser.retryAfter.length, summary).toBeGreaterThan(0);
  expect(abuser.retryAfter.every((value) => /^\d+$/.test(value)), summary).toBe(true);
  const serverErrors = [...abuser.statuses].filter(([status]) => status >= 500).reduce((n, [, count]) => n + count, 0);
  expect(serverErrors, summary).toBe(0);
}

describe("one abusive caller cannot take the server from the others", () => {
  it("on SQLite", async () => {
    const secrets = makeDeploymentSecrets();
    const config = writeConfig(root, "sqlite.config.json", { database: path.join(root, "hostile.db") });
    const server = await startServe({ cwd: root, args: ["--config", config], env: secrets.env, timeoutMs: 30_000 });
    children.push(server);
    await runScenario(server, secrets);
  }, 120_000);

  it.skipIf(pgSkip !== undefined)("on PostgreSQL", async () => {
    const secrets = makeDeploymentSecrets();
    const config = writeConfig(root, "pg.config.json", { databaseOptions: { schema: db!.freshSchema(), poolSize: 8 } });
    const server = await startServe({ cwd: root, args: ["--config", config], env: { ...secrets.env, TOOLPACT_DATABASE_URL: db!.url }, timeoutMs: 30_000 });
    children.push(server);
    await runScenario(server, secrets);
  }, 120_000);
});
