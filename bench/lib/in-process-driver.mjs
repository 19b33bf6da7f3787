// The in-process benchmarks, in their own process: toolpact's runtime called directly (principal established
// once), toolpact's in-process transport (tRPC createCaller; authenticates every call like HTTP does), and a
// bare tRPC createCaller of the same zod-validated mutation. Each toolpact system has its own store.
import { initTRPC } from "@trpc/server";
import { createInProcessTransport } from "@toolpact/server";
import { z } from "zod";
import { serveDriver } from "./driver.mjs";
import { READ_REF } from "./tenant.mjs";
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

serveDriver(async (spec) => {
  const make = makers[spec.kind];
  if (make === undefined) throw new Error(`unknown system kind "${spec.kind}"`);
  return make(spec);
});
