/**
 * The checkpoint worker thread's body: opens the activity chain on a connection of its own and runs each
 * checkpoint it is asked for, so reading, hashing and signing events never take the calls' thread.
 * Messages in: `{ id, options }` to run, `{ close: true }` to close. Out: `{ id, run }` or `{ id, error }`.
 */
import { parentPort, workerData } from "node:worker_threads";
import { openActivityChain } from "../store/open-activity-chain.js";
import type { StoreLocation } from "../store/store-location.js";
import { checkpointActivity, type CheckpointOptions } from "./chain-checkpointer.js";
import { auditKeyFromSeed } from "./checkpoint-key.js";

const port = parentPort;
if (port === null) throw new Error("checkpoint-worker.js runs as a worker thread, started by the runtime");

const data = workerData as { readonly location: StoreLocation; readonly seed: Uint8Array };
const opened = openActivityChain(data.location);
const key = auditKeyFromSeed(data.seed);

port.on("message", (message: { readonly id: number; readonly options: CheckpointOptions } | { readonly close: true }) => {
  if ("close" in message) {
    void opened.close().finally(() => port.close());
    return;
  }
  checkpointActivity(opened.chain, key, message.options).then(
    (run) => port.postMessage({ id: message.id, run }),
    (error: unknown) => port.postMessage({ id: message.id, error: error instanceof Error ? error.message : String(error) }),
  );
});
