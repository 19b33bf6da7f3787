import type { PluginHead } from "./imported-manifest.js";
import type { JsonValue } from "./jsonc-text.js";

/** `upstream` for a stdio server: the command and args as given, run in the plugin folder as at import. */
export function stdioHead(id: string, version: string, command: readonly [string, ...string[]], passEnv: readonly string[]): PluginHead {
  const [program, ...args] = command;
  const upstream: Record<string, JsonValue> = { command: program, ...(args.length === 0 ? {} : { args }), ...(passEnv.length === 0 ? {} : { passEnv }) };
  const notes = [
    'the server runs in this folder, as it did at import: relative paths in "command" and "args" are relative to it',
    `it sees only the variables "env" sets and "passEnv" names (at import: ${passEnv.length === 0 ? "none" : passEnv.join(", ")}); ` +
      "give it what it needs, and nothing else",
  ];
  return { id, version, upstream, upstreamNotes: notes };
}

/** `upstream` for a Streamable HTTP server: its URL, and the token's file relative to the plugin folder. */
export function httpHead(id: string, version: string, url: string, tokenFile: string | undefined): PluginHead {
  return {
    id,
    version,
    upstream: { url, ...(tokenFile === undefined ? {} : { tokenFile }) },
    upstreamNotes: [
      tokenFile === undefined
        ? 'the server took no token at import; if it needs one when served, add "tokenFile": a file in this folder readable by its owner alone'
        : '"tokenFile" is relative to this folder; the token in it travels as "Authorization: Bearer"; keep the file chmod 600',
    ],
  };
}
