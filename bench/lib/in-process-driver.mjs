// The in-process benchmarks, in their own process: toolpact's runtime called directly (principal established
// once), toolpact's in-process transport (tRPC createCaller; authenticates every call like HTTP does), and a
// bare tRPC createCaller of the same zod-validated mutation. Each toolpact system has its own store. The
// grant rows call the confirmed write under a grant the user approved, and a write that needs no confirmation.
import { rm } from "node:fs/promises";
import path from "node:path";
import { initTRPC } from "@trpc/server";
import Database from "better-sqlite3";
import { createInProcessTransport } from "@toolpact/server";
import { z } from "zod";
import { serveDriver } from "./driver.mjs";
import { scratchDir } from "./scratch.mjs";
import { GRANTING_POLICY, READ_REF, TENANT_ID, UNCONFIRMED_WRITE_REF, WRITE_REF } from "./tenant.mjs";
import { checkItem, inputOf, lookupItem } from "./work.mjs";
import { createWorld } from "./world.mjs";

/**
 * The baseline router; with `record`, the mutation first records the call (what a hand-made durable log would do).
 * @param {(item: string) => void} [record]
 */
function bareTrpcCaller(record = () => {}) {
  const t = initTRPC.create();
  const router = t.router({
    items: t.router({
      get: t.procedure.input(z.strictObject({ id: z.string().min(1).max(64) })).mutation(({ input }) => {
        record(input.id);
        return lookupItem(input.id);
      }),
    }),
  });
  return t.createCallerFactory(router)({});
}

/**
 * A SQLite file opened as toolpact opens its ledger (WAL, synchronous=NORMAL) with one table of calls: the
 * bare router's mutation inserts a row per call, a commit each, so it pays for the disk as toolpact's read does.
 */
async function callLog() {
  const dir = await scratchDir("bench-call-log-");
  const db = new Database(path.join(dir, "calls.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE calls (id INTEGER PRIMARY KEY, item TEXT NOT NULL, at INTEGER NOT NULL)");
  const insert = db.prepare("INSERT INTO calls (item, at) VALUES (?, ?)");
  return {
    record: (item) => insert.run(item, Date.now()),
    async close() {
      db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const makers = {
  "trpc-caller": ({ name }) => callingBare(bareTrpcCaller(), name),
  "trpc-caller-logged": async ({ name }) => {
    const log = await callLog();
    return { ...callingBare(bareTrpcCaller(log.record), name), close: () => log.close() };
  },
  "toolpact-runtime": async ({ name, database, checkpointEveryMs }) => {
    const world = await createWorld({ database, checkpointEveryMs });
    return executing(world, await principalOf(world), READ_REF, name);
  },
  /** The confirmed write with no token: the grant the user approved on the confirmation page covers it. */
  "toolpact-granted-write": async ({ name }) => {
    const world = await createWorld({ policy: GRANTING_POLICY });
    const principal = await principalOf(world);
    const grantId = await approveGrant(world.runtime, principal);
    return executing(world, principal, WRITE_REF, name, { grantId });
  },
  /** A write that declares no confirmation, allowed by the same policy: the grant row's call without the grant. */
  "toolpact-unconfirmed-write": async ({ name }) => {
    const world = await createWorld({ policy: GRANTING_POLICY });
    return executing(world, await principalOf(world), UNCONFIRMED_WRITE_REF, name);
  },
  "toolpact-transport": async ({ name, database }) => {
    const world = await createWorld({ database });
    const transport = createInProcessTransport({ runtime: world.runtime, pluginKey: world.pluginKey, actorToken: world.actorToken });
    return {
      info: { sqliteFile: world.sqliteFile ?? null },
      call: async (i) => {
        const input = inputOf(i);
        checkItem((await transport.execute(READ_REF, input)).result, input.id, name);
      },
      close: () => world.close(),
    };
  },
};

/** Calls of the bare router's mutation. */
function callingBare(caller, name) {
  return {
    call: async (i) => {
      const input = inputOf(i);
      checkItem(await caller.items.get(input), input.id, name);
    },
  };
}

/** The caller's principal in `world`, established once. */
const principalOf = (world) => world.runtime.authenticate({ pluginKey: world.pluginKey, actorToken: world.actorToken });

/** Calls of `ref` through `runtime.execute` as `principal`; `info` adds to what setup answers (the SQLite file). */
function executing(world, principal, ref, name, info = {}) {
  return {
    info: { sqliteFile: world.sqliteFile ?? null, ...info },
    call: async (i) => {
      const input = inputOf(i);
      checkItem((await world.runtime.execute(principal, ref, input)).result, input.id, name);
    },
    close: () => world.close(),
  };
}

/**
 * As the user does on the confirmation page: the caller's preview makes a platform-mode request, and its
 * actor approves it with a grant for every call like it for a day (`decideConfirmation`). Answers the grant's id.
 */
async function approveGrant(runtime, principal) {
  const { confirmation } = await runtime.preview(principal, WRITE_REF, inputOf(0));
  if (!confirmation.required || confirmation.mode !== "platform") throw new Error("expected a platform-mode confirmation request");
  const person = { tenantId: TENANT_ID, userId: principal.actor.userId };
  const decided = await runtime.decideConfirmation(person, confirmation.requestId, "approve", { seconds: 86_400 });
  if (typeof decided.grantId !== "string") throw new Error(`the approval made no grant: ${JSON.stringify(decided)}`);
  return decided.grantId;
}

serveDriver(async (spec) => {
  const make = makers[spec.kind];
  if (make === undefined) throw new Error(`unknown system kind "${spec.kind}"`);
  return make(spec);
});
