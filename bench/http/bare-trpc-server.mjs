// A bare tRPC v11 server doing the same work as the toolpact read tool: the baseline of bench/http/run.mjs.
import { createServer } from "node:http";
import { initTRPC } from "@trpc/server";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { z } from "zod";
import { lookupItem } from "./work.mjs";

const t = initTRPC.create();
const router = t.router({
  items: t.router({
    get: t.procedure.input(z.strictObject({ id: z.string().min(1).max(64) })).mutation(({ input }) => lookupItem(input.id)),
  }),
});

const handler = createHTTPHandler({ router, basePath: "/trpc/" });
const server = createServer(handler);
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}` }) + "\n");
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
