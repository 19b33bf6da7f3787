/** What `pnpm start` writes for the `token` script: where the server is and how its identity service signs. */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** `pnpm start`'s data folder: EXAMPLES_START_DIR, else `.toolpact/start/` at the repository root (git-ignored). */
export const START_DIR = path.resolve(process.env.EXAMPLES_START_DIR ?? fileURLToPath(new URL("../../../.toolpact/start/", import.meta.url)));
/** The session file in it (mode 0600). */
export const START_SESSION_FILE = path.join(START_DIR, "session.json");

/** The contents of the session file. */
export interface StartSession {
  readonly url: string;
  readonly tenantId: string;
  readonly issuer: string;
  /** The actor secret, base64. */
  readonly actorSecret: string;
  readonly adminKey: string;
  readonly assistantPluginKey: string;
}

/** Writes the session file, readable by its owner only. */
export function writeStartSession(session: StartSession): void {
  writeFileSync(START_SESSION_FILE, `${JSON.stringify(session, null, 2)}\n`, { mode: 0o600 });
}

/** Reads the session file; throws saying to run `pnpm start` when there is none. */
export function readStartSession(): StartSession {
  try {
    return JSON.parse(readFileSync(START_SESSION_FILE, "utf8")) as StartSession;
  } catch (error) {
    throw new Error(
      `no running \`pnpm start\` session found (${START_SESSION_FILE}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): start one with \`pnpm start\``,
    );
  }
}
