import { ToolpactError } from "@toolpact/contract";

/** STORE_UNAVAILABLE for a SQLite failure: what failed, the driver's code, and what to check. */
export function storeUnavailable(what: string, cause: unknown): ToolpactError {
  const code = (cause as { code?: unknown } | undefined)?.code;
  const detail = typeof code === "string" ? ` (${code})` : "";
  return new ToolpactError(
    "STORE_UNAVAILABLE",
    `${what}${detail}: check the database file, its disk and its permissions`,
    {},
    {
      cause,
    },
  );
}

/** What a failed write or read rejects with: a ToolpactError or TypeError (a caller's bug) as it is, anything else STORE_UNAVAILABLE. */
export function asStoreError(error: unknown): unknown {
  if (error instanceof ToolpactError) return error;
  if (error instanceof TypeError) return error;
  return storeUnavailable("the SQLite store failed", error);
}

/** How to build better-sqlite3's native binding, with npm and with pnpm (which skips build scripts it was not told to run). */
const BUILD_THE_BINDING =
  "build it, with npm: `npm rebuild better-sqlite3`; with pnpm: `pnpm approve-builds` (or add `allowBuilds: { better-sqlite3: true }` " +
  "to pnpm-workspace.yaml), then `pnpm rebuild better-sqlite3`";

/**
 * The operator's account of better-sqlite3 failing to load its native binding (`better_sqlite3.node`):
 * never built (the install skipped its build script), or built for another Node.js. Undefined for any
 * other failure.
 */
export function nativeBindingProblem(error: unknown): ToolpactError | undefined {
  const message = error instanceof Error ? error.message : "";
  const code = (error as { code?: unknown } | undefined)?.code;
  const missing = /Could not locate the bindings file/.test(message) || (code === "MODULE_NOT_FOUND" && /better_sqlite3\.node/.test(message));
  const mismatched = /NODE_MODULE_VERSION/.test(message);
  if (!missing && !mismatched) return undefined;
  const what = missing
    ? "better-sqlite3 is installed but its native binding (better_sqlite3.node) is missing: it was never built " +
      "(the package manager skipped or failed its install script)"
    : `better-sqlite3's native binding was built for another Node.js version than this one (${process.version})`;
  return new ToolpactError("STORE_UNAVAILABLE", `${what}. To ${BUILD_THE_BINDING}`, {}, { cause: error });
}
