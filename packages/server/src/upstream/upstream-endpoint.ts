import path from "node:path";
import type { UpstreamDeclaration } from "@toolpact/contract";
import { SECRET_ENV_VARS } from "../host/secret-variables.js";
import { readOwnerOnlyFile } from "./owner-only-file.js";

/**
 * Where an upstream MCP server is, resolved for starting it: a stdio command with its working directory
 * and the whole environment it sees, or a Streamable HTTP URL with the bearer token it is sent.
 */
export type UpstreamEndpoint =
  | {
      readonly kind: "stdio";
      readonly command: string;
      readonly args: readonly string[];
      /** Absolute. */
      readonly cwd: string;
      /** Everything the child sees: nothing of the host's environment beyond what is here. */
      readonly env: Readonly<Record<string, string>>;
    }
  | { readonly kind: "http"; readonly url: URL; readonly token?: string };

/** Where an endpoint is resolved: the plugin folder, the host's environment, and the manifest section named in errors. */
export interface EndpointPlace {
  readonly dir: string;
  /** The host's environment (its secrets already removed), from which `passEnv` copies. */
  readonly env: NodeJS.ProcessEnv;
  /** The manifest section the declaration came from, as errors name it; default "upstream" ("process" for an isolated child). */
  readonly section?: "upstream" | "process";
}

/** Why an upstream cannot be started as declared: the message names the plugin and what to fix. */
export class UpstreamConfigError extends Error {
  override readonly name = "UpstreamConfigError";
}

/**
 * Resolves a manifest's `upstream` (or an isolated child's stdio declaration) for the plugin in `dir`: `cwd` and `tokenFile` relative to the plugin
 * folder (never outside it), the environment made of `env` and the `passEnv` names copied from `hostEnv`
 * (a toolpact secret variable is refused), the token file readable by its owner alone, and a token never
 * sent over plain http to another machine.
 * @throws UpstreamConfigError
 */
export function upstreamEndpointOf(pluginId: string, declaration: UpstreamDeclaration, where: EndpointPlace): UpstreamEndpoint {
  const { dir, env: hostEnv, section = "upstream" } = where;
  const problem = (message: string) => new UpstreamConfigError(`plugin "${pluginId}": ${section} ${message}`);
  const inside = (relative: string, field: string): string => {
    const resolved = path.resolve(dir, relative);
    if (resolved !== path.resolve(dir) && !resolved.startsWith(path.resolve(dir) + path.sep)) {
      throw problem(`"${field}" ${JSON.stringify(relative)} leaves the plugin folder: name a path inside ${dir}`);
    }
    return resolved;
  };
  if ("command" in declaration) {
    const env: Record<string, string> = { ...(declaration.env ?? {}) };
    for (const name of declaration.passEnv ?? []) {
      if (isHostSecret(name)) throw problem(`"passEnv" names ${name}, one of toolpact's own secrets: no plugin may see it; remove it`);
      const value = hostEnv[name];
      if (value !== undefined) env[name] = value;
    }
    for (const name of Object.keys(env)) {
      if (isHostSecret(name)) throw problem(`"env" sets ${name}, the name of one of toolpact's own secrets: rename it`);
    }
    return { kind: "stdio", command: declaration.command, args: [...(declaration.args ?? [])], cwd: inside(declaration.cwd ?? ".", "cwd"), env };
  }
  const url = new URL(declaration.url);
  if (declaration.tokenFile === undefined) return { kind: "http", url };
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    throw problem(`would send its token unencrypted to ${url.host}, which is not this machine: use an https:// URL`);
  }
  const file = inside(declaration.tokenFile, "tokenFile");
  try {
    return { kind: "http", url, token: readOwnerOnlyFile(file, "the bearer token of its upstream", file) };
  } catch (error) {
    throw problem(`"tokenFile": ${(error as Error).message}`);
  }
}

function isHostSecret(name: string): boolean {
  return (SECRET_ENV_VARS as readonly string[]).some((secret) => name === secret || name === `${secret}_FILE`);
}

/** Whether `hostname` (as URL parses it) is this machine: localhost, 127.0.0.0/8 or ::1. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "localhost" || host.endsWith(".localhost") || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === "::1";
}
