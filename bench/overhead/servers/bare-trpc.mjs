// The baseline: a hand-written tRPC v11 router (standalone adapter) with one zod-validated mutation doing the same lookup.
import { createServer } from "node:http";
import { initTRPC } from "@trpc/server";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { z } from "zod";
import { lookupItem } from "../../lib/work.mjs";

const t = initTRPC.create();
const router = t.router({
  items: t.router({
    get: t.procedure.input(z.strictObject({ id: z.string().min(1).max(64) })).mutation(({ input }) => lookupItem(input.id)),
  }),
});

const server = createServer(createHTTPHandler({ router, basePath: "/trpc/" }));
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (server.address()).port}` })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)).closeAllConnections());
