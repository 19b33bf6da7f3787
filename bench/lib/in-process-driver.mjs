// The in-process benchmarks, in their own process: toolpact's runtime called directly (principal established
// once), toolpact's in-process transport (tRPC createCaller; authenticates every call like HTTP does), and a
// bare tRPC createCaller of the same zod-validated mutation. Each toolpact system has its own store. The
// grant rows call the confirmed write under a grant the user approved, and a write that needs no confirmation.
import { initTRPC } from "@trpc/server";
import { createInProcessTransport } from "@toolpact/server";
import { z } from "zod";
import { serveDriver } from "./driver.mjs";
import { GRANTING_POLICY, READ_REF, TENANT_ID, UNCONFIRMED_WRITE_REF, WRITE_REF } from "./tenant.mjs";
import { checkItem, inputOf, lookupItem } from "./work.mjs";
import { createWorld } from "./world.mjs";

function bareTrpcCaller() {
  const t = initTRPC.create();
  const router = t.router({
    items: t.router({
      get: t.procedure.input(z.strictObject({ id: z.string().min(1).max(64) })).mutation(({ input }) => lookupItem(input.id)),
    }),
  });
  return t.createCallerFactory(router)({});
}

const makers = {
  "trpc-caller": ({ name }) => {
    const caller = bareTrpcCaller();
    return {
      call: async (i) => {
        const input = inputOf(i);
        checkItem(await caller.items.get(input), input.id, name);
      },
    };
  },
  "toolpact-runtime": async ({ name, database, checkpointEveryMs }) => {
    const world = await createWorld({ database, checkpointEveryMs });
    const principal = await world.runtime.authenticate({ pluginKey: world.pluginKey, actorToken: world.actorToken });
    return {
      info: { sqliteFile: world.sqliteFile ?? null },
      call: async (i) => {
        const input = inputOf(i);
        checkItem((await world.runtime.execute(principal, READ_REF, input)).result, input.id, name);
      },
      close: () => world.close(),
    };
  },
  /** The confirmed write with no token: the grant the user approved on the confirmation page covers it. */
  "toolpact-granted-write": async ({ name }) => {
    const world = await createWorld({ policy: GRANTING_POLICY });
    const principal = await world.runtime.authenticate({ pluginKey: world.pluginKey, actorToken: world.actorToken });
    const grantId = await approveGrant(world.runtime, principal);
    return {
      info: { sqliteFile: world.sqliteFile ?? null, grantId },
      call: async (i) => {
        const input = inputOf(i);
        checkItem((await world.runtime.execute(principal, WRITE_REF, input)).result, input.id, name);
      },
      close: () => world.close(),
    };
  },
  /** A write that declares no confirmation, allowed by the same policy: the grant row's call without the grant. */
  "toolpact-unconfirmed-write": async ({ name }) => {
    const world = await createWorld({ policy: GRANTING_POLICY });
    const principal = await world.runtime.authenticate({ pluginKey: world.pluginKey, actorToken: world.actorToken });
    return {
      info: { sqliteFile: world.sqliteFile ?? null },
      call: async (i) => {
        const input = inputOf(i);
        checkItem((await world.runtime.execute(principal, UNCONFIRMED_WRITE_REF, input)).result, input.id, name);
      },
      close: () => world.close(),
    };
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
