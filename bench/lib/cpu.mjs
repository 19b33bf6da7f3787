// CPU time, which holds on a busy machine where wall time and throughput do not: this process's threads
// (process.cpuUsage, Linux /proc) and the local PostgreSQL server's processes.
import { readFileSync, readdirSync } from "node:fs";

/** User + system CPU of a /proc stat file, µs (10 ms ticks); undefined when it cannot be read (the process has gone). */
export function statCpuUs(file) {
  let stat;
  try {
    stat = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** The main thread's CPU so far, µs (its task id is the process's): the calls' thread of the benchmarks. */
export const callsThreadCpuUs = () => statCpuUs(`/proc/self/task/${process.pid}/stat`);

/** Every thread of this process, µs. */
export const processCpuUs = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/** The PostgreSQL server's CPU, µs: every process named `postgres` on this machine (by pid, so that the delta
 * over a round counts only processes alive at both ends; the pool's connections live as long as the world). */
export function postgresCpuByPid() {
  const cpu = new Map();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    let comm;
    try {
      comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
    } catch {
      continue;
    }
    const used = comm === "postgres" ? statCpuUs(`/proc/${pid}/stat`) : undefined;
    if (used !== undefined) cpu.set(pid, used);
  }
  return cpu;
}

export function postgresCpuSince(before) {
  let total = 0;
  for (const [pid, now] of postgresCpuByPid()) total += now - (before.get(pid) ?? 0);
  return total;
}

/**
 * The process that serves: with secrets in its environment `toolpact serve` re-executes itself, and the
 * started child is then the supervisor of the one serving (Linux: read from /proc); undefined elsewhere.
 */
export function servingPid(child) {
  try {
    const children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
    return children.length === 1 ? Number(children[0]) : child.pid;
  } catch {
    return undefined;
  }
}
