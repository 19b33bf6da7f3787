// Profiles one sequential caller in process: `runtime.execute` (principal established once) or the
// in-process transport (tRPC createCaller, authenticating every call as HTTP does), on a SQLite ledger.
// Usage: node --cpu-prof --cpu-prof-dir=<dir> bench/profile/in-process.mjs [runtime|transport] [calls]
import { createInProcessTransport } from "@toolpact/server";
import { READ_REF } from "../lib/tenant.mjs";
import { checkItem, inputOf } from "../lib/work.mjs";
import { createWorld } from "../lib/world.mjs";

const [subject = "transport", count = "20000"] = process.argv.slice(2);
const calls = Number(count);
const world = await createWorld({});
const transport = createInProcessTransport({ runtime: world.runtime, pluginKey: world.pluginKey, actorToken: world.actorToken });
const principal = await world.runtime.authenticate({ pluginKey: world.pluginKey, actorToken: world.actorToken });
const call =
  subject === "runtime"
    ? async (i) => checkItem((await world.runtime.execute(principal, READ_REF, inputOf(i))).result, inputOf(i).id, subject)
    : async (i) => checkItem((await transport.execute(READ_REF, inputOf(i))).result, inputOf(i).id, subject);
for (let i = 0; i < 2_000; i++) await call(i);
const started = performance.now();
for (let i = 0; i < calls; i++) await call(i);
const ms = performance.now() - started;
console.log(`${subject}: ${calls} sequential calls, ${((ms * 1000) / calls).toFixed(1)} µs each`);
await world.close();
