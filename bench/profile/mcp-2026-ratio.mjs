// The 2026-07-28 MCP rows of the overhead group alone, with the overhead group's own servers, drivers and
// default settings: the MCP SDK v2's stateless server beside toolpact's bridge (and the 2025-11-25 pair for
// reference), interleaved, paired p50 and throughput ratios. About 40 s; uses the built dist.
// Usage: node bench/profile/mcp-2026-ratio.mjs [--runs 1]
import { parseArgs } from "node:util";
import { stopAllChildren } from "../lib/processes.mjs";
import { pairedRatios } from "../lib/rounds.mjs";
import { SETTINGS } from "../lib/settings.mjs";
import { SYSTEMS, measureSystems } from "../overhead/run.mjs";

const { values } = parseArgs({ options: { runs: { type: "string", default: "1" }, quiet: { type: "boolean" } } });
const NAMES = ["mcp-v2-2026", "toolpact-mcp-2026", "mcp-stateless", "toolpact-mcp-stateless"];
const settings = { ...SETTINGS.default, inFlight: 32 };
const systems = SYSTEMS.filter((system) => NAMES.includes(system.name));
try {
  for (let run = 0; run < Number(values.runs); run++) {
    const results = await measureSystems(systems, settings, values.quiet ? () => {} : (line) => console.error(line));
    const p50 = (name) => results.get(name).latency.p50.toFixed(3);
    const modern = pairedRatios(results.get("toolpact-mcp-2026"), results.get("mcp-v2-2026"));
    const legacy = pairedRatios(results.get("toolpact-mcp-stateless"), results.get("mcp-stateless"));
    console.log(
      `run ${run + 1}: 2026 p50 toolpact ${p50("toolpact-mcp-2026")} ms / v2 SDK ${p50("mcp-v2-2026")} ms = ${modern.p50.toFixed(3)}x ` +
        `(throughput ${modern.throughput.toFixed(3)}x) | 2025 stateless p50 ${p50("toolpact-mcp-stateless")} / ${p50("mcp-stateless")} = ` +
        `${legacy.p50.toFixed(3)}x (throughput ${legacy.throughput.toFixed(3)}x)`,
    );
  }
} finally {
  await stopAllChildren();
}
