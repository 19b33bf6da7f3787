// Where a bench run keeps its files: one directory per run (bench/run.mjs creates it and removes it at the
// end, interrupted or not), handed to child processes through the environment.
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

/** The environment variable naming the run's scratch directory. */
export const SCRATCH_ENV = "TOOLPACT_BENCH_SCRATCH";

/** A new directory for one server, store or profile, inside the run's scratch directory when there is one. */
export function scratchDir(prefix) {
  return mkdtemp(path.join(process.env[SCRATCH_ENV] ?? tmpdir(), prefix));
}
