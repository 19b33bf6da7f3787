// What a result was measured on: machine, load, versions.
import { readFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { postgresVersion } from "./postgres.mjs";

function packageVersion(relative) {
  try {
    return JSON.parse(readFileSync(fileURLToPath(new URL(`../node_modules/${relative}/package.json`, import.meta.url)), "utf8")).version;
  } catch {
    return "not installed";
  }
}

/** Cores, CPU model, memory, load average and the versions of everything compared. */
export async function describeMachine() {
  const postgres = await postgresVersion();
  return {
    cores: os.availableParallelism(),
    cpu: os.cpus()[0]?.model?.trim() ?? "unknown",
    memoryGiB: (os.totalmem() / 1024 ** 3).toFixed(1),
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    versions: {
      Node: process.version,
      "TypeScript 6": packageVersion("typescript"),
      "TypeScript 7": packageVersion("typescript7"),
      "tRPC (@trpc/server, @trpc/client)": `${packageVersion("@trpc/server")}, ${packageVersion("@trpc/client")}`,
      "MCP SDK (@modelcontextprotocol/sdk)": packageVersion("@modelcontextprotocol/sdk"),
      "MCP SDK v2 (@modelcontextprotocol/server, client)": `${packageVersion("@modelcontextprotocol/server")}, ${packageVersion("@modelcontextprotocol/client")}`,
      zod: packageVersion("zod"),
      "better-sqlite3": packageVersion("better-sqlite3"),
      "pg (node-postgres)": packageVersion("pg"),
      PostgreSQL: postgres.version ?? `not reachable (${postgres.error})`,
    },
  };
}

/** The 1-minute load average, two decimals. */
export const loadAverage = () => os.loadavg()[0].toFixed(2);
