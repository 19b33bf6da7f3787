import { readFileSync, statSync } from "node:fs";

/**
 * Reads a file holding a credential, refusing it when its group or others have any access to it
 * (mode & 0o077), as ssh does with a private key; on Windows, where modes do not say that, it only reads.
 * Trailing line breaks are dropped, as a secret manager's mounted file has them.
 * @throws Error naming the file (as `shown`), what it holds, its mode and `chmod 600`; or that it is missing or empty.
 */
export function readOwnerOnlyFile(file: string, what: string, shown = file): string {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new Error(`${shown} holds ${what} but cannot be read${typeof code === "string" ? ` (${code})` : ""}: create it with the secret in it, mode 600`);
  }
  if (process.platform !== "win32" && (mode & 0o077) !== 0) {
    const who = [(mode & 0o070) !== 0 ? "its group" : undefined, (mode & 0o007) !== 0 ? "other users" : undefined].filter(Boolean).join(" and ");
    throw new Error(`${shown} holds ${what} but ${who} may read or change it (mode ${(mode & 0o777).toString(8).padStart(4, "0")}): run chmod 600 ${shown}`);
  }
  const text = readFileSync(file, "utf8").replace(/[\r\n]+$/, "");
  if (text.trim() === "") throw new Error(`${shown} holds ${what} but is empty: write the secret into it`);
  return text;
}
