/**
 * PostgreSQL from the outside: real `toolpact serve` processes (the built CLI) on one database, each
 * run in fresh schemas that are dropped afterwards. Three instances share a database and a plugin
 * folder whose provider logs every invocation to a file: a token executes once, an idempotency key runs
 * once, a confirmation decided on one instance answers a wait on another, and a SIGKILLed instance's
 * operations are settled by the others with nothing lost. A TCP proxy between one server and PostgreSQL
 * cuts or stalls the link: calls answer STORE_UNAVAILABLE within 2 s, no provider runs without a ledger
 * row, and the same process recovers. `toolpact migrate` runs concurrently, and the pruning job applies
 * retention. Needs TOOLPACT_TEST_PG_URL; without it the file is skipped with one line saying so.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTcpProxy, type TcpProxy } from "@toolpact/runtime/testing";
import { fetchPage, postDecision, signIn } from "./support/confirm-page.js";
import { openTestDatabase, postgresSkipReason, urlVia, type TestDatabase } from "./support/postgres.js";
import {
  CALLER,
  PROVIDER,
  PUBLIC_URL,
  allActivity,
  codeOf,
  fullName,
  invocations,
  makeDeploymentSecrets,
  operationIdOf,
  release,
  setUpTenant,
  until,
  writeConfig,
  writePlugins,
  type ToolName,
  type WireActivityEvent,
} from "./support/pg-world.js";
import { CLI_BIN, killHard, requireBuiltCli, startServe, type ServeProcess } from "./support/serve-process.js";
import { mutate, ok, query, type WireResponse } from "./support/wire.js";

const skip = await postgresSkipReason("PostgreSQL host tests (three toolpact serve instances, outage, migrate, pruning)");
if (skip === undefined) requireBuiltCli();

let db: TestDatabase;
let root: string;
const children: ServeProcess[] = [];
const proxies: TcpProxy[] = [];
/** A vitest worker that dies still takes its servers with it. */
const killAllNow = () => {
  for (const serve of children) if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill("SIGKILL");
};

beforeAll(async () => {
  if (skip !== undefined) return;
  process.once("exit", killAllNow);
  root = mkdtempSync(path.join(tmpdir(), "toolpact-pg-"));
  writePlugins(root);
  db = await openTestDatabase();
});

afterAll(async () => {
  if (skip !== undefined) return;
  try {
    await Promise.all(children.map((serve) => killHard(serve)));
    await Promise.all(proxies.map((proxy) => proxy.close()));
  } finally {
    process.off("exit", killAllNow);
    await db?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  }
});

/** Starts `toolpact serve --config <file>` in the test folder; it is SIGKILLed in afterAll at the latest. */
async function serve(configFile: string, env: Record<string, string>): Promise<ServeProcess> {
  const started = await startServe({ cwd: root, args: ["--config", configFile], env, timeoutMs: 30_000 });
  children.push(started);
  return started;
}

const ref = (tool: ToolName) => ({ providerId: PROVIDER, tool });

function execute(url: string, headers: Record<string, string>, tool: ToolName, body: Record<string, unknown>): Promise<WireResponse> {
  return mutate(url, "tools.execute", { ref: ref(tool), ...body }, headers);
}

/** `SELECT ... FROM <schema>.<table>`: rows of one schema. */
const inSchema = (schema: string, text: string) => text.replaceAll("{s}", schema);

interface OperationRow {
  readonly operation_id: string;
  readonly state: string;
  readonly tool: string;
  readonly lease_owner: string;
}

function operationsOf(schema: string, tenantId: string): Promise<OperationRow[]> {
  return db.rows<OperationRow>(
    inSchema(schema, "SELECT operation_id, state, tool, lease_owner FROM {s}.operations WHERE tenant_id = $1 ORDER BY operation_id"),
    [tenantId],
  );
}

const executeEvents = (events: readonly WireActivityEvent[], tool: ToolName) =>
  events.filter((event) => event.kind === "call" && event.phase === "execute" && event.tool === fullName(tool));

const allowAll = { rules: [{ tools: `${PROVIDER}:*`, decision: "allow" }] };

describe.skipIf(skip !== undefined)("three toolpact serve instances on one PostgreSQL database", () => {
  const secrets = makeDeploymentSecrets();
  let schema: string;
  let instances: ServeProcess[] = [];

  beforeAll(async () => {
    schema = db.freshSchema();
    const config = writeConfig(root, "instances.config.json", {
      databaseOptions: { schema, poolSize: 8 },
      limits: { leaseMs: 1000, recoveryIntervalMs: 200 },
    });
    // All three at once on an empty schema: their start-up migrations race.
    instances = await Promise.all([0, 1, 2].map(() => serve(config, { ...secrets.env, TOOLPACT_DATABASE_URL: db.url })));
  });

  it("start together on a fresh schema: each migration is applied once, each instance names itself", async () => {
    const versions = await db.rows<{ version: number; n: string }>(
      inSchema(schema, "SELECT version, count(*) AS n FROM {s}.toolpact_migrations GROUP BY version ORDER BY version"),
    );
    expect(versions.length).toBeGreaterThan(0);
    for (const row of versions) expect(Number(row.n), `migration ${row.version}`).toBe(1);

    const ids = instances.map((instance) => {
      const match = /instance (\S+) on PostgreSQL (\S+) \(schema (\w+)\)/.exec(instance.output());
      expect(match, instance.output()).not.toBeNull();
      expect(match![3]).toBe(schema);
      return match![1]!;
    });
    expect(new Set(ids).size).toBe(3);
    // Each instance's connections carry its id (application_name), so operators can tell them apart.
    const names = await db.rows<{ application_name: string }>(
      "SELECT DISTINCT application_name FROM pg_stat_activity WHERE application_name = ANY($1::text[])",
      [ids.map((id) => `toolpact/${id}`.slice(0, 63))],
    );
    expect(names).toHaveLength(3);
  });

  it("60 concurrent executes of one confirmation token across the three: one invocation, 59 CONFIRMATION_USED, one operation, 60 events", async () => {
    const tenantId = "t-token";
    const [a] = instances;
    const headers = await setUpTenant(a!.url, secrets, tenantId, {
      policy: { rules: [{ tools: `${PROVIDER}:*`, decision: "confirm", mode: "token" }], trustedConfirmationUis: [CALLER] },
    });
    const input = { title: "charge once" };
    const preview = ok<{ confirmation: { required: boolean; mode: string; token: string } }>(
      await mutate(a!.url, "tools.preview", { ref: ref("charge"), input }, headers),
    );
    expect(preview.confirmation).toMatchObject({ required: true, mode: "token" });
    const token = preview.confirmation.token;

    const responses = await Promise.all(
      Array.from({ length: 60 }, (_, i) => execute(instances[i % 3]!.url, headers, "charge", { input, confirmationToken: token })),
    );
    const wins = responses.filter((response) => codeOf(response) === undefined);
    expect(wins, JSON.stringify(responses.map(codeOf))).toHaveLength(1);
    const winner = ok<{ operationId: string; result: { title: string } }>(wins[0]!);
    expect(winner.result.title).toBe("charge once");
    const used = responses.filter((response) => codeOf(response) === "CONFIRMATION_USED");
    expect(used).toHaveLength(59);
    for (const response of used) {
      expect(response.status).toBe(409);
      // The bound caller learns which operation used its token.
      expect(operationIdOf(response)).toBe(winner.operationId);
    }
    // Every instance refused the token at least 19 times: single use is held in the database, not in memory.
    for (let k = 0; k < 3; k++) {
      expect(responses.filter((response, i) => i % 3 === k && codeOf(response) === "CONFIRMATION_USED").length).toBeGreaterThanOrEqual(19);
    }

    expect(invocations(root, tenantId)).toEqual([expect.objectContaining({ tool: "charge", operationId: winner.operationId })]);
    expect(await operationsOf(schema, tenantId)).toEqual([expect.objectContaining({ operation_id: winner.operationId, state: "succeeded" })]);
    expect(await db.count(inSchema(schema, "SELECT count(*) AS n FROM {s}.consumed_tokens WHERE tenant_id = $1"), [tenantId])).toBe(1);

    const events = executeEvents(await allActivity(instances[2]!.url, secrets.adminKey, tenantId), "charge");
    expect(events).toHaveLength(60);
    expect(events.filter((event) => event.outcome === "succeeded")).toEqual([expect.objectContaining({ operationId: winner.operationId })]);
    expect(events.filter((event) => event.errorCode === "CONFIRMATION_USED")).toHaveLength(59);
    expect(await db.count(inSchema(schema, "SELECT count(*) AS n FROM {s}.activity WHERE tenant_id = $1 AND phase = 'execute'"), [tenantId])).toBe(60);
  });

  it("60 concurrent executes with one idempotency key across the three: one invocation; the rest OPERATION_IN_PROGRESS while it runs, the recorded result after", async () => {
    const tenantId = "t-idem";
    const headers = await setUpTenant(instances[0]!.url, secrets, tenantId, { policy: allowAll });
    const input = { title: "sync once", hold: "idem" };
    const idempotencyKey = "order-7";

    // Round 1: the provider holds the winning call until released, so every other call finds it running.
    let answered = 0;
    const round1 = Array.from({ length: 60 }, (_, i) => execute(instances[i % 3]!.url, headers, "sync", { input, idempotencyKey }).finally(() => answered++));
    for (const call of round1) call.catch(() => undefined); // awaited below; a failure before that is not unhandled
    await until("one invocation and 59 answers", () => (invocations(root, tenantId).length === 1 && answered >= 59 ? true : undefined));
    await sleep(200);
    expect(answered).toBe(59);
    release(root, "idem");
    const first = await Promise.all(round1);
    const wins = first.filter((response) => codeOf(response) === undefined);
    expect(wins, JSON.stringify(first.map(codeOf))).toHaveLength(1);
    const winner = ok<{ operationId: string; result: { by: number } }>(wins[0]!);
    const inProgress = first.filter((response) => codeOf(response) === "OPERATION_IN_PROGRESS");
    expect(inProgress).toHaveLength(59);
    for (const response of inProgress) {
      expect(response.status).toBe(409);
      expect(operationIdOf(response)).toBe(winner.operationId);
    }

    // Round 2, after it settled: every instance answers the recorded outcome, the provider does not run.
    const second = await Promise.all(Array.from({ length: 60 }, (_, i) => execute(instances[i % 3]!.url, headers, "sync", { input, idempotencyKey })));
    for (const response of second) expect(ok(response)).toEqual(winner);
    // The same key with another input is a conflict, not a replay.
    const conflict = await execute(instances[1]!.url, headers, "sync", { input: { title: "other" }, idempotencyKey });
    expect(codeOf(conflict)).toBe("IDEMPOTENCY_CONFLICT");

    expect(invocations(root, tenantId)).toEqual([expect.objectContaining({ tool: "sync", operationId: winner.operationId })]);
    expect(await operationsOf(schema, tenantId)).toEqual([expect.objectContaining({ operation_id: winner.operationId, state: "succeeded" })]);
    expect(await db.rows(inSchema(schema, "SELECT state, operation_id FROM {s}.idempotency_keys WHERE tenant_id = $1"), [tenantId])).toEqual([
      { state: "succeeded", operation_id: winner.operationId },
    ]);
    const events = executeEvents(await allActivity(instances[0]!.url, secrets.adminKey, tenantId), "sync");
    expect(events).toHaveLength(121);
    expect(events.filter((event) => event.outcome === "succeeded" && event.operationId === winner.operationId)).toHaveLength(61);
    expect(events.filter((event) => event.errorCode === "OPERATION_IN_PROGRESS")).toHaveLength(59);
    expect(events.filter((event) => event.errorCode === "IDEMPOTENCY_CONFLICT")).toHaveLength(1);
  });

  it("confirmations.wait on one instance resolves when the person approves on another instance's page", async () => {
    const tenantId = "t-wait";
    const [a, b, c] = instances;
    const headers = await setUpTenant(a!.url, secrets, tenantId, {
      policy: { rules: [{ tools: `${PROVIDER}:*`, decision: "confirm", mode: "platform" }] },
      userId: "user-w",
    });
    const input = { title: "approved elsewhere" };
    const preview = ok<{ confirmation: { mode: string; requestId: string; confirmUrl: string } }>(
      await mutate(a!.url, "tools.preview", { ref: ref("charge"), input }, headers),
    );
    expect(preview.confirmation.mode).toBe("platform");
    const { requestId } = preview.confirmation;
    expect(preview.confirmation.confirmUrl).toBe(`${PUBLIC_URL}/confirm/${requestId}`);

    let answeredAt = 0;
    const waiting = query(c!.url, "confirmations.wait", { requestId, timeoutMs: 20_000 }, headers).finally(() => (answeredAt = Date.now()));
    waiting.catch(() => undefined); // awaited below; a failure before that is not unhandled
    await sleep(500);
    expect(answeredAt).toBe(0);

    const session = await signIn(b!.url, secrets.actorSecret, { tid: tenantId, sub: "user-w" });
    const page = await fetchPage(b!.url, requestId, session);
    expect(page.status).toBe(200);
    expect(page.csrf).toBeDefined();
    const approvedAt = Date.now();
    const decided = await postDecision(b!.url, requestId, "approve", { session, csrf: page.csrf! });
    expect(decided.status, decided.html).toBeLessThan(400);

    const status = ok<{ status: string; token?: string }>(await waiting);
    expect(status.status).toBe("approved");
    expect(typeof status.token).toBe("string");
    expect(answeredAt - approvedAt).toBeLessThan(2000);
    const done = ok<{ operationId: string }>(await execute(c!.url, headers, "charge", { input, confirmationToken: status.token }));
    expect(invocations(root, tenantId)).toEqual([expect.objectContaining({ operationId: done.operationId })]);
    const events = await allActivity(a!.url, secrets.adminKey, tenantId);
    expect(events.filter((event) => event.kind === "confirmation" && event.phase === "approve" && event.outcome === "approved")).toHaveLength(1);
  });

  it("SIGKILL of one instance with operations in flight: the others keep serving, settle its expired leases once, and nothing is lost", {
    timeout: 60_000,
  }, async () => {
    const tenantId = "t-kill";
    const [a, b, victim] = instances;
    const headers = await setUpTenant(a!.url, secrets, tenantId, {
      policy: allowAll,
      recovery: { rules: [{ tools: `${PROVIDER}:sync-idempotent`, retry: "reinvoke", maxAttempts: 1 }] },
    });
    const held = (title: string, hold: string) => ({ input: { title, hold } });
    const settle = (call: Promise<WireResponse>) =>
      call.then(
        (response) => ({ response }),
        (error: unknown) => ({ error }),
      );
    const onVictim = [
      ...[1, 2, 3].map((i) => execute(victim!.url, headers, "sync", held(`victim-none-${i}`, "kill"))),
      ...[1, 2].map((i) => execute(victim!.url, headers, "sync-idempotent", held(`victim-idem-${i}`, "kill-idem"))),
    ].map(settle);
    const onSurvivors = [a!, a!, b!, b!].map((instance, i) => settle(execute(instance.url, headers, "sync", held(`survivor-${i}`, "kill"))));
    await until("nine held invocations", () => (invocations(root, tenantId).length === 9 ? true : undefined));
    const before = invocations(root, tenantId);
    expect(before.filter((entry) => entry.pid === victim!.pid)).toHaveLength(5);

    await killHard(victim!);
    instances = [a!, b!];
    for (const outcome of await Promise.all(onVictim)) expect("error" in outcome, JSON.stringify(outcome)).toBe(true);
    // Re-invocations return at once. (A held one would hold up its instance's whole recovery pass:
    // the runtime settles expired leases one after another and awaits each re-invoked provider.)
    release(root, "kill-idem");

    // The survivors serve at once, while their own calls are still held.
    for (const instance of [a!, b!]) ok(await execute(instance.url, headers, "sync", { input: { title: `after-kill-${instance.pid}` } }));
    expect((await fetch(`${a!.url}/readyz`)).status).toBe(200);

    const victimOps = (tool: ToolName) => before.filter((entry) => entry.pid === victim!.pid && entry.tool === tool).map((entry) => entry.operationId);
    const lostNone = victimOps("sync");
    const lostIdempotent = victimOps("sync-idempotent");
    // Within a lease (1 s) and a recovery round (0.2 s): recovery-none operations become unknown...
    await until("the victim's recovery-none operations to be unknown", async () => {
      const rows = (await operationsOf(schema, tenantId)).filter((row) => lostNone.includes(row.operation_id));
      return rows.length === 3 && rows.every((row) => row.state === "unknown") ? rows : undefined;
    });
    // ...and idempotent ones are re-invoked with the same operation id by a survivor, and succeed.
    await until("the victim's idempotent operations to be re-invoked and succeed", async () => {
      const rows = (await operationsOf(schema, tenantId)).filter((row) => lostIdempotent.includes(row.operation_id));
      return rows.length === 2 && rows.every((row) => row.state === "succeeded") ? rows : undefined;
    });
    // The survivors' own held calls were never taken from them: they are still running, then succeed.
    expect(
      (await operationsOf(schema, tenantId)).filter((row) => row.state === "running" && [a!.pid, b!.pid].some((pid) => row.lease_owner.includes(`/${pid}/`))),
    ).toHaveLength(4);
    release(root, "kill");
    for (const outcome of await Promise.all(onSurvivors)) {
      expect("response" in outcome, JSON.stringify(outcome)).toBe(true);
      if ("response" in outcome) ok(outcome.response);
    }
    await until("every operation to settle", async () => {
      const rows = await operationsOf(schema, tenantId);
      return rows.every((row) => row.state !== "running") ? rows : undefined;
    });
    // More recovery rounds pass: nothing runs a second time.
    await sleep(1500);

    const all = invocations(root, tenantId);
    for (const operationId of lostNone) expect(all.filter((entry) => entry.operationId === operationId)).toHaveLength(1);
    for (const operationId of lostIdempotent) {
      const runs = all.filter((entry) => entry.operationId === operationId);
      expect(runs).toHaveLength(2);
      expect(runs[0]!.pid).toBe(victim!.pid);
      expect([a!.pid, b!.pid]).toContain(runs[1]!.pid);
    }
    expect(all).toHaveLength(9 + 2 + 2);

    const rows = await operationsOf(schema, tenantId);
    expect(rows).toHaveLength(11);
    const stateOf = new Map(rows.map((row) => [row.operation_id, row.state]));
    for (const operationId of lostNone) expect(stateOf.get(operationId)).toBe("unknown");
    for (const operationId of lostIdempotent) expect(stateOf.get(operationId)).toBe("succeeded");
    expect(rows.filter((row) => row.state === "succeeded")).toHaveLength(8);
    expect(new Set(all.map((entry) => entry.operationId))).toEqual(new Set(rows.map((row) => row.operation_id)));

    // The activity log accounts for every operation with its final state.
    const events = await allActivity(a!.url, secrets.adminKey, tenantId);
    for (const row of rows) {
      const kind = lostNone.includes(row.operation_id) || lostIdempotent.includes(row.operation_id) ? "recovery" : "call";
      expect(
        events.filter((event) => event.operationId === row.operation_id && event.kind === kind && event.outcome === row.state),
        `${row.operation_id} (${row.tool}, ${row.state})`,
      ).toHaveLength(1);
    }
  });
});

describe.skipIf(skip !== undefined)("a PostgreSQL outage between one toolpact serve and the database", () => {
  const secrets = makeDeploymentSecrets();

  /** A server whose only way to PostgreSQL is a proxy this test controls, on a fresh schema. */
  async function serverBehindProxy(name: string, databaseOptions: Record<string, unknown> = {}) {
    const proxy = await createTcpProxy({ targetHost: db.host, targetPort: db.port });
    proxies.push(proxy);
    const schema = db.freshSchema();
    const config = writeConfig(root, `${name}.config.json`, {
      database: urlVia(db.url, proxy.host, proxy.port),
      databaseOptions: { schema, ...databaseOptions },
      limits: { leaseMs: 1000, recoveryIntervalMs: 200 },
    });
    const server = await serve(config, secrets.env);
    const headers = await setUpTenant(server.url, secrets, name, { policy: allowAll });
    return { proxy, schema, server, headers, tenantId: name };
  }

  interface Call {
    readonly started: number;
    readonly ms: number;
    readonly status: number;
    readonly code: string | undefined;
    readonly operationId: string | undefined;
  }

  /** `workers` callers executing `sync` back to back until `stop()`; every answer is logged with its timing. */
  function load(url: string, headers: Record<string, string>, workers: number) {
    const calls: Call[] = [];
    let stopped = false;
    const worker = async (w: number) => {
      for (let i = 0; !stopped; i++) {
        const started = performance.now();
        const response = await execute(url, headers, "sync", { input: { title: `w${w}-${i}` } });
        const ms = performance.now() - started;
        const success = codeOf(response) === undefined ? ok<{ operationId: string }>(response).operationId : undefined;
        calls.push({ started, ms, status: response.status, code: codeOf(response), operationId: success ?? operationIdOf(response) });
        await sleep(20);
      }
    };
    const running = Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
    running.catch(() => undefined); // `stop` awaits it; a test that fails first does not leave it unhandled
    return {
      calls,
      stop: async () => {
        stopped = true;
        await running;
      },
    };
  }

  async function readiness(url: string): Promise<{ status: number; ms: number }> {
    const started = performance.now();
    const response = await fetch(`${url}/readyz`);
    await response.text();
    return { status: response.status, ms: performance.now() - started };
  }

  it("cut: calls answer STORE_UNAVAILABLE within 2 s and /readyz 503, no provider runs; restored: the same process serves again", {
    timeout: 60_000,
  }, async () => {
    const { proxy, schema, server, headers, tenantId } = await serverBehindProxy("t-cut");
    ok(await execute(server.url, headers, "sync", { input: { title: "before" } }));
    expect((await readiness(server.url)).status).toBe(200);

    const traffic = load(server.url, headers, 6);
    await sleep(500);
    const cutAt = performance.now();
    proxy.cut();
    // Calls in flight at the cut land (their provider may have run, with its ledger row written first).
    await sleep(300);
    const ranBeforeCut = invocations(root, tenantId).length;
    const ready = await readiness(server.url);
    expect(ready.status).toBe(503);
    expect(ready.ms).toBeLessThan(2000);
    await sleep(2500);
    expect(invocations(root, tenantId)).toHaveLength(ranBeforeCut);
    const restoredAt = performance.now();
    proxy.restore();
    await until("a call to succeed after the restore", () =>
      traffic.calls.some((call) => call.started > restoredAt && call.code === undefined) ? true : undefined,
    );
    await traffic.stop();
    await until("/readyz to answer 200 again", async () => ((await readiness(server.url)).status === 200 ? true : undefined));
    expect(server.child.exitCode).toBeNull();

    const during = traffic.calls.filter((call) => call.started > cutAt && call.started + call.ms < restoredAt);
    expect(during.length).toBeGreaterThan(20);
    for (const call of during) {
      expect(call.code, JSON.stringify(call)).toBe("STORE_UNAVAILABLE");
      expect(call.status).toBe(503);
      expect(call.ms).toBeLessThan(2000);
    }
    expect(traffic.calls.filter((call) => call.started < cutAt && call.code === undefined).length).toBeGreaterThan(0);

    // No provider ran without its ledger row: every invocation's operation is in the database, and
    // every operation settles (one whose commit was lost at the cut is settled by recovery).
    const rows = await until("every operation to settle", async () => {
      const found = await operationsOf(schema, tenantId);
      return found.every((row) => row.state !== "running") ? found : undefined;
    });
    const ledger = new Set(rows.map((row) => row.operation_id));
    for (const entry of invocations(root, tenantId)) expect(ledger.has(entry.operationId), entry.operationId).toBe(true);
    for (const call of traffic.calls) if (call.code === undefined) expect(ledger.has(call.operationId!)).toBe(true);
  });

  it("stalled (nothing answers) with 1 s connection and statement timeouts from databaseOptions: answered within 2 s, then recovery", {
    timeout: 60_000,
  }, async () => {
    const { proxy, server, headers, tenantId, schema } = await serverBehindProxy("t-stall", { connectionTimeoutMs: 1000, statementTimeoutMs: 1000 });
    ok(await execute(server.url, headers, "sync", { input: { title: "before" } }));
    const ran = invocations(root, tenantId).length;
    proxy.stall();
    const answers = await Promise.all(
      Array.from({ length: 5 }, async (_, i) => {
        const started = performance.now();
        const response = await execute(server.url, headers, "sync", { input: { title: `stalled-${i}` } });
        return { code: codeOf(response), status: response.status, operationId: operationIdOf(response), ms: performance.now() - started };
      }),
    );
    // A call that got no connection never sent its begin: STORE_UNAVAILABLE. One whose begin was sent on a
    // connection that then went silent cannot know whether it committed: OUTCOME_UNKNOWN, with its id,
    // after the statement's timeout and one more try (bounded by the timeouts) to record the refusal.
    for (const answer of answers) {
      expect(["STORE_UNAVAILABLE", "OUTCOME_UNKNOWN"]).toContain(answer.code);
      if (answer.code === "STORE_UNAVAILABLE") {
        expect(answer.status).toBe(503);
        expect(answer.ms).toBeLessThan(2000);
      } else {
        expect(answer.operationId).toMatch(/^[0-9a-f-]{36}$/);
        expect(answer.ms).toBeLessThan(3500);
      }
    }
    const ready = await readiness(server.url);
    expect(ready.status).toBe(503);
    expect(ready.ms).toBeLessThan(2000);
    expect(invocations(root, tenantId)).toHaveLength(ran);

    proxy.restore();
    const after = await until("a call to succeed after the restore", async () => {
      const response = await execute(server.url, headers, "sync", { input: { title: "after" } });
      return codeOf(response) === undefined ? response : undefined;
    });
    expect(ok<{ result: { title: string } }>(after).result.title).toBe("after");
    // an OUTCOME_UNKNOWN begin either never reached the database or is settled by recovery; none ran
    for (const answer of answers) {
      if (answer.operationId === undefined) continue;
      await until(`operation ${answer.operationId} to be absent or settled`, async () => {
        const [row] = await db.rows<{ state: string }>(inSchema(schema, "SELECT state FROM {s}.operations WHERE operation_id = $1"), [answer.operationId]);
        return row === undefined || row.state === "unknown" ? true : undefined;
      });
    }
    expect(invocations(root, tenantId).filter((entry) => entry.title.startsWith("stalled-"))).toEqual([]);
    await until("/readyz to answer 200 again", async () => ((await readiness(server.url)).status === 200 ? true : undefined));
    expect(server.child.exitCode).toBeNull();
  });
});

describe.skipIf(skip !== undefined)("toolpact migrate and retention on PostgreSQL", () => {
  it("three concurrent `toolpact migrate` on a fresh schema apply each step once; a later run applies none", async () => {
    const schema = db.freshSchema();
    const config = writeConfig(root, "migrate.config.json", { databaseOptions: { schema } });
    const migrate = () => runCli(["migrate", "--config", config], { TOOLPACT_DATABASE_URL: db.url });
    const results = await Promise.all([migrate(), migrate(), migrate()]);
    const applied = results.map((result) => {
      expect(result.code, result.stderr).toBe(0);
      const match = new RegExp(`PostgreSQL \\S+ \\(schema ${schema}\\) is at the latest schema \\((\\d+) steps? applied now\\)`).exec(result.stdout);
      expect(match, result.stdout).not.toBeNull();
      return Number(match![1]);
    });
    const versions = await db.rows<{ version: number; n: string }>(
      inSchema(schema, "SELECT version, count(*) AS n FROM {s}.toolpact_migrations GROUP BY version"),
    );
    for (const row of versions) expect(Number(row.n)).toBe(1);
    expect(applied.reduce((sum, n) => sum + n, 0)).toBe(versions.length);
    expect(applied.filter((n) => n > 0)).toHaveLength(1);
    const again = await migrate();
    expect(again.stdout).toMatch(/\(0 steps applied now\)/);
  });

  it("the pruning job of `toolpact serve` deletes activity and idempotency keys past retention and keeps recent rows", { timeout: 60_000 }, async () => {
    const secrets = makeDeploymentSecrets();
    const schema = db.freshSchema();
    const config = writeConfig(root, "prune.config.json", {
      database: db.url,
      databaseOptions: { schema },
      // Rows live about 3 s; the job runs every 250 ms.
      retention: { activityDays: 3 / 86_400, idempotencyHours: 3 / 3600, pruneIntervalMs: 250 },
    });
    const server = await serve(config, secrets.env);
    const tenantId = "t-prune";
    const headers = await setUpTenant(server.url, secrets, tenantId, { policy: allowAll });
    for (const key of ["k1", "k2", "k3"]) ok(await execute(server.url, headers, "sync", { input: { title: key }, idempotencyKey: key }));
    const activity = () => db.count(inSchema(schema, "SELECT count(*) AS n FROM {s}.activity WHERE tenant_id = $1"), [tenantId]);
    const keys = () => db.count(inSchema(schema, "SELECT count(*) AS n FROM {s}.idempotency_keys WHERE tenant_id = $1"), [tenantId]);
    expect(await activity()).toBeGreaterThanOrEqual(3);
    expect(await keys()).toBe(3);

    await until("old activity and idempotency keys to be pruned", async () => ((await activity()) === 0 && (await keys()) === 0 ? true : undefined), 15_000);
    // Pruned keys are free again, and a fresh row stays while the job keeps running.
    const fresh = ok<{ operationId: string }>(await execute(server.url, headers, "sync", { input: { title: "k1 again" }, idempotencyKey: "k1" }));
    await sleep(600);
    expect(
      await db.count(inSchema(schema, "SELECT count(*) AS n FROM {s}.activity WHERE tenant_id = $1 AND operation_id = $2"), [tenantId, fresh.operationId]),
    ).toBe(1);
    expect(await keys()).toBe(1);
    expect(server.child.exitCode).toBeNull();
  });
});

/** Runs the built CLI to completion (at most 30 s) in the test folder. */
function runCli(args: readonly string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`toolpact ${args.join(" ")} did not finish within 30 s: ${stdout}${stderr}`));
    }, 30_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
