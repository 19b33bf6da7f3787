import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";

/** The background checkpoint: a worker thread with its own connection runs PASSIVE checkpoints. */
export interface Checkpointer {
  stop(): Promise<void>;
}

/** The worker's body (CommonJS, evaluated in the worker): a loop of PASSIVE checkpoints. */
const CHECKPOINT_WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const options = workerData.nativeBinding === undefined ? { timeout: 5000 } : { timeout: 5000, nativeBinding: workerData.nativeBinding };
const db = new Database(workerData.path, options);
const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
const timer = setInterval(() => {
  try { checkpoint.get(); } catch { parentPort.postMessage("failed"); }
}, workerData.intervalMs);
parentPort.on("message", () => { clearInterval(timer); db.close(); parentPort.close(); });
`;

/** Where and how often to checkpoint. */
export interface CheckpointSettings {
  readonly path: string;
  readonly intervalMs: number;
  readonly nativeBinding: string | undefined;
}

/**
 * Starts the background checkpoint for `db`'s file; the writing connection then leaves checkpoints to
 * the worker, and takes them back if the worker fails or goes away. Undefined when no worker could start.
 */
export function startCheckpointer(db: Database.Database, settings: CheckpointSettings): Checkpointer | undefined {
  let worker: Worker;
  try {
    worker = new Worker(CHECKPOINT_WORKER, {
      eval: true,
      // The body is CommonJS: the parent's flags (e.g. --input-type=module) must not change how it is read.
      execArgv: [],
      workerData: {
        path: settings.path,
        driver: createRequire(import.meta.url).resolve("better-sqlite3"),
        intervalMs: settings.intervalMs,
        nativeBinding: settings.nativeBinding,
      },
    });
  } catch {
    return undefined;
  }
  db.pragma("wal_autocheckpoint = 0");
  let stopping = false;
  let exited = false;
  const takeBack = () => {
    if (!stopping && db.open) db.pragma("wal_autocheckpoint = 1000");
  };
  worker.on("message", takeBack);
  worker.on("error", takeBack);
  worker.on("exit", () => {
    exited = true;
    takeBack();
  });
  worker.unref();
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        stopping = true;
        // A worker that already exited (or never started) has nothing to close.
        if (exited || worker.threadId < 0) return resolve();
        // Keep the process alive until the worker has closed its connection; if it does not answer, end it.
        worker.ref();
        const fallback = setTimeout(
          () =>
            void worker.terminate().then(
              () => resolve(),
              () => resolve(),
            ),
          2000,
        );
        worker.once("exit", () => {
          clearTimeout(fallback);
          resolve();
        });
        worker.postMessage("stop");
      }),
  };
}
