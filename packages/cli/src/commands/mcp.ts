import path from "node:path";
import { CALLER_KEY_ENV_VARS, readKeysFile, serveStdio, type CallerKeySource, type Logger } from "@toolpact/server";
import type { CliIo } from "../io.js";
import { parseCommandArgs } from "../command-args.js";
import { assertOwnerOnly, CredentialFileError, plainHttpProblem } from "../credential-safety.js";

const HELP = `usage: toolpact mcp --url <server> [--credentials <file>] [--insecure]

Serves MCP (the Model Context Protocol) on stdin and stdout for a local agent, forwarding every call
to the toolpact server at --url (its HTTP API). The agent is a caller plugin acting for one user:
--credentials names a JSON file { "pluginKey": "...", "actorToken": "..." }, read again before every
request (so a refreshed actor token is used without a restart); without it, the credentials come from
${CALLER_KEY_ENV_VARS.pluginKey} and ${CALLER_KEY_ENV_VARS.actorToken}. The file must be readable by its owner
alone (chmod 600). --url is https, or http on this machine; --insecure allows plain http to another
machine (the key and token then travel unencrypted: only on a network you trust).
Speaks MCP 2026-07-28 and 2025-11-25 (the client's first message decides). A call that needs the user's
approval sends the user to the server's confirmation page (an input_required URL request at 2026-07-28,
URL elicitation at 2025-11-25) and runs once they approve. stdout carries only MCP messages; diagnostics
go to stderr.
Exits 0 when the agent closes stdin, 2 on usage errors.`;

/** `toolpact mcp`: 0 when the client closed the connection, 2 on usage errors. */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs({ name: "mcp", help: HELP }, io, {
    args: [...args],
    options: {
      url: { type: "string" },
      credentials: { type: "string" },
      insecure: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (typeof parsed === "number") return parsed;
  const { values } = parsed;
  const usage = (problem: string) => {
    io.stderr(`toolpact mcp: ${problem}\n\n${HELP}`);
    return 2;
  };
  if (values.url === undefined) return usage("--url is required: the toolpact server to forward to, e.g. --url http://127.0.0.1:4400");
  if (!/^https?:\/\/[^/]/.test(values.url) || !URL.canParse(values.url)) return usage(`--url must be an http or https URL, got "${values.url}"`);
  const insecure = plainHttpProblem(values.url, "--url", values.insecure === true);
  if (insecure !== undefined) {
    io.stderr(`toolpact mcp: ${insecure}`);
    return 1;
  }

  let credentials: CallerKeySource;
  if (values.credentials !== undefined) {
    const file = path.resolve(io.cwd, values.credentials);
    try {
      assertOwnerOnly(file, "a plugin key and an actor token", values.credentials);
      await readKeysFile(file);
    } catch (error) {
      if (!(error instanceof CredentialFileError)) return usage(`--credentials: ${(error as Error).message}`);
      io.stderr(`toolpact mcp: ${error.message}`);
      return 1;
    }
    credentials = { file };
  } else {
    const pluginKey = io.env[CALLER_KEY_ENV_VARS.pluginKey];
    const actorToken = io.env[CALLER_KEY_ENV_VARS.actorToken];
    if (!pluginKey || !actorToken) {
      return usage(`no credentials: pass --credentials <file>, or set ${CALLER_KEY_ENV_VARS.pluginKey} and ${CALLER_KEY_ENV_VARS.actorToken}`);
    }
    credentials = { keys: { pluginKey, actorToken } };
  }

  const bridge = await serveStdio({ url: values.url, credentials, logger: stderrLogger(io) });
  const stop = () => void bridge.close();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  await bridge.closed;
  process.off("SIGINT", stop);
  process.off("SIGTERM", stop);
  return 0;
}

/** Log entries as JSON lines on stderr: stdout belongs to MCP. */
function stderrLogger(io: CliIo): Logger {
  const write = (level: string) => (entry: Readonly<Record<string, unknown>>) => io.stderr(JSON.stringify({ level, at: new Date().toISOString(), ...entry }));
  return { info: write("info"), warn: write("warn"), error: write("error") };
}
