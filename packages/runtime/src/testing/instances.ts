/** Fixtures that span instances: a user grant written straight to a store, and two runtimes on one PostgreSQL schema. */
import { randomUUID } from "node:crypto";
import { schemaHash } from "@toolpact/contract";
import type { Principal } from "../api.js";
import type { ToolpactRuntime } from "../runtime.js";
import { createPostgresStore } from "../store/postgres/postgres-store.js";
import type { GrantRecord } from "../store/store.js";
import { NOTES, TENANT, createFixture, notesManifest, type FixtureOptions, type RuntimeFixture } from "./fixtures.js";
import { afterEach } from "vitest";
import { usePostgresHarness } from "./postgres-harness.js";
import type { PostgresTestGate } from "./postgres-test-gate.js";
import { createTcpProxy, type TcpProxy } from "./tcp-proxy.js";

/** A live grant of create-record for `principal`'s caller and user, for an hour from the fixture's now (not stored). */
export function sampleGrant(fx: RuntimeFixture, principal: Principal, overrides: Partial<GrantRecord> = {}): GrantRecord {
  return {
    tenantId: TENANT,
    grantId: `grant-${randomUUID()}`,
    actorUserId: principal.actor.userId,
    callerPluginId: principal.callerPluginId,
    tool: `${NOTES}:create-record`,
    version: 1,
    schemaHash: schemaHash(notesManifest().tools[0]!.inputSchema),
    uses: 0,
    expiresAt: fx.now() + 3_600_000,
    createdBy: principal.actor.userId,
    createdAt: fx.now(),
    ...overrides,
  };
}

/** Instance A, and instance B whose connections go through a proxy (to cut B's LISTEN connection), on one schema. */
export interface TwoInstances {
  readonly a: RuntimeFixture;
  readonly b: ToolpactRuntime;
  readonly proxy: TcpProxy;
}

/**
 * Two runtimes on a fresh schema of the server at `url`: `a` the fixture's own (instance-a, direct), `b`
 * its reopening (instance-b, through the proxy); both with `runtime` options. The caller disposes of `a`
 * and closes the proxy.
 */
async function twoPostgresInstances(url: string, schema: string, options: FixtureOptions = {}): Promise<TwoInstances> {
  const target = new URL(url);
  const proxy = await createTcpProxy({ targetHost: target.hostname, targetPort: Number(target.port || 5432) });
  const proxied = new URL(url);
  proxied.hostname = proxy.host;
  proxied.port = String(proxy.port);
  const names = ["instance-a", "instance-b"];
  const a = await createFixture({
    ...options,
    openStore: () => {
      const instanceId = names.shift() ?? "instance-c";
      return createPostgresStore({ url: instanceId === "instance-a" ? url : proxied.toString(), schema, instanceId });
    },
  });
  const b = await a.reopen({ ...options.runtime, instanceId: "instance-b" });
  return { a, b, proxy };
}

/**
 * For a describe block on PostgreSQL: answers `open`, which makes two instances (`twoPostgresInstances`) on
 * a fresh schema with `options`; whatever a test opened is closed after it.
 */
export function useTwoPostgresInstances(gate: PostgresTestGate, options: FixtureOptions = {}): () => Promise<TwoInstances> {
  const { url, freshSchema } = usePostgresHarness(gate);
  const opened: TwoInstances[] = [];
  afterEach(async () => {
    const closing = opened.splice(0);
    await Promise.all(
      closing.map(async ({ a, proxy }) => {
        await a.dispose();
        await proxy.close();
      }),
    );
  });
  return async () => {
    const made = await twoPostgresInstances(url, freshSchema(), options);
    opened.push(made);
    return made;
  };
}
