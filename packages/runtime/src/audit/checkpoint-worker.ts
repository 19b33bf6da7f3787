/**
 * The checkpoint worker thread's body: opens the activity chain on a connection of its own and runs each
 * checkpoint it is asked for, so reading, hashing and signing events never take the calls' thread. It
 * only reads: each batch's links and checkpoint go back to the calls' thread, which writes them through
 * the store the calls use (see `CheckpointThread`).
 * Messages in: `{ id, options }` to run, `{ extended, ok }` or `{ extended, error }` answering a write,
 * `{ close: true }` to close. Out: `{ id, run }` or `{ id, error }`, and `{ extend, extension }` asking for a write.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { ChainExtension } from "../store/activity-chain.js";
import { openActivityChain } from "../store/open-activity-chain.js";
import type { StoreLocation } from "../store/store-location.js";
import { checkpointActivity, type CheckpointOptions, type CheckpointedChain } from "./chain-checkpointer.js";
import { auditKeyFromSeed } from "./checkpoint-key.js";

const port = parentPort;
if (port === null) throw new Error("checkpoint-worker.js runs as a worker thread, started by the runtime");

type Message =
  | { readonly id: number; readonly options: CheckpointOptions }
  | { readonly extended: number; readonly ok?: boolean; readonly error?: string }
  | { readonly close: true };

const data = workerData as { readonly location: StoreLocation; readonly seed: Uint8Array };
const opened = openActivityChain(data.location);
const key = auditKeyFromSeed(data.seed);
const writes = new Map<number, { resolve(ok: boolean): void; reject(error: Error): void }>();
let nextWrite = 0;

/** The chain as read here and written on the calls' thread: an extension goes there and its answer comes back. */
const chain: CheckpointedChain = {
  listTenants: () => opened.chain.listTenants(),
  latestCheckpoint: (tenantId) => opened.chain.latestCheckpoint(tenantId),
  readUnlinked: (tenantId, range) => opened.chain.readUnlinked(tenantId, range),
  extendChain: (extension: ChainExtension) =>
    new Promise<boolean>((resolve, reject) => {
      const extend = nextWrite++;
      writes.set(extend, { resolve, reject });
      port.postMessage({ extend, extension });
    }),
};

port.on("message", (message: Message) => {
  if ("close" in message) {
    void opened.close().finally(() => port.close());
  } else if ("extended" in message) {
    const waiting = writes.get(message.extended);
    writes.delete(message.extended);
    if (message.error === undefined) waiting?.resolve(message.ok === true);
    else waiting?.reject(new Error(message.error));
  } else {
    checkpointActivity(chain, key, message.options).then(
      (run) => port.postMessage({ id: message.id, run }),
      (error: unknown) => port.postMessage({ id: message.id, error: error instanceof Error ? error.message : String(error) }),
    );
  }
});
