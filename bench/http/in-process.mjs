// In-process durable execute on SQLite: every call authenticates nothing (the principal is established
// once), validates, authorizes, records a durable operation and settles it. Prints JSON results.
import { createInProcessTransport } from "@toolpact/server";
import { PROVIDER_ID, createBenchWorld } from "./world.mjs";

const seconds = Number(process.env.BENCH_INPROCESS_SECONDS ?? 2);
const { runtime, pluginKey, actorToken } = await createBenchWorld();
const principal = await runtime.authenticate({ pluginKey, actorToken });
const ref = { providerId: PROVIDER_ID, tool: "get-item" };
const transport = createInProcessTransport({ runtime, pluginKey, actorToken });

async function measure(call, inFlight) {
  for (let i = 0; i < 2_000; i++) await call(i); // warm-up
  const deadline = performance.now() + seconds * 1000;
  let calls = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < deadline) {
        await call(calls++);
      }
    }),
  );
  return Math.round(calls / ((performance.now() - started) / 1000));
}

const results = {
  runtimeSequential: await measure((i) => runtime.execute(principal, ref, { id: String(i % 1000) }), 1),
  runtimeConcurrent: await measure((i) => runtime.execute(principal, ref, { id: String(i % 1000) }), 32),
  transportSequential: await measure((i) => transport.execute(ref, { id: String(i % 1000) }), 1),
};
process.stdout.write(JSON.stringify(results) + "\n");
await runtime.close();
