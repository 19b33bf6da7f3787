// bench/http: a toolpact read-tool execute over HTTP against a bare tRPC v11 mutation doing the same work,
// a confirmed write (preview + execute) against one bare mutation, and in-process durable execute on
// SQLite. Each server runs in its own child process; this process is the load client. Measurements are
// interleaved (toolpact, bare, toolpact, ...) so drift hits both sides alike; only the ratios matter.
// Uses the built dist: run `pnpm build` first. Usage: node bench/http/run.mjs [--quick]
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createTRPCUntypedClient, httpLink } from "@trpc/client";
import { createHttpTransport } from "@toolpact/client";
import { PROVIDER_ID } from "./world.mjs";

const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 2 : 5;
const SEQUENTIAL_PER_ROUND = quick ? 200 : 500;
const WRITES_PER_ROUND = quick ? 100 : 200;
const THROUGHPUT_SECONDS = quick ? 1 : 2;
const THROUGHPUT_ROUNDS = quick ? 2 : 3;
const IN_FLIGHT = 32;

const here = (file) => fileURLToPath(new URL(file, import.meta.url));
const children = [];

/** Starts a child process that prints one JSON line once it listens. */
async function startChild(file, env = {}) {
  const child = spawn(process.execPath, [here(file)], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, ...env } });
  children.push(child);
  const lines = createInterface({ input: child.stdout });
  const [line] = await Promise.race([
    once(lines, "line"),
    once(child, "exit").then(([code]) => {
      throw new Error(`${file} exited with code ${code} before it was ready`);
    }),
  ]);
  return JSON.parse(line);
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

async function sequential(call, count, samples) {
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await call(i);
    samples.push(performance.now() - started);
  }
}

async function throughput(call, seconds) {
  const deadline = performance.now() + seconds * 1000;
  let calls = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < deadline) await call(calls++);
    }),
  );
  return calls / ((performance.now() - started) / 1000);
}

const benchStarted = performance.now();
try {
  const [toolpact, bare] = await Promise.all([startChild("./toolpact-server.mjs"), startChild("./bare-trpc-server.mjs")]);
  const transport = createHttpTransport({ url: toolpact.url, pluginKey: toolpact.pluginKey, actorToken: toolpact.actorToken });
  const bareClient = createTRPCUntypedClient({ links: [httpLink({ url: `${bare.url}/trpc` })] });

  const readRef = { providerId: PROVIDER_ID, tool: "get-item" };
  const writeRef = { providerId: PROVIDER_ID, tool: "put-item" };
  const toolpactRead = (i) => transport.execute(readRef, { id: String(i % 1000) });
  const bareRead = (i) => bareClient.mutation("items.get", { id: String(i % 1000) });
  const toolpactWrite = async (i) => {
    const input = { id: String(i % 1000) };
    const preview = await transport.preview(writeRef, input);
    if (!preview.confirmation.required || preview.confirmation.mode !== "token") throw new Error("expected a token-mode confirmation");
    return transport.execute(writeRef, input, { confirmationToken: preview.confirmation.token });
  };

  // Warm-up: JIT, connection pools, prepared statements.
  for (let i = 0; i < 500; i++) {
    await toolpactRead(i);
    await bareRead(i);
    if (i % 5 === 0) await toolpactWrite(i);
  }

  const samples = { toolpactRead: [], bareRead: [], toolpactWrite: [], bareWrite: [] };
  for (let round = 0; round < ROUNDS; round++) {
    await sequential(toolpactRead, SEQUENTIAL_PER_ROUND, samples.toolpactRead);
    await sequential(bareRead, SEQUENTIAL_PER_ROUND, samples.bareRead);
    await sequential(toolpactWrite, WRITES_PER_ROUND, samples.toolpactWrite);
    await sequential(bareRead, WRITES_PER_ROUND, samples.bareWrite);
  }
  const rates = { toolpact: [], bare: [] };
  for (let round = 0; round < THROUGHPUT_ROUNDS; round++) {
    rates.toolpact.push(await throughput(toolpactRead, THROUGHPUT_SECONDS));
    rates.bare.push(await throughput(bareRead, THROUGHPUT_SECONDS));
  }
  for (const child of children) child.kill("SIGTERM");

  const inProcess = await startChild("./in-process.mjs", { BENCH_INPROCESS_SECONDS: quick ? "1" : "2" });

  const stats = Object.fromEntries(
    Object.entries(samples).map(([name, list]) => {
      const sorted = [...list].sort((a, b) => a - b);
      return [name, { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), n: sorted.length }];
    }),
  );
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const tpRate = median(rates.toolpact);
  const bareRate = median(rates.bare);
  const ms = (value) => value.toFixed(3);
  const ratio = (value) => `${value.toFixed(2)}x`;

  console.log(`\n## bench/http (${new Date().toISOString()}, node ${process.version}, ${quick ? "quick" : "full"} run)\n`);
  console.log("| measure | toolpact | bare tRPC v11 | ratio | target |");
  console.log("| --- | ---: | ---: | ---: | --- |");
  console.log(`| read execute p50, sequential (ms) | ${ms(stats.toolpactRead.p50)} | ${ms(stats.bareRead.p50)} | ${ratio(stats.toolpactRead.p50 / stats.bareRead.p50)} | <= 1.15x |`);
  console.log(`| read execute p99, sequential (ms) | ${ms(stats.toolpactRead.p99)} | ${ms(stats.bareRead.p99)} | ${ratio(stats.toolpactRead.p99 / stats.bareRead.p99)} | |`);
  console.log(`| read execute throughput, ${IN_FLIGHT} in flight (calls/s) | ${Math.round(tpRate)} | ${Math.round(bareRate)} | ${ratio(bareRate / tpRate)} | <= 1.15x |`);
  console.log(`| confirmed write (preview + execute) p50 vs one bare mutation (ms) | ${ms(stats.toolpactWrite.p50)} | ${ms(stats.bareWrite.p50)} | ${ratio(stats.toolpactWrite.p50 / stats.bareWrite.p50)} | <= 2.3x |`);
  console.log(`| confirmed write p99 vs one bare mutation (ms) | ${ms(stats.toolpactWrite.p99)} | ${ms(stats.bareWrite.p99)} | ${ratio(stats.toolpactWrite.p99 / stats.bareWrite.p99)} | |`);
  console.log("");
  console.log("| in-process durable execute on SQLite | calls/s | target |");
  console.log("| --- | ---: | --- |");
  console.log(`| runtime.execute, sequential | ${inProcess.runtimeSequential} | >= 20,000 |`);
  console.log(`| runtime.execute, ${IN_FLIGHT} in flight | ${inProcess.runtimeConcurrent} | >= 20,000 |`);
  console.log(`| in-process transport (createCaller, authenticates each call), sequential | ${inProcess.transportSequential} | |`);
  console.log(
    `\nratios: toolpact / bare for latency, bare / toolpact for throughput (above 1x = toolpact slower). ` +
      `samples: ${stats.toolpactRead.n} sequential reads per side, ${stats.toolpactWrite.n} confirmed writes, ` +
      `${THROUGHPUT_ROUNDS} x ${THROUGHPUT_SECONDS} s throughput rounds per side (median). total ${((performance.now() - benchStarted) / 1000).toFixed(1)} s`,
  );
} finally {
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
}
