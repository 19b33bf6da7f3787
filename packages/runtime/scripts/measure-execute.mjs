// Quick local measurement of in-process durable execute on SQLite (not a test, not the bench).
// Build first (`pnpm exec tsc -b packages/runtime`), then: node packages/runtime/scripts/measure-execute.mjs [calls] [concurrency...]
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { createRuntime, createSqliteStore } from "../dist/index.js";

const calls = Number(process.argv[2] ?? 100_000);
const levels = process.argv.slice(3).map(Number);
const concurrencies = levels.length > 0 ? levels : [1, 32, 256];

const dir = mkdtempSync(join(tmpdir(), "toolpact-measure-"));
const actorSecret = randomBytes(32);
const runtime = await createRuntime({
  store: await createSqliteStore({ path: join(dir, "toolpact.db"), checkpoint: process.env.CHECKPOINT ?? "background" }),
  signingKeys: [{ kid: "k1", key: randomBytes(32) }],
  storageKey: randomBytes(32),
  actorTokens: { issuer: "https://id.example", secret: actorSecret },
});
const tool = (name) => ({
  name,
  version: 1,
  effect: "read",
  requiresConfirmation: false,
  minVerificationLevel: 0,
  recovery: "none",
  timeoutMs: 10_000,
  inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"], additionalProperties: false },
});
runtime.registerPlugin({ id: "bench.provider", version: "1.0.0", permissions: ["tools:provide"], tools: [tool("lookup")], gates: [], hooks: [], guards: [] });
runtime.registerPlugin({ id: "bench.caller", version: "1.0.0", permissions: ["tools:call"], tools: [], gates: [], hooks: [], guards: [] });
runtime.sdkFor("bench.provider").tools.provide("lookup", { execute: async (input) => ({ id: input.id, found: true }) });
await runtime.admin.installPlugin("t1", "bench.provider");
await runtime.admin.installPlugin("t1", "bench.caller");
await runtime.admin.setPolicy("t1", { rules: [{ tools: "*", decision: "allow" }] });
const token = await new SignJWT({ sub: "u1", tid: "t1", lvl: 1 })
  .setProtectedHeader({ alg: "HS256" })
  .setIssuer("https://id.example")
  .setAudience("toolpact")
  .setExpirationTime("1h")
  .sign(actorSecret);
const caller = runtime.sdkFor("bench.caller").withActor(token);
const ref = { providerId: "bench.provider", tool: "lookup" };

async function run(total, concurrency) {
  let next = 0;
  const worker = async () => {
    while (next < total) {
      next++;
      await caller.tools.execute(ref, { id: "abc" });
    }
  };
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const used = process.cpuUsage(cpu);
  return { rate: total / (Number(process.hrtime.bigint() - started) / 1e9), cpuMicros: (used.user + used.system) / total };
}

await run(5_000, 32);
for (const concurrency of concurrencies) {
  const { rate, cpuMicros } = await run(calls, concurrency);
  console.log(
    `concurrency ${String(concurrency).padStart(4)}: ${Math.round(rate).toLocaleString("en-US")} durable executes/s ` +
      `(${cpuMicros.toFixed(1)} µs CPU per call, so ${Math.round(1e6 / cpuMicros).toLocaleString("en-US")}/s on an idle core)`,
  );
}
await runtime.close();
rmSync(dir, { recursive: true, force: true });
