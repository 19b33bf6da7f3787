/**
 * The `console` key of `toolpact.config.json`: the operator console at `/console` of `toolpact serve`,
 * off unless `enabled` is true. Its own file so the host config wires it with one line.
 */
import { z } from "zod";

/** Eight hours: how long a console sign-in lasts unless configured otherwise. */
export const DEFAULT_CONSOLE_SESSION_TTL_SECONDS = 8 * 60 * 60;

/** The zod schema of `console` in the host config. */
export const consoleConfigSchema = z
  .strictObject({
    enabled: z.boolean().default(false).describe("Serve the operator console at /console (sign-in with the admin key). Default false."),
    sessionTtlSeconds: z
      .number()
      .int()
      .min(60)
      .max(7 * 24 * 60 * 60)
      .optional()
      .describe(`How long a console sign-in lasts, seconds (default ${DEFAULT_CONSOLE_SESSION_TTL_SECONDS}).`),
  })
  .default({ enabled: false })
  .describe("The operator console: activity, operations, pending confirmations, plugins, policy and key ages, for the admin.");

/** The console's settings as the host reads them. */
export type ConsoleConfig = z.output<typeof consoleConfigSchema>;
