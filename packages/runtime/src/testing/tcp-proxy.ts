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
 * a silent one (nothing answers), `restore()` heals it.
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
  /** Resets everything and stops listening. */
  close(): Promise<void>;
}

interface Link {
  readonly client: Socket;
  upstream: Socket | undefined;
}

/** Starts a proxy listening on a free port of `listenHost` (default 127.0.0.1). */
export async function createTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  const links = new Set<Link>();
  let state: TcpProxyState = "open";

  const drop = (link: Link): void => {
    if (!links.delete(link)) return;
    reset(link.client);
    if (link.upstream !== undefined) reset(link.upstream);
  };

  const attach = (link: Link): void => {
    const upstream = connect({ host: options.targetHost, port: options.targetPort });
    link.upstream = upstream;
    upstream.setNoDelay(true);
    forward(link.client, upstream, () => state === "open");
    forward(upstream, link.client, () => state === "open");
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
    const link: Link = { client, upstream: undefined };
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
    close() {
      state = "cut";
      for (const link of [...links]) drop(link);
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Copies `from` into `to` while `flowing()`, pausing `from` when `to` pushes back. */
function forward(from: Socket, to: Socket, flowing: () => boolean): void {
  from.on("data", (chunk: Buffer) => {
    if (!to.write(chunk)) from.pause();
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
