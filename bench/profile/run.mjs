// Profiles the read-tool execute path: `toolpact serve` (SQLite ledger) under `node --cpu-prof`, and the bare
// tRPC server the same way for comparison, both driven over HTTP by the bench load client with the same
// calls in interleaved rounds (sequential, then 32 in flight). Prints where each server's CPU time goes,
// per call, counted from its first request on (start-up is left out).
// Usage: node bench/profile/run.mjs [--calls 6000] [--keep]   (uses the built dist: run `pnpm build` first)
import { mkdir, mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startJsonServer, startWorker, stopAllChildren, stopChild } from "../lib/processes.mjs";
import { startToolpactHosts } from "../lib/toolpact-host.mjs";
import { compareComponents, isHttpServerFrame, profileTables, summarizeProfile } from "./summarize.mjs";

const { values } = parseArgs({ options: { calls: { type: "string", default: "6000" }, keep: { type: "boolean" } } });
const measured = Number(values.calls);
if (!(Number.isInteger(measured) && measured >= 100 && measured <= 200_000)) throw new Error("--calls must be an integer from 100 to 200000");
const WARMUP = 1_000;

const dir = await mkdtemp(path.join(tmpdir(), "toolpact-bench-profile-"));
/** @param {string} name */
const profilerArgs = (name) => ["--cpu-prof", `--cpu-prof-dir=${path.join(dir, name)}`, "--cpu-prof-interval=250"];

const ROUNDS = 10;

/**
 * Drives every system with the same calls, interleaved so that drift in machine load touches both alike:
 * a warm-up each, then ROUNDS rounds of (sequential share, 32-in-flight share) per system in turn.
 * Answers the calls each system completed.
 */
async function drive(specs) {
  const driver = startWorker(fileURLToPath(new URL("../lib/load-driver.mjs", import.meta.url)));
  try {
    for (const spec of specs) {
      await driver.request("setup", { spec });
      await driver.request("warmup", { name: spec.name, count: WARMUP, maxMs: 60_000 });
    }
    const share = Math.max(1, Math.round(measured / 2 / ROUNDS));
    for (let round = 0; round < ROUNDS; round++) {
      for (const spec of round % 2 === 0 ? specs : [...specs].reverse()) {
        await driver.request("sequential", { name: spec.name, count: share, maxMs: 60_000 });
        await driver.request("throughput", { name: spec.name, seconds: 60, inFlight: 32, maxCalls: share });
      }
    }
    const calls = {};
    for (const spec of specs) calls[spec.name] = await driver.request("completed", { name: spec.name });
    await driver.request("close");
    return calls;
  } finally {
    await driver.stop();
  }
}

/**
 * The profile of the process that served. `toolpact serve` re-runs itself so that its secrets leave the
 * environment, and the supervisor it leaves behind writes a profile of its own (mostly idle, though it
 * loads the same modules): the serving process is the one that spent the most samples running JavaScript.
 */
async function readProfile(name) {
  const folder = path.join(dir, name);
  const files = (await readdir(folder)).filter((file) => file.endsWith(".cpuprofile"));
  if (files.length === 0) throw new Error(`no .cpuprofile in ${folder}: did the server exit cleanly?`);
  const profiles = await Promise.all(
    files.map(async (file) => ({ file: path.join(folder, file), profile: JSON.parse(await readFile(path.join(folder, file), "utf8")) })),
  );
  const busy = ({ profile }) => profile.nodes.reduce((sum, node) => sum + (node.callFrame.url === "" ? 0 : node.hitCount), 0);
  return profiles.reduce((most, next) => (busy(next) > busy(most) ? next : most));
}

try {
  await mkdir(path.join(dir, "toolpact"));
  await mkdir(path.join(dir, "trpc"));
  const hosts = await startToolpactHosts({ nodeArgs: profilerArgs("toolpact") });
  let calls;
  try {
    const bare = await startJsonServer(fileURLToPath(new URL("../overhead/servers/bare-trpc.mjs", import.meta.url)), { nodeArgs: profilerArgs("trpc") });
    calls = await drive([
      { name: "toolpact-read", kind: "toolpact-read", urls: hosts.urls, pluginKey: hosts.pluginKey, actorToken: hosts.actorToken },
      { name: "trpc", kind: "trpc", url: bare.url },
    ]);
    // A clean exit (SIGTERM, then drain) is what makes each process write its profile.
    await stopChild(bare.child);
  } finally {
    await hosts.stop();
  }
  const toolpactCalls = calls["toolpact-read"];
  const trpcCalls = calls.trpc;

  const toolpact = await readProfile("toolpact");
  const trpc = await readProfile("trpc");
  const toolpactSummary = summarizeProfile(toolpact.profile, { startAt: isHttpServerFrame });
  const trpcSummary = summarizeProfile(trpc.profile, { startAt: isHttpServerFrame });
  console.log("## Profile: `toolpact serve` read-tool execute vs the bare tRPC mutation\n");
  console.log(
    `Each server got about ${(WARMUP + measured).toLocaleString("en-US")} calls over HTTP (${WARMUP.toLocaleString("en-US")} warm-up, then ` +
      `${ROUNDS} interleaved rounds, half sequential and half at 32 in flight), sampled every 250 µs from its first request on. ` +
      "Both servers ran at the same time and took turns, so drift in machine load touches both alike.\n",
  );
  console.log("### Server CPU time per call by component\n");
  console.log(compareComponents(toolpactSummary, trpcSummary, { callsA: toolpactCalls, callsB: trpcCalls, labelA: "toolpact", labelB: "bare tRPC" }));
  console.log("\n### toolpact serve\n");
  console.log(profileTables(toolpactSummary, { calls: toolpactCalls }));
  console.log("\n### bare tRPC\n");
  console.log(profileTables(trpcSummary, { calls: trpcCalls, top: 10 }));
  if (values.keep) console.log(`\nprofiles kept: ${toolpact.file} and ${trpc.file} (open them in Chrome DevTools > Performance)`);
} finally {
  await stopAllChildren();
  if (!values.keep) await rm(dir, { recursive: true, force: true });
}
