/**
 * Stops an isolated child that spins. After a call to it was cancelled (its timeout), the host asks the
 * child for its tool list; a child that does not answer within `unresponsiveMs` runs a loop that never
 * yields, which nothing but a kill ends. The host kills it (SIGKILL) and the supervisor starts it again.
 * The child is found among the host's own child processes by its command line (Linux, /proc): a process
 * that is not the host's child, or claims another plugin's command line, is never signalled.
 */
import { readdirSync, readFileSync } from "node:fs";
import type { Logger } from "@toolpact/runtime";
import type { UpstreamSupervisor } from "../upstream/upstream-supervisor.js";

/** How long a child may take to answer after a cancelled call before it is killed, ms. */
export const UNRESPONSIVE_MS = 1000;

/** What the watchdog watches. */
export interface ChildWatchdogOptions {
  readonly supervisor: Pick<UpstreamSupervisor, "listTools">;
  readonly pluginId: string;
  /** The child's arguments after the node executable, as the host started it. */
  readonly args: readonly string[];
  readonly logger: Logger;
  readonly unresponsiveMs?: number;
}

/** Checks an isolated child after a cancelled call, one check at a time. */
export class ChildWatchdog {
  readonly #options: ChildWatchdogOptions;
  #checking = false;

  constructor(options: ChildWatchdogOptions) {
    this.#options = options;
  }

  /** Asks the child to answer; kills it when it does not in time. Never throws. */
  check(): void {
    if (this.#checking) return;
    this.#checking = true;
    const { supervisor, pluginId, logger } = this.#options;
    const unresponsiveMs = this.#options.unresponsiveMs ?? UNRESPONSIVE_MS;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), unresponsiveMs);
    });
    Promise.race([supervisor.listTools().then(() => "answered" as const), late])
      .then((answer) => {
        if (answer !== "late") return;
        const killed = this.#kill();
        logger.warn({ event: "isolated_process_unresponsive", pluginId, afterMs: unresponsiveMs, killed });
      })
      // Not connected (it already ended, or is restarting): nothing to stop.
      .catch(() => {})
      .finally(() => {
        clearTimeout(timer);
        this.#checking = false;
      });
  }

  /** Kills the host's children whose command line is this child's; answers how many. */
  #kill(): number {
    let killed = 0;
    for (const pid of ownChildren()) {
      if (!sameArgs(commandLine(pid), this.#options.args)) continue;
      try {
        process.kill(pid, "SIGKILL");
        killed++;
      } catch {
        // it ended meanwhile
      }
    }
    return killed;
  }
}

/** The host process's direct children (Linux); none where /proc cannot say. */
function ownChildren(): number[] {
  try {
    return readdirSync(`/proc/${process.pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${process.pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(1, -1);
  } catch {
    return [];
  }
}

function sameArgs(actual: readonly string[], expected: readonly string[]): boolean {
  return actual.length === expected.length && actual.every((arg, index) => arg === expected[index]);
}
