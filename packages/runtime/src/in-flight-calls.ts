import { ToolpactError } from "@toolpact/contract";

/**
 * The runtime's in-flight accounting: every call (and admin write, and task call) runs through `track`,
 * which counts it and refuses it once shutdown has begun; `drain` waits for those in flight at close.
 */
export class InFlightCalls {
  readonly #shuttingDown: () => boolean;
  #count = 0;
  #drained: (() => void) | undefined;

  /** `shuttingDown` says whether new work is refused (the runtime's close has begun). */
  constructor(shuttingDown: () => boolean) {
    this.#shuttingDown = shuttingDown;
  }

  /** Calls in the runtime right now. */
  get count(): number {
    return this.#count;
  }

  async track<T>(work: () => Promise<T>): Promise<T> {
    if (this.#shuttingDown()) {
      throw new ToolpactError("SHUTTING_DOWN", "the runtime is shutting down: retry against another instance");
    }
    this.#count++;
    try {
      return await work();
    } finally {
      this.#count--;
      if (this.#count === 0) this.#drained?.();
    }
  }

  /** Waits for in-flight calls to finish, at most `timeoutMs`; false when some did not. */
  async drain(timeoutMs: number): Promise<boolean> {
    const drained = new Promise<void>((resolve) => {
      this.#drained = resolve;
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), timeoutMs);
    });
    const late = await Promise.race([drained.then(() => false), timedOut]);
    clearTimeout(timer);
    return !late;
  }
}
