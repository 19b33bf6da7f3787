/**
 * `toolpact mcp`: the bridge over stdio for a local agent, forwarding to a toolpact server's HTTP API
 * with the caller's plugin key and actor token. The connection's first message decides its era: a
 * 2025-era `initialize` pins it to the legacy protocol (pushed URL elicitation), a 2026-07-28 request
 * makes every request stand alone (approval by `input_required`).
 */
import { readFile } from "node:fs/promises";
import { serveStdio as serveSdkStdio, StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import type { Logger } from "@toolpact/runtime";
import { createRemoteBackend, type CallerKeys } from "./remote-backend.js";
import { createRequestStateCodec } from "./request-state.js";
import { createToolServer } from "./tool-server.js";

/** The environment variables `toolpact mcp` reads the caller's credentials from. */
export const CALLER_KEY_ENV_VARS = { pluginKey: "TOOLPACT_PLUGIN_KEY", actorToken: "TOOLPACT_ACTOR_TOKEN" } as const;

/** Where the stdio bridge takes the caller's credentials from. */
export type CallerKeySource =
  | { readonly keys: CallerKeys }
  /** A JSON file `{ "pluginKey": "...", "actorToken": "..." }`, read again before every request (so a refreshed token is picked up). */
  | { readonly file: string };

/** Options of `serveStdio`. */
export interface StdioBridgeOptions {
  /** The toolpact server's base URL. */
  readonly url: string | URL;
  readonly credentials: CallerKeySource;
  readonly stdin?: NodeJS.ReadableStream;
  readonly stdout?: NodeJS.WritableStream;
  /** How long one confirmation wait round lasts, ms; default 10 s. */
  readonly waitRoundMs?: number;
  /** Diagnostics (stdout belongs to MCP). */
  readonly logger: Logger;
}

/** A running stdio bridge. */
export interface StdioBridge {
  /** Resolves when the client closes stdin or `close()` was called. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/** Serves MCP on stdin/stdout, forwarding every call to the server at `url`. */
export async function serveStdio(options: StdioBridgeOptions): Promise<StdioBridge> {
  const source = options.credentials;
  const backend = createRemoteBackend({
    url: options.url,
    keys: "keys" in source ? () => source.keys : () => readKeysFile(source.file),
    urlSetting: "the --url of toolpact mcp",
  });
  // States live as long as this process: a restarted bridge asks again (the approval page says so).
  const requestState = createRequestStateCodec();
  const transport = new StdioServerTransport(
    (options.stdin ?? process.stdin) as ConstructorParameters<typeof StdioServerTransport>[0],
    (options.stdout ?? process.stdout) as ConstructorParameters<typeof StdioServerTransport>[1],
  );
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  const handle = serveSdkStdio(
    ({ era }) =>
      createToolServer({
        scopeOf: () => ({ backend }),
        canAskClient: era === "legacy",
        era,
        requestState,
        logger: options.logger,
        ...(options.waitRoundMs === undefined ? {} : { waitRoundMs: options.waitRoundMs }),
      }),
    {
      legacy: "serve",
      transport,
      onerror: (error) => options.logger.warn({ event: "mcp_stdio_error", errorClass: error.constructor?.name ?? typeof error }),
    },
  );
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= handle.close().finally(() => {
      resolveClosed();
    }));
  (options.stdin ?? process.stdin).once("end", () => void close());
  return { closed, close };
}

/** Reads a credentials file; its problems are errors that name the file and the field. */
export async function readKeysFile(file: string): Promise<CallerKeys> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new Error(`${file}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "not found" : `not readable JSON (${(error as Error).message})`}`);
  }
  const record = (typeof parsed === "object" && parsed !== null ? parsed : {}) as Record<string, unknown>;
  for (const field of ["pluginKey", "actorToken"] as const) {
    if (typeof record[field] !== "string" || record[field] === "") {
      throw new Error(`${file}: "${field}" must be a non-empty string: the file holds { "pluginKey": "...", "actorToken": "..." }`);
    }
  }
  return { pluginKey: record.pluginKey as string, actorToken: record.actorToken as string };
}
