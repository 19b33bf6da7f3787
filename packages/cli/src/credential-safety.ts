import { readFileSync, statSync } from "node:fs";

/**
 * Two rules for credentials the CLI handles: they never travel over plain http to another machine
 * unless the user says the network is trusted (`--insecure`), and a file holding one is readable by
 * its owner alone.
 */

/** Whether `hostname` (as URL parses it) is this machine: localhost, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "localhost" || host.endsWith(".localhost") || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === "::1" || host === "0:0:0:0:0:0:0:1";
}

/**
 * Refuses to send credentials to `url` over plain http unless it is this machine or `insecure` is set.
 * @returns the problem, for the command to print, or undefined when the URL is fine.
 */
export function plainHttpProblem(url: string, flag: string, insecure: boolean): string | undefined {
  if (insecure || !URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  if (parsed.protocol !== "http:" || isLoopbackHost(parsed.hostname)) return undefined;
  return (
    `${flag} ${url} would send the plugin key and actor token unencrypted to ${parsed.host}, which is not this machine: ` +
    "use https://, or pass --insecure if the network between you is trusted"
  );
}

/** A credentials file that others can read: the message says which file and how to fix it. */
export class CredentialFileError extends Error {}

/**
 * Reads a file that holds a secret or a credential, refusing it when its group or others may read or
 * write it (mode & 0o077), as ssh does with a private key. On Windows, where modes do not say that, it
 * only reads.
 * @throws CredentialFileError naming the file (as `shown`), its mode and `chmod 600 <file>`.
 */
export function readCredentialFile(file: string, what: string, shown = file): string {
  assertOwnerOnly(file, what, shown);
  return readFileSync(file, "utf8");
}

/** Throws CredentialFileError when `file` exists and its group or others have any access to it. */
export function assertOwnerOnly(file: string, what: string, shown = file): void {
  if (process.platform === "win32") return;
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch {
    return; // missing or unreadable: the read that follows says so
  }
  if ((mode & 0o077) === 0) return;
  const who = [(mode & 0o070) !== 0 ? "its group" : undefined, (mode & 0o007) !== 0 ? "other users" : undefined].filter(Boolean).join(" and ");
  throw new CredentialFileError(
    `${shown} holds ${what} but ${who} may read or change it (mode ${(mode & 0o777).toString(8).padStart(4, "0")}): run chmod 600 ${shown}, then try again`,
  );
}
