/**
 * Stops an isolated child that spins. After a call to it was cancelled (its timeout), the host pings the
 * child; one that does not answer within `unresponsiveMs` runs a loop that never yields, which nothing but
 * a kill ends. The supervisor kills it (SIGKILL) and starts it again with its back-off.
 */
import type { Logger } from "@toolpact/runtime";
import type { UpstreamSupervisor } from "../upstream/upstream-supervisor.js";

/** How long a child may take to answer a ping after a cancelled call before it is killed, ms. */
export const UNRESPONSIVE_MS = 1000;

/** What the watchdog watches. */
export interface ChildWatchdogOptions {
  readonly supervisor: Pick<UpstreamSupervisor, "ping" | "kill" | "connected">;
  readonly pluginId: string;
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

  /** Pings the child; kills it when it does not answer in time. Never throws. */
  check(): void {
    const { supervisor, pluginId, logger } = this.#options;
    // Not connected: it already ended, or is restarting; nothing to stop.
    if (this.#checking || !supervisor.connected) return;
    this.#checking = true;
    const unresponsiveMs = this.#options.unresponsiveMs ?? UNRESPONSIVE_MS;
    supervisor
      .ping(unresponsiveMs)
      .then((answered) => {
        if (answered || !supervisor.connected) return;
        const killed = supervisor.kill(`no answer to a ping within ${unresponsiveMs} ms after a cancelled call: it spins`);
        logger.warn({ event: "isolated_process_unresponsive", pluginId, afterMs: unresponsiveMs, killed });
      })
      .catch(() => {})
      .finally(() => {
        this.#checking = false;
      });
  }
}
