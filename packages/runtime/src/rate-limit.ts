/** Keys tracked before stale windows are swept. */
const SWEEP_AT = 10_000;

/**
 * A fixed-window counter per key (tenant, caller, actor): at most `limit` events per window. Kept in
 * this process: with several instances, each allows `limit`.
 */
export class WindowRateLimiter {
  readonly #windows = new Map<string, { start: number; count: number }>();
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #clock: () => number;

  constructor(limit: number, windowMs: number, clock: () => number) {
    this.#limit = limit;
    this.#windowMs = windowMs;
    this.#clock = clock;
  }

  /** Counts one event; undefined when allowed, else how many ms until the window frees up. */
  take(key: string): number | undefined {
    const now = this.#clock();
    let window = this.#windows.get(key);
    if (window === undefined || now - window.start >= this.#windowMs) {
      if (window === undefined && this.#windows.size >= SWEEP_AT) this.#sweep(now);
      window = { start: now, count: 0 };
      this.#windows.set(key, window);
    }
    if (window.count >= this.#limit) return Math.max(1, window.start + this.#windowMs - now);
    window.count++;
    return undefined;
  }

  #sweep(now: number): void {
    for (const [key, window] of this.#windows) if (now - window.start >= this.#windowMs) this.#windows.delete(key);
  }
}
