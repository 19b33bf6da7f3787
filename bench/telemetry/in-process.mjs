// The telemetry overhead in one process, without HTTP or a load driver: a read execute in a loop (the runtime's
// test host, SQLite in memory) under the real OpenTelemetry Node SDK exporting over OTLP/HTTP to a local
// receiver, against the same loop without an SDK. CPU per call from process.cpuUsage (user + system, the SDK's
// batching and export included). Each system runs in its own process (the API's globals are per process), and
// the systems alternate round by round.
//   node bench/telemetry/in-process.mjs [--calls 3000] [--rounds 5] [--only none,exporting,...]
// The `*-before` systems load the runtime from packages/runtime/dist-before (or BENCH_RUNTIME_DIST): build the
// commit to compare against and copy its packages/runtime/dist there, to measure before/after in one run.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { exporting } from "./run.mjs";

const SYSTEMS = {
  none: {},
  // No SDK, but an AsyncLocalStorage entered once: the promise hooks the SDK's context manager turns on.
  "none+als": { BENCH_ENTER_ALS: "1" },
  off: { OTEL_TRACES_EXPORTER: "otlp", OTEL_TRACES_SAMPLER: "always_off", OTEL_METRICS_EXPORTER: "none" },
  metrics: { OTEL_TRACES_EXPORTER: "none", OTEL_METRICS_EXPORTER: "otlp" },
  exporting: { OTEL_TRACES_EXPORTER: "otlp", OTEL_METRICS_EXPORTER: "otlp" },
  sampled: { OTEL_TRACES_EXPORTER: "otlp", OTEL_METRICS_EXPORTER: "otlp", OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.1" },
  // The same, with the runtime built from another checkout (BENCH_RUNTIME_DIST, e.g. main's, for before/after).
  "exporting-before": { OTEL_TRACES_EXPORTER: "otlp", OTEL_METRICS_EXPORTER: "otlp", BENCH_BEFORE: "1" },
  "sampled-before": {
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_METRICS_EXPORTER: "otlp",
    OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
    OTEL_TRACES_SAMPLER_ARG: "0.1",
    BENCH_BEFORE: "1",
  },
  "none-before": { BENCH_BEFORE: "1" },
  // Every trace exported, the call's span only (runtime option telemetry.stepSpans false).
  "exporting-call-span": { OTEL_TRACES_EXPORTER: "otlp", OTEL_METRICS_EXPORTER: "otlp", BENCH_STEP_SPANS: "0" },
  "sampled-0": { OTEL_TRACES_EXPORTER: "otlp", OTEL_METRICS_EXPORTER: "otlp", OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" },
  "sampled-0.01": {
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_METRICS_EXPORTER: "otlp",
    OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
    OTEL_TRACES_SAMPLER_ARG: "0.01",
  },
};

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const at = argv.indexOf(`--${name}`);
  return at === -1 ? fallback : argv[at + 1];
};

if (argv[0] === "--child") await child(Number(argv[1]));
else await parent();

async function parent() {
  const calls = Number(option("calls", 3000));
  const rounds = Number(option("rounds", 5));
  const only = option("only", Object.keys(SYSTEMS).join(",")).split(",");
  let bytes = 0;
  const receiver = createServer((req, res) => {
    req.on("data", (chunk) => (bytes += chunk.length));
    req.on("end", () => res.writeHead(200, { "content-type": req.headers["content-type"] ?? "application/x-protobuf" }).end());
  });
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${receiver.address().port}`;
  const results = Object.fromEntries(only.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const name of only) {
      // The bench group's SDK settings (batched, a queue no span is dropped from), each system's exporters and sampler over them.
      const env = {
        ...process.env,
        ...exporting(endpoint),
        OTEL_TRACES_EXPORTER: "",
        OTEL_METRICS_EXPORTER: "",
        ...SYSTEMS[name],
      };
      const us = await runChild(calls, env);
      results[name].push(us);
      process.stderr.write(`round ${round + 1} ${name}: ${us.toFixed(1)} µs CPU/call\n`);
    }
  }
  receiver.close();
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const base = median(results[only[0]]);
  process.stdout.write(`| system | µs CPU per call (median of ${rounds}, ${calls} calls each) | ÷ ${only[0]} |\n| --- | ---: | ---: |\n`);
  for (const name of only) process.stdout.write(`| ${name} | ${median(results[name]).toFixed(1)} | ${(median(results[name]) / base).toFixed(3)}x |\n`);
  process.stdout.write(`(receiver got ${bytes} bytes)\n`);
}

function runChild(calls, env) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--child", String(calls)], {
      env,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    proc.stdout.on("data", (chunk) => (out += chunk));
    proc.on("exit", (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`child exited ${code}`))));
  });
}

async function child(calls) {
  let stop;
  if (process.env.OTEL_TRACES_EXPORTER || process.env.OTEL_METRICS_EXPORTER) {
    const { NodeSDK } = await import("@opentelemetry/sdk-node");
    const sdk = new NodeSDK({ instrumentations: [] });
    sdk.start();
    stop = () => sdk.shutdown();
  }
  if (process.env.BENCH_ENTER_ALS) {
    const { AsyncLocalStorage } = await import("node:async_hooks");
    new AsyncLocalStorage().run(1, () => {});
  }
  const dist = process.env.BENCH_BEFORE ? (process.env.BENCH_RUNTIME_DIST ?? "../../packages/runtime/dist-before") : "../../packages/runtime/dist";
  const { createTestHost } = await import(`${dist}/testing/index.js`);
  const host = await createTestHost({
    ...(process.env.BENCH_STEP_SPANS === "0" ? { runtime: { telemetry: { stepSpans: false } } } : {}),
    plugins: [
      {
        manifest: {
          id: "com.example.bench",
          version: "1.0.0",
          permissions: ["tools:provide"],
          tools: [{ name: "read", effect: "read", inputSchema: { type: "object" } }],
        },
        activate: (sdk) => sdk.tools.provide("read", { execute: () => ({ ok: true }) }),
      },
    ],
  });
  const transport = host.transport();
  const ref = { providerId: "com.example.bench", tool: "read" };
  for (let i = 0; i < Math.min(500, calls); i++) await transport.execute(ref, {});
  const before = process.cpuUsage();
  for (let i = 0; i < calls; i++) await transport.execute(ref, {});
  const loop = process.cpuUsage(before);
  process.stderr.write(`  (the loop alone: ${((loop.user + loop.system) / calls).toFixed(1)} µs CPU/call)\n`);
  // Let the batch processor's export of these calls happen inside the measured window.
  await new Promise((resolve) => setTimeout(resolve, 700));
  const used = process.cpuUsage(before);
  await host.close();
  await stop?.();
  process.stdout.write(`${(used.user + used.system) / calls}\n`);
}
