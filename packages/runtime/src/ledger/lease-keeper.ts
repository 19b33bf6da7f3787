import type { Logger } from "../logger.js";
import type { LeaseRenewal, Store } from "../store/store.js";

/**
 * Keeps the leases of this host's running operations alive: one timer renews all of them together
 * every third of the lease time, so a call pays only a map insert and delete.
 */
export class LeaseKeeper {
  readonly #held = new Map<string, LeaseRenewal>();
  readonly #store: Store;
  readonly #owner: string;
  readonly #leaseMs: number;
  readonly #clock: () => number;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;
  #renewing = false;

  constructor(options: { store: Store; owner: string; leaseMs: number; clock: () => number; logger: Logger }) {
    this.#store = options.store;
    this.#owner = options.owner;
    this.#leaseMs = options.leaseMs;
    this.#clock = options.clock;
    this.#logger = options.logger;
  }

  /** A fresh lease's expiry. */
  expiry(now: number): number {
    return now + this.#leaseMs;
  }

  hold(lease: LeaseRenewal): void {
    this.#held.set(lease.operationId, lease);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => void this.renewNow(), Math.max(250, Math.floor(this.#leaseMs / 3)));
      this.#timer.unref();
    }
  }

  release(operationId: string): void {
    this.#held.delete(operationId);
  }

  /** Renews every held lease now; returns how many the store extended. */
  async renewNow(): Promise<number> {
    if (this.#renewing || this.#held.size === 0) return 0;
    this.#renewing = true;
    try {
      const leases = [...this.#held.values()];
      const renewed = await this.#store.renewLeases(this.#owner, leases, this.#clock() + this.#leaseMs);
      if (renewed < leases.length) {
        this.#logger.warn({ event: "lease_renewal_partial", held: leases.length, renewed });
      }
      return renewed;
    } catch (error) {
      this.#logger.error({ event: "lease_renewal_failed", errorClass: (error as Error)?.constructor?.name ?? "Error" });
      return 0;
    } finally {
      this.#renewing = false;
    }
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
