/**
 * The callers waiting on platform requests in this process. A decision wakes them when the store
 * announces it (this process's at once; other instances' through the store's change feed, PostgreSQL's
 * NOTIFY); decisions the store cannot announce are seen when a sleep ends and the waiter reads again.
 */
export class ConfirmationWaiters {
  readonly #waiters = new Map<string, Set<() => void>>();
  /** Ends every wait when the runtime closes. */
  readonly #closing = new AbortController();

  /** True once the runtime is closing: waits answer with the status they have. */
  get closed(): boolean {
    return this.#closing.signal.aborted;
  }

  /** Sleeps up to `ms`, less if the request is decided here, `signal` aborts, or the runtime closes. */
  sleep(request: { readonly tenantId: string; readonly requestId: string }, ms: number, signal: AbortSignal | undefined): Promise<void> {
    const key = keyOf(request);
    return new Promise<void>((resolve) => {
      let waiters = this.#waiters.get(key);
      if (waiters === undefined) {
        waiters = new Set();
        this.#waiters.set(key, waiters);
      }
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.#closing.signal.removeEventListener("abort", done);
        const set = this.#waiters.get(key);
        set?.delete(done);
        if (set?.size === 0) this.#waiters.delete(key);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      waiters.add(done);
      signal?.addEventListener("abort", done, { once: true });
      this.#closing.signal.addEventListener("abort", done, { once: true });
    });
  }

  /** Wakes everyone waiting on `request` (it changed). */
  wake(request: { readonly tenantId: string; readonly requestId: string }): void {
    const waiters = this.#waiters.get(keyOf(request));
    if (waiters !== undefined) for (const wake of [...waiters]) wake();
  }

  /** Wakes every waiter (changes may have gone unheard: each reads its request again). */
  wakeAll(): void {
    for (const waiters of [...this.#waiters.values()]) for (const wake of [...waiters]) wake();
  }

  /** Ends every wait. */
  close(): void {
    this.#closing.abort();
  }
}

function keyOf(request: { readonly tenantId: string; readonly requestId: string }): string {
  return `${request.tenantId}\u0000${request.requestId}`;
}
