import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/** The file in a dev session's folder that names the `toolpact dev` process owning it. */
export const DEV_OWNER_FILE = "pid";

/** Who owns a dev session's state: the `toolpact dev` process that wrote it, and whether it still runs. */
export interface DevStateOwner {
  /** Undefined when the state names no owner (a crash before it was written, or state from an older CLI). */
  readonly pid: number | undefined;
  /** False when the owner is gone: then the state is stale, and no server accepts what it holds. */
  readonly alive: boolean;
}

/** Reads the owner of the dev state in `dir` (`<project>/.toolpact/dev`). */
export function devStateOwner(dir: string): DevStateOwner {
  let pid: number | undefined;
  try {
    const text = readFileSync(path.join(dir, DEV_OWNER_FILE), "utf8").trim();
    pid = /^\d+$/.test(text) ? Number(text) : undefined;
  } catch {
    pid = undefined;
  }
  return { pid, alive: pid !== undefined && isRunning(pid) };
}

/** Records this process as the owner of the dev state in `dir`. */
export function claimDevState(dir: string): void {
  writeFileSync(path.join(dir, DEV_OWNER_FILE), `${process.pid}\n`, { mode: 0o600 });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as { code?: unknown }).code === "EPERM";
  }
}
