// The toolpact side of bench/http/run.mjs: a server process with the bench world, printing its URL.
import { createToolpactServer } from "@toolpact/server";
import { createBenchWorld } from "./world.mjs";

const { runtime, pluginKey, actorToken } = await createBenchWorld();
const server = createToolpactServer({ runtime, adminKey: undefined, port: 0 });
const url = await server.listen();
process.stdout.write(JSON.stringify({ url, pluginKey, actorToken }) + "\n");
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
