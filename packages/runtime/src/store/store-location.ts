/**
 * Where a store keeps its data, in terms a worker thread can open a connection of its own with (the audit
 * checkpointer's). Only what can cross a thread: no functions, no loggers. A store held in memory has none.
 */
export type StoreLocation =
  | { readonly kind: "sqlite"; readonly path: string; readonly busyTimeoutMs: number; readonly nativeBinding?: string }
  | {
      readonly kind: "postgres";
      readonly url: string;
      readonly schema?: string;
      readonly connectionTimeoutMs: number;
      readonly statementTimeoutMs: number;
    };

/** A SQLite path another connection can open: a file, not `:memory:` or an in-memory `file:` URI. */
export function sqliteFileLocation(settings: {
  readonly path: string;
  readonly busyTimeoutMs: number;
  readonly nativeBinding: string | undefined;
}): StoreLocation | undefined {
  const { path, busyTimeoutMs, nativeBinding } = settings;
  if (path === ":memory:" || path === "" || (path.startsWith("file:") && /mode=memory|:memory:/.test(path))) return undefined;
  return nativeBinding === undefined ? { kind: "sqlite", path, busyTimeoutMs } : { kind: "sqlite", path, busyTimeoutMs, nativeBinding };
}
