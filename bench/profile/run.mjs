// Profiles a call through `toolpact serve` (SQLite ledger) under `node --cpu-prof` beside its base server the
// same way, both driven over HTTP by the bench load client with the same calls in interleaved rounds
// (sequential, then 32 in flight). Prints where each server's CPU time goes, per call, counted from its first
// request on (start-up is left out). Subjects:
//   read (default): the read-tool execute over tRPC beside the bare tRPC mutation;
//   mcp-2026: `/mcp`'s `tools/call` at 2026-07-28 (the bridge's modern leg) beside the MCP SDK v2's own
//     stateless server (bench/overhead/servers/mcp-v2.mjs), both called by the v2 client pinned to 2026-07-28.
// Usage: node bench/profile/run.mjs [--subject read|mcp-2026] [--calls 6000] [--sequential] [--top 25] [--keep]
//   --sequential: every measured call one at a time (what the p50 targets measure), none at 32 in flight.
// Uses the built dist: run `pnpm build` first.
import { mkdir, mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startJsonServer, startWorker, stopAllChildren, stopChild } from "../lib/processes.mjs";
import { startToolpactHosts } from "../lib/toolpact-host.mjs";
import { compareComponents, isHttpServerFrame, profileTables, summarizeProfile } from "./summarize.mjs";

const { values } = parseArgs({
  options: {
    subject: { type: "string", default: "read" },
    calls: { type: "string", default: "6000" },
    sequential: { type: "boolean" },
    top: { type: "string" },
    keep: { type: "boolean" },
  },
});
const SUBJECTS = {
  read: {
    title: "`toolpact serve` read-tool execute vs the bare tRPC mutation",
    toolpact: { name: "toolpact-read", kind: "toolpact-read", label: "toolpact" },
    base: { name: "trpc", kind: "trpc", server: "bare-trpc.mjs", label: "bare tRPC" },
  },
  "mcp-2026": {
    title: "MCP `tools/call` at 2026-07-28, toolpact's bridge vs the MCP SDK v2's stateless server",
    toolpact: { name: "toolpact-mcp-2026", kind: "toolpact-mcp-2026", label: "toolpact /mcp" },
    base: { name: "mcp-v2-2026", kind: "mcp-2026", server: "mcp-v2.mjs", label: "v2 SDK stateless" },
  },
};
const subject = SUBJECTS[values.subject];
if (subject === undefined) throw new Error(`--subject must be one of ${Object.keys(SUBJECTS).join(", ")}`);
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
        if (values.sequential) await driver.request("sequential", { name: spec.name, count: 2 * share, maxMs: 120_000 });
        else {
          await driver.request("sequential", { name: spec.name, count: share, maxMs: 60_000 });
          await driver.request("throughput", { name: spec.name, seconds: 60, inFlight: 32, maxCalls: share });
        }
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
  const { toolpact: subjectSpec, base: baseSpec } = subject;
  await mkdir(path.join(dir, "toolpact"));
  await mkdir(path.join(dir, "base"));
  const hosts = await startToolpactHosts({ nodeArgs: profilerArgs("toolpact") });
  let calls;
  try {
    const base = await startJsonServer(fileURLToPath(new URL(`../overhead/servers/${baseSpec.server}`, import.meta.url)), { nodeArgs: profilerArgs("base") });
    calls = await drive([
      { name: subjectSpec.name, kind: subjectSpec.kind, urls: hosts.urls, pluginKey: hosts.pluginKey, actorToken: hosts.actorToken },
      { name: baseSpec.name, kind: baseSpec.kind, url: base.url },
    ]);
    // A clean exit (SIGTERM, then drain) is what makes each process write its profile.
    await stopChild(base.child);
  } finally {
    await hosts.stop();
  }
  const toolpactCalls = calls[subjectSpec.name];
  const baseCalls = calls[baseSpec.name];

  const toolpact = await readProfile("toolpact");
  const base = await readProfile("base");
  const toolpactSummary = summarizeProfile(toolpact.profile, { startAt: isHttpServerFrame });
  const baseSummary = summarizeProfile(base.profile, { startAt: isHttpServerFrame });
  const top = values.top === undefined ? {} : { top: Number(values.top) };
  console.log(`## Profile: ${subject.title}\n`);
  console.log(
    `Each server got about ${(WARMUP + measured).toLocaleString("en-US")} calls over HTTP (${WARMUP.toLocaleString("en-US")} warm-up, then ` +
      `${ROUNDS} interleaved rounds, ${values.sequential ? "all sequential" : "half sequential and half at 32 in flight"}), sampled every 250 µs from its first request on. ` +
      "Both servers ran at the same time and took turns, so drift in machine load touches both alike.\n",
  );
  console.log("### Server CPU time per call by component\n");
  console.log(compareComponents(toolpactSummary, baseSummary, { callsA: toolpactCalls, callsB: baseCalls, labelA: subjectSpec.label, labelB: baseSpec.label }));
  console.log(`\n### ${subjectSpec.label}\n`);
  console.log(profileTables(toolpactSummary, { calls: toolpactCalls, ...top }));
  console.log(`\n### ${baseSpec.label}\n`);
  console.log(profileTables(baseSummary, { calls: baseCalls, top: 10, ...top }));
  if (values.keep) console.log(`\nprofiles kept: ${toolpact.file} and ${base.file} (open them in Chrome DevTools > Performance)`);
} finally {
  await stopAllChildren();
  if (!values.keep) await rm(dir, { recursive: true, force: true });
}
