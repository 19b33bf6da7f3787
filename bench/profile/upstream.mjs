// Profiles one sequential caller of the upstream benchmark's tool (server-everything's `echo` over stdio),
// directly with the MCP SDK v2 client or through toolpact's `runtime.execute` (bench/upstream/systems.mjs).
// Profile both and compare: what the through-toolpact profile has beyond the direct one is toolpact's cost.
// Usage: node --cpu-prof --cpu-prof-dir=<dir> bench/profile/upstream.mjs [toolpact|direct] [calls]
import { startDirect, startThroughToolpact } from "../upstream/systems.mjs";

const [subject = "toolpact", count = "10000"] = process.argv.slice(2);
const calls = Number(count);
const system = subject === "direct" ? await startDirect() : await startThroughToolpact();
for (let i = 0; i < 2_000; i++) await system.call(i);
const started = performance.now();
for (let i = 0; i < calls; i++) await system.call(2_000 + i);
const ms = performance.now() - started;
console.log(`${subject}: ${calls} sequential calls, ${((ms * 1000) / calls).toFixed(1)} µs each`);
await system.close();
