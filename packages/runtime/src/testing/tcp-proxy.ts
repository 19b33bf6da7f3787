import { createServer, connect, type Server, type Socket } from "node:net";

/** Where a `TcpProxy` forwards to. */
export interface TcpProxyOptions {
  readonly targetHost: string;
  readonly targetPort: number;
  /** The address the proxy listens on (default 127.0.0.1; port 0, so the system picks a free one). */
  readonly listenHost?: string;
}

/** `open` forwards; `cut` resets every connection and every new one; `stalled` holds them all silently. */
export type TcpProxyState = "open" | "cut" | "stalled";

/**
 * A TCP proxy a test controls, to put between a client and a shared server and break the network
 * without touching the server: `cut()` is a lost link (connections reset, new ones refused), `stall()`
 * a silent one (nothing answers), `restore()` heals it; `lose()` loses one message or one answer.
 */
export interface TcpProxy {
  readonly host: string;
  readonly port: number;
  readonly state: TcpProxyState;
  /** Client connections currently held (forwarding or stalled). */
  readonly connections: number;
  /** Resets every connection (RST on both sides) and resets new ones until `restore()`. */
  cut(): void;
  /** Stops forwarding in both directions and holds new connections without reaching the target. */
  stall(): void;
  /** Forwards again: stalled connections resume, new ones reach the target. */
  restore(): void;
  /**
   * Arms a one-shot fault, for the next client message that contains `marker` (a PostgreSQL prepared
   * statement's name, say). `"answer"`: the message reaches the server, its answer is swallowed, and once
   * the answer is complete (the server's ReadyForQuery: the statement committed) the connection is reset,
   * so the server did the work and the client never hears of it. `"request"`: the message is dropped
   * before the server sees it, and the connection reset. Resolves once it happened.
   */
  lose(what: "answer" | "request", marker: string): Promise<void>;
  /**
   * Resets every connection whose first message contained `marker` (a PostgreSQL startup message's
   * application_name, say), and each such new one, until `unblock()`: one kind of connection is lost
   * while the others go on.
   */
  block(marker: string): void;
  /** Lets connections `block` refused through again. */
  unblock(): void;
  /** Resets everything and stops listening. */
  close(): Promise<void>;
}

interface Link {
  readonly client: Socket;
  upstream: Socket | undefined;
  /** Set while this link's next answer is being swallowed: called when the answer is complete. */
  swallowing: (() => void) | undefined;
  /** The first message the client sent (a PostgreSQL startup message). */
  first: Buffer | undefined;
}

/** A fault armed by `lose`, waiting for its message. */
interface ArmedFault {
  readonly what: "answer" | "request";
  readonly marker: Buffer;
  readonly fired: () => void;
}

/** PostgreSQL's ReadyForQuery message ('Z', length 5): the end of a statement's answer. */
const READY_FOR_QUERY = Buffer.from([0x5a, 0, 0, 0, 5]);

/** Starts a proxy listening on a free port of `listenHost` (default 127.0.0.1). */
export async function createTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  const links = new Set<Link>();
  let state: TcpProxyState = "open";
  let armed: ArmedFault | undefined;
  let blocked: Buffer | undefined;

  const drop = (link: Link): void => {
    if (!links.delete(link)) return;
    reset(link.client);
    if (link.upstream !== undefined) reset(link.upstream);
  };

  /** What the client sends: dropped, or passed on with its answer to be swallowed, when a fault is armed for it. */
  const request = (link: Link, chunk: Buffer): Buffer | undefined => {
    link.first ??= chunk;
    if (blocked !== undefined && link.first.includes(blocked)) {
      drop(link);
      return undefined;
    }
    const fault = armed;
    if (fault === undefined || !chunk.includes(fault.marker)) return chunk;
    armed = undefined;
    if (fault.what === "request") {
      drop(link);
      fault.fired();
      return undefined;
    }
    link.swallowing = () => {
      drop(link);
      fault.fired();
    };
    return chunk;
  };
  /** What the server answers: swallowed while the link's answer is lost, until it is complete. */
  const answer = (link: Link, chunk: Buffer): Buffer | undefined => {
    const done = link.swallowing;
    if (done === undefined) return chunk;
    if (chunk.includes(READY_FOR_QUERY)) done();
    return undefined;
  };

  const attach = (link: Link): void => {
    const upstream = connect({ host: options.targetHost, port: options.targetPort });
    link.upstream = upstream;
    upstream.setNoDelay(true);
    forward(link.client, upstream, { flowing: () => state === "open", pass: (chunk) => request(link, chunk) });
    forward(upstream, link.client, { flowing: () => state === "open", pass: (chunk) => answer(link, chunk) });
    upstream.on("error", () => drop(link));
    upstream.on("close", () => drop(link));
  };

  const server: Server = createServer((client) => {
    client.on("error", () => undefined);
    if (state === "cut") {
      reset(client);
      return;
    }
    client.setNoDelay(true);
    const link: Link = { client, upstream: undefined, swallowing: undefined, first: undefined };
    links.add(link);
    client.on("close", () => drop(link));
    client.on("error", () => drop(link));
    if (state === "open") attach(link);
    else client.pause();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, options.listenHost ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy did not get a TCP address");

  return {
    host: address.address,
    port: address.port,
    get state() {
      return state;
    },
    get connections() {
      return links.size;
    },
    cut() {
      state = "cut";
      for (const link of [...links]) drop(link);
    },
    stall() {
      state = "stalled";
      for (const link of links) {
        link.client.pause();
        link.upstream?.pause();
      }
    },
    restore() {
      state = "open";
      for (const link of links) {
        if (link.upstream === undefined) attach(link);
        link.client.resume();
        link.upstream?.resume();
      }
    },
    lose(what, marker) {
      if (armed !== undefined) throw new Error("a fault is already armed: wait for it before arming another");
      return new Promise<void>((resolve) => {
        armed = { what, marker: Buffer.from(marker, "utf8"), fired: resolve };
      });
    },
    block(marker) {
      const bytes = Buffer.from(marker, "utf8");
      blocked = bytes;
      for (const link of [...links]) if (link.first?.includes(bytes)) drop(link);
    },
    unblock() {
      blocked = undefined;
    },
    close() {
      state = "cut";
      for (const link of [...links]) drop(link);
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Copies `from` into `to` (what `pass` lets through) while `flowing()`, pausing `from` when `to` pushes back. */
function forward(from: Socket, to: Socket, how: { readonly flowing: () => boolean; readonly pass: (chunk: Buffer) => Buffer | undefined }): void {
  const { flowing } = how;
  from.on("data", (chunk: Buffer) => {
    const passed = how.pass(chunk);
    if (passed !== undefined && !to.destroyed && !to.write(passed)) from.pause();
  });
  to.on("drain", () => {
    if (flowing()) from.resume();
  });
  if (flowing()) from.resume();
}

function reset(socket: Socket): void {
  if (socket.destroyed) return;
  if (typeof socket.resetAndDestroy === "function" && !socket.connecting) socket.resetAndDestroy();
  else socket.destroy();
}
