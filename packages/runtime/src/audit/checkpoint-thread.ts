/**
 * Runs activity checkpoints on a worker thread with its own connection to the store (`checkpoint-worker.ts`),
 * so the reads, hashes and signatures of a checkpoint never take the thread that serves calls: with the
 * job on, calls keep their throughput on a machine with a core to spare. The worker only reads: each
 * batch's checkpoint with its links (one row) comes back here and is written through the store the calls
 * use, as one more write among theirs. On SQLite that matters: a write from the worker's own connection
 * would hold the database's write lock, and a commit of the calls meeting it sleeps in SQLite's busy
 * handler (1 ms, then 2, then 5...) with the whole event loop. Started on first use; a store held in
 * memory (no location) or a worker that cannot start runs them on the calling thread instead.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { ActivityChainStore, ChainExtension } from "../store/activity-chain.js";
import type { StoreLocation } from "../store/store-location.js";
import type { CheckpointOptions, CheckpointRun } from "./chain-checkpointer.js";

/** The worker's module: beside this one once built; from source (tests), the built copy. */
function workerFile(): string | undefined {
  const beside = fileURLToPath(new URL("./checkpoint-worker.js", import.meta.url));
  if (existsSync(beside)) return beside;
  const built = beside.replace(/([\\/])src([\\/]audit[\\/]checkpoint-worker\.js)$/, "$1dist$2");
  return existsSync(built) ? built : undefined;
}

/** A checkpoint worker thread; `run` sends one checkpoint to it. */
export class CheckpointThread {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve(run: CheckpointRun): void; reject(error: Error): void }>();
  #next = 0;
  #failure: Error | undefined;

  private constructor(worker: Worker, chain: ActivityChainStore) {
    this.#worker = worker;
    worker.on("message", (message: { id: number; run?: CheckpointRun; error?: string } | { extend: number; extension: ChainExtension }) => {
      if ("extend" in message) {
        const { extend: extended, extension } = message;
        chain.extendChain(extension).then(
          (ok) => worker.postMessage({ extended, ok }),
          (error: unknown) => worker.postMessage({ extended, error: error instanceof Error ? error.message : String(error) }),
        );
        return;
      }
      const waiting = this.#pending.get(message.id);
      this.#pending.delete(message.id);
      if (this.#pending.size === 0) worker.unref();
      if (message.run !== undefined) waiting?.resolve(message.run);
      else waiting?.reject(new Error(`the audit checkpoint worker failed: ${message.error}`));
    });
    const fail = (error: Error) => {
      this.#failure = error;
      for (const waiting of this.#pending.values()) waiting.reject(error);
      this.#pending.clear();
    };
    worker.on("error", (error) => fail(new Error(`the audit checkpoint worker stopped: ${error.message}`)));
    worker.on("exit", (code) => fail(new Error(`the audit checkpoint worker exited (code ${code})`)));
    worker.unref();
  }

  /**
   * A thread reading the store at `location` and signing with `seed`, whose checkpoints are written
   * through `chain` (the calls' store); undefined when none can run (then run checkpoints inline).
   */
  static start(location: StoreLocation | undefined, seed: Uint8Array | undefined, chain: ActivityChainStore): CheckpointThread | undefined {
    const file = workerFile();
    if (location === undefined || seed === undefined || file === undefined) return undefined;
    try {
      return new CheckpointThread(new Worker(file, { workerData: { location, seed }, execArgv: [] }), chain);
    } catch {
      return undefined;
    }
  }

  /** False once the worker stopped: checkpoints then run inline. */
  get alive(): boolean {
    return this.#failure === undefined;
  }

  run(options: CheckpointOptions): Promise<CheckpointRun> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    const id = this.#next++;
    return new Promise<CheckpointRun>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // Kept alive while a run is awaited (an idle worker never holds the process open).
      this.#worker.ref();
      this.#worker.postMessage({ id, options });
    });
  }

  /** Closes the worker's connection and ends it (at most 2 s, then it is terminated). */
  async stop(): Promise<void> {
    if (this.#failure !== undefined) return;
    this.#worker.ref();
    const exited = new Promise<void>((resolve) => this.#worker.once("exit", () => resolve()));
    this.#worker.postMessage({ close: true });
    const timer = setTimeout(() => void this.#worker.terminate(), 2000);
    await exited;
    clearTimeout(timer);
  }
}
