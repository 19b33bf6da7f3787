import { createServer, connect, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createTcpProxy, type TcpProxy } from "./tcp-proxy.js";

/** An echo server on 127.0.0.1, port 0, that counts the connections it accepted. */
async function echoServer(): Promise<{ port: number; accepted: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no address");
  return {
    port: address.port,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

interface Peer {
  readonly socket: Socket;
  /** Everything received so far. */
  received(): string;
  /** Resolves with the received text once it includes `text`, or rejects after `ms`. */
  waitFor(text: string, ms?: number): Promise<string>;
  /** Resolves with the error code (or "closed") once the socket closes. */
  closed: Promise<string>;
}

function open(port: number): Peer {
  const socket = connect({ host: "127.0.0.1", port });
  let data = "";
  let failure = "closed";
  socket.on("data", (chunk: Buffer) => (data += chunk.toString()));
  socket.on("error", (error: NodeJS.ErrnoException) => (failure = error.code ?? error.message));
  const closed = new Promise<string>((resolve) => socket.on("close", () => resolve(failure)));
  return {
    socket,
    received: () => data,
    closed,
    waitFor: (text, ms = 2000) =>
      new Promise<string>((resolve, reject) => {
        const started = Date.now();
        const poll = () => {
          if (data.includes(text)) return resolve(data);
          if (Date.now() - started > ms) return reject(new Error(`did not receive "${text}" within ${ms} ms; got "${data}"`));
          setTimeout(poll, 5);
        };
        poll();
      }),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("TcpProxy", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });

  async function setup(): Promise<{ proxy: TcpProxy; echo: Awaited<ReturnType<typeof echoServer>>; peers: Peer[] }> {
    const echo = await echoServer();
    const proxy = await createTcpProxy({ targetHost: "127.0.0.1", targetPort: echo.port });
    const peers: Peer[] = [];
    cleanups.push(async () => {
      for (const peer of peers) peer.socket.destroy();
      await proxy.close();
      await echo.close();
    });
    return { proxy, echo, peers };
  }

  it("listens on 127.0.0.1 and forwards both ways", async () => {
    const { proxy, peers } = await setup();
    expect(proxy.host).toBe("127.0.0.1");
    expect(proxy.port).toBeGreaterThan(0);
    const peer = open(proxy.port);
    peers.push(peer);
    peer.socket.write("hello");
    await peer.waitFor("hello");
    expect(proxy.connections).toBe(1);
    expect(proxy.state).toBe("open");
  });

  it("cut resets live connections and refuses new ones; restore forwards again", async () => {
    const { proxy, echo, peers } = await setup();
    const live = open(proxy.port);
    peers.push(live);
    live.socket.write("one");
    await live.waitFor("one");

    proxy.cut();
    expect(await live.closed).toBe("ECONNRESET");
    expect(proxy.connections).toBe(0);
    const acceptedBefore = echo.accepted();
    const refused = open(proxy.port);
    peers.push(refused);
    refused.socket.write("two");
    await refused.closed;
    expect(refused.received()).toBe("");
    expect(echo.accepted()).toBe(acceptedBefore);

    proxy.restore();
    const again = open(proxy.port);
    peers.push(again);
    again.socket.write("three");
    await again.waitFor("three");
  });

  it("stall holds traffic without closing anything, and restore delivers it", async () => {
    const { proxy, echo, peers } = await setup();
    const live = open(proxy.port);
    peers.push(live);
    live.socket.write("a");
    await live.waitFor("a");

    proxy.stall();
    live.socket.write("b");
    const held = open(proxy.port);
    peers.push(held);
    held.socket.write("c");
    await sleep(200);
    expect(live.received()).toBe("a");
    expect(held.received()).toBe("");
    expect(echo.accepted()).toBe(1);
    expect(live.socket.destroyed).toBe(false);

    proxy.restore();
    await live.waitFor("ab");
    await held.waitFor("c");
    expect(echo.accepted()).toBe(2);
  });

  it("closes the target side when the client goes, and the client side when the target goes", async () => {
    const { proxy, echo, peers } = await setup();
    const peer = open(proxy.port);
    peers.push(peer);
    peer.socket.write("x");
    await peer.waitFor("x");
    peer.socket.destroy();
    for (let i = 0; i < 100 && proxy.connections > 0; i++) await sleep(10);
    expect(proxy.connections).toBe(0);

    const other = open(proxy.port);
    peers.push(other);
    other.socket.write("y");
    await other.waitFor("y");
    await echo.close();
    await other.closed;
    expect(proxy.connections).toBe(0);
  });

  it("stops listening on close", async () => {
    const { proxy } = await setup();
    await proxy.close();
    const peer = open(proxy.port);
    expect(await peer.closed).toBe("ECONNREFUSED");
  });
});
