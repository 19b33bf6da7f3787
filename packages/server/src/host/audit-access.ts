/**
 * What `toolpact audit` works on: the configured database's activity chain, the checkpoint key derived
 * from the storage key (only for commands that sign or print it), and the configured settle window.
 */
import { type ActivityChainStore, type AuditKey, AUDIT_DEFAULTS, deriveAuditKey, type Store } from "@toolpact/runtime";
import { CONFIG_FILE, type HostConfig } from "./config.js";
import { describeDatabase, openStore } from "./database.js";
import { HostError } from "./host-error.js";
import { decodeBase64 } from "./secrets.js";
import { readSecretVariable } from "./secret-variables.js";

/** An open activity chain; `close` releases its database. */
export interface AuditAccess {
  readonly chain: ActivityChainStore;
  /** The database, for people (no password). */
  readonly database: string;
  /** How old an event must be before a checkpoint links it, ms (the config's `audit.settleSeconds`). */
  readonly settleMs: number;
  close(): Promise<void>;
}

/** Opens (and migrates) the configured database for `toolpact audit`. */
export async function openAuditAccess(config: HostConfig): Promise<AuditAccess> {
  const store: Store = await openStore(config, {});
  return {
    chain: store.activityChain,
    database: describeDatabase(config.database, config.databaseOptions),
    settleMs: Math.round((config.audit.settleSeconds ?? AUDIT_DEFAULTS.settleSeconds) * 1000),
    close: () => store.close(),
  };
}

/**
 * The checkpoint key of the configured storage key (TOOLPACT_STORAGE_KEY, its `_FILE`, or
 * `secrets.storageKey`), the same key the server signs with. Reads only that secret.
 */
export function readAuditKey(config: HostConfig, env: NodeJS.ProcessEnv): AuditKey {
  const text = readSecretVariable(env, "TOOLPACT_STORAGE_KEY") ?? config.secrets.storageKey;
  if (text === undefined) {
    throw new HostError(
      `the storage key is not set: checkpoints are signed with a key derived from it; set TOOLPACT_STORAGE_KEY (or "secrets.storageKey" in ${CONFIG_FILE}) ` +
        "to the server's value, or verify with --public-key <key> (as `toolpact audit key` printed it where the key is)",
    );
  }
  const storageKey = decodeBase64("TOOLPACT_STORAGE_KEY", text);
  if (storageKey.length < 32) throw new HostError(`TOOLPACT_STORAGE_KEY is ${storageKey.length} bytes: it must be at least 32, as the server's is`);
  return deriveAuditKey(storageKey);
}
