/**
 * How a long-running command (`toolpact serve`, `toolpact dev`) hears that it should stop. One request to
 * stop can arrive as more than one signal: a terminal's Ctrl-C reaches every process of the foreground
 * group, and `timeout` signals its child and then the child's whole group. So a repeat that comes soon
 * after the first signal is the same request; only a later one asks to stop at once.
 */

/** A repeat of a stop signal within this long of the first is the same request, ms. */
export const REPEAT_WINDOW_MS = 1_000;

/** The stop request of one command: `first` resolves with the first signal; `again` runs on a later one. */
export interface StopSignals {
  readonly first: Promise<NodeJS.Signals>;
  /** Stops listening (the command has stopped): a signal after this one has its default effect again. */
  done(): void;
}

/**
 * Listens for `signals` until `done()`. The first resolves `first`; a repeat within REPEAT_WINDOW_MS of
 * it is ignored; one after that calls `again(signal)`, once (to stop at once).
 */
export function listenForStop(signals: readonly NodeJS.Signals[], again: (signal: NodeJS.Signals) => void, now: () => number = Date.now): StopSignals {
  let firstAt: number | undefined;
  let forced = false;
  let resolveFirst!: (signal: NodeJS.Signals) => void;
  const first = new Promise<NodeJS.Signals>((resolve) => {
    resolveFirst = resolve;
  });
  const heard = (signal: NodeJS.Signals): void => {
    if (firstAt === undefined) {
      firstAt = now();
      resolveFirst(signal);
    } else if (!forced && now() - firstAt >= REPEAT_WINDOW_MS) {
      forced = true;
      again(signal);
    }
  };
  for (const signal of signals) process.on(signal, heard);
  return {
    first,
    done() {
      for (const signal of signals) process.off(signal, heard);
    },
  };
}
