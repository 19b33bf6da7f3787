/**
 * Secrets that arrive in the environment never stay readable there: `toolpact serve` re-executes itself
 * with a clean environment and hands them to the new process over an inherited pipe (not argv, not the
 * environment), so no plugin can read them back from `/proc/self/environ`. The first process stays as a
 * thin supervisor (signals in, exit code out) with its own environment block blanked where Linux lets it.
 */
import { spawn } from "node:child_process";
import { Socket } from "node:net";
import { constants } from "node:os";
import { scrubInitialEnvironment } from "./environ-scrub.js";
import { HostError } from "./host-error.js";
import { SECRET_ENV_VARS, nonEmpty, type SecretEnvVar } from "./secret-variables.js";

/** Names the inherited descriptor the secrets arrive on, in the re-executed process. */
export const HANDOVER_FD_VAR = "TOOLPACT_HANDOVER_FD";
const HANDOVER_FD = 3;
const MAX_HANDOVER_BYTES = 64 * 1024;

/** The secret variables set (non-empty) in `env`. */
export function secretsInEnvironment(env: NodeJS.ProcessEnv): SecretEnvVar[] {
  return SECRET_ENV_VARS.filter((name) => nonEmpty(env[name]) !== undefined);
}

/** What to run again: a Node script and its arguments (the CLI's own binary and `serve ...`). */
export interface Reexecution {
  readonly script: string;
  readonly args: readonly string[];
}

/**
 * Runs `script args` again in a process of its own whose environment holds none of the secret
 * variables, hands it their values over a pipe, forwards SIGINT, SIGTERM and SIGHUP to it, and resolves
 * with its exit code (128 + the signal's number when a signal ended it). Removes the secrets from
 * `process.env` and blanks them in this process's environment block first.
 */
export async function reexecWithoutSecrets(reexecution: Reexecution): Promise<number> {
  const env = process.env;
  const secrets: Record<string, string> = {};
  for (const name of secretsInEnvironment(env)) secrets[name] = env[name]!;
  for (const name of SECRET_ENV_VARS) delete env[name];
  scrubInitialEnvironment(SECRET_ENV_VARS);
  // Its own process group: a terminal's Ctrl-C reaches this supervisor only, which forwards it once.
  const child = spawn(process.execPath, [...process.execArgv, reexecution.script, ...reexecution.args], {
    env: { ...env, [HANDOVER_FD_VAR]: String(HANDOVER_FD) },
    stdio: ["inherit", "inherit", "inherit", "pipe"],
    detached: true,
  });
  const pipe = child.stdio[HANDOVER_FD] as Socket;
  pipe.on("error", () => undefined);
  // The pipe stays open while this process lives: its end tells the server that its supervisor is gone.
  pipe.write(`${JSON.stringify(secrets)}\n`);
  const forward = (signal: NodeJS.Signals) => () => void child.kill(signal);
  const handlers = (["SIGINT", "SIGTERM", "SIGHUP"] as const).map((signal) => [signal, forward(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  try {
    return await new Promise<number>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", (code, signal) => resolve(code ?? 128 + (signal === null ? 0 : (constants.signals[signal] ?? 0))));
    });
  } finally {
    for (const [signal, handler] of handlers) process.off(signal, handler);
    pipe.destroy();
  }
}

/**
 * In a re-executed `toolpact serve`: reads the secrets its supervisor handed over, puts them into
 * `process.env` for the host to read and remove as usual (the environment block `/proc/self/environ`
 * shows never held them), and ends this process at once should the supervisor die. False when this
 * process was not started that way.
 * @throws HostError when the variable is set but nothing readable arrives on the descriptor.
 */
export async function receiveHandedOverSecrets(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const fdText = env[HANDOVER_FD_VAR];
  if (fdText === undefined) return false;
  delete env[HANDOVER_FD_VAR];
  const fd = Number(fdText);
  const failed = (why: string) =>
    new HostError(`${HANDOVER_FD_VAR} is set, but ${why}: it is set only by \`toolpact serve\` when it re-executes itself; unset it`);
  if (!Number.isInteger(fd) || fd < HANDOVER_FD) throw failed(`"${fdText}" is not a descriptor number`);
  let socket: Socket;
  try {
    socket = new Socket({ fd, readable: true, writable: false });
  } catch {
    throw failed(`descriptor ${fd} cannot be read`);
  }
  const line = await new Promise<string>((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer) => {
      text += chunk.toString("utf8");
      const end = text.indexOf("\n");
      if (end >= 0) {
        socket.off("data", onData);
        resolve(text.slice(0, end));
      } else if (text.length > MAX_HANDOVER_BYTES) {
        reject(failed("the secrets that arrived are too long"));
      }
    };
    socket.on("data", onData);
    socket.once("error", () => reject(failed(`descriptor ${fd} cannot be read`)));
    socket.once("end", () => reject(failed(`descriptor ${fd} closed before the secrets arrived`)));
  });
  let secrets: unknown;
  try {
    secrets = JSON.parse(line);
  } catch {
    throw failed("what arrived is not the secrets");
  }
  if (typeof secrets !== "object" || secrets === null) throw failed("what arrived is not the secrets");
  for (const [name, value] of Object.entries(secrets)) {
    if (!(SECRET_ENV_VARS as readonly string[]).includes(name) || typeof value !== "string") throw failed(`"${name}" is not a secret it hands over`);
    env[name] = value;
  }
  // The supervisor holds its end open for its whole life: when it ends, so does this server (as if the
  // signal that ended it had reached this process), and no orphan keeps serving.
  socket.removeAllListeners("end");
  socket.once("end", () => process.kill(process.pid, "SIGKILL"));
  socket.once("close", () => process.kill(process.pid, "SIGKILL"));
  socket.on("error", () => undefined);
  socket.resume();
  socket.unref();
  return true;
}
