// Child processes of a bench run. Every one is tracked and killed when the run ends, on error too.
import { fork, spawn } from "node:child_process";
import { createInterface } from "node:readline";

const live = new Set();
const STDERR_TAIL_LINES = 40;
let refusing = false;

/** After an interrupt: every later attempt to start a child fails, so a run winds down instead of going on. */
export function refuseNewChildren() {
  refusing = true;
}

/** @param {string} what */
function refuseIfInterrupted(what) {
  if (refusing) throw new Error(`interrupted: not starting ${what}`);
}

function track(child) {
  live.add(child);
  child.once("exit", () => live.delete(child));
  return child;
}

// Last line of defence: a bench process that exits for any reason takes its children with it.
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

/** Stops one child: SIGTERM, then SIGKILL after `graceMs`. Resolves once it has exited. */
export async function stopChild(child, graceMs = 5_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Stops every child this run started that is still alive. */
export async function stopAllChildren() {
  await Promise.all([...live].map((child) => stopChild(child)));
}

/**
 * Spawns `node <args>` and resolves with `ready(line)`'s first defined answer for a stdout line.
 * Rejects (and kills the child) if it exits or `timeoutMs` passes first; the message carries its stderr tail.
 */
/**
 * @template T
 * @param {{ args: string[], env?: Record<string, string>, cwd?: string, ready: (line: string) => T | undefined, timeoutMs?: number, name?: string }} options
 * @returns {Promise<{ child: import("node:child_process").ChildProcess, value: T, stderrTail: () => string }>}
 */
export function startProcess({ args, env = {}, cwd, ready, timeoutMs = 30_000, name = args.join(" ") }) {
  if (refusing) return Promise.reject(new Error(`interrupted: not starting ${name}`));
  const child = track(spawn(process.execPath, args, { cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } }));
  const stderr = [];
  createInterface({ input: child.stderr }).on("line", (line) => {
    stderr.push(line);
    if (stderr.length > STDERR_TAIL_LINES) stderr.shift();
  });
  const describe = () => (stderr.length ? `\n  stderr:\n    ${stderr.join("\n    ")}` : "");
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (action) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      action();
    };
    const timer = setTimeout(() => {
      settle(() => reject(new Error(`${name} was not ready within ${timeoutMs} ms${describe()}`)));
      child.kill("SIGKILL");
    }, timeoutMs);
    child.once("exit", (code, signal) => settle(() => reject(new Error(`${name} exited (${signal ?? `code ${code}`}) before it was ready${describe()}`))));
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (settled) return;
      let value;
      try {
        value = ready(line);
      } catch (error) {
        settle(() => reject(error));
        return;
      }
      if (value !== undefined) settle(() => resolve({ child, value, stderrTail: () => stderr.join("\n") }));
    });
  });
}

/** Starts a node script that prints one JSON line once it listens; resolves with the child and that object. */
/** @param {string} file @param {{ args?: string[], nodeArgs?: string[], env?: Record<string, string>, timeoutMs?: number }} [options] */
export async function startJsonServer(file, { args = [], nodeArgs = [], env = {}, timeoutMs } = {}) {
  const { child, value } = await startProcess({
    args: [...nodeArgs, file, ...args],
    env,
    name: `${file} ${args.join(" ")}`.trim(),
    ready: (line) => (line.startsWith("{") ? JSON.parse(line) : undefined),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
  return { child, ...value };
}

/**
 * Forks a worker that answers requests over IPC (see `serveRequests`); returns `request(op, payload)`.
 * A worker that dies fails every pending and later request.
 */
/** @param {string} file @param {{ execArgv?: string[], env?: Record<string, string> }} [options] */
export function startWorker(file, { execArgv = [], env = {} } = {}) {
  refuseIfInterrupted(file);
  const child = track(fork(file, [], { execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"], env: { ...process.env, ...env } }));
  const pending = new Map();
  let nextId = 0;
  let gone;
  child.on("message", (message) => {
    const waiter = pending.get(message.id);
    if (waiter === undefined) return;
    pending.delete(message.id);
    if (message.ok) waiter.resolve(message.result);
    else waiter.reject(new Error(`${file}: ${message.error}`));
  });
  child.once("exit", (code, signal) => {
    gone = new Error(`worker ${file} exited (${signal ?? `code ${code}`})`);
    for (const waiter of pending.values()) waiter.reject(gone);
    pending.clear();
  });
  return {
    child,
    request(op, payload = {}) {
      if (gone) return Promise.reject(gone);
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ id, op, ...payload });
      });
    },
    stop: () => stopChild(child),
  };
}

/** The worker side of `startWorker`: runs `handlers[op](message)` for each request; exits when the parent goes. */
/** @param {Record<string, (message: any) => unknown>} handlers */
export function serveRequests(handlers) {
  if (typeof process.send !== "function") throw new Error("this script is a bench worker: bench/run.mjs forks it");
  process.on("disconnect", () => process.exit(0));
  const send = process.send.bind(process);
  process.on("message", async (/** @type {any} */ message) => {
    try {
      const handler = handlers[message.op];
      if (handler === undefined) throw new Error(`unknown request "${message.op}"`);
      send({ id: message.id, ok: true, result: (await handler(message)) ?? null });
    } catch (error) {
      send({ id: message.id, ok: false, error: error?.stack ?? String(error) });
    }
  });
}
