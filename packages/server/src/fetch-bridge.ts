/**
 * Serves a Fetch API `Request` with a Node request listener, in memory: the request becomes a real
 * `IncomingMessage` (its body streamed in as the listener reads it), and what the listener writes to its
 * `ServerResponse` becomes the `Response`, streamed out as it is written (long polls and MCP streams
 * included). When the `Response` body is cancelled (the client went away), the listener sees `close`.
 */
import { IncomingMessage, ServerResponse, type OutgoingHttpHeader, type OutgoingHttpHeaders } from "node:http";
import { Socket } from "node:net";

/** A Node request listener. */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/** Runs `listener` for `request` and resolves with its answer as soon as the status and headers are written. */
export function serveFetchRequest(request: Request, listener: NodeListener): Promise<Response> {
  const url = new URL(request.url);
  const socket = new Socket();
  // What a TLS socket says of itself; listeners that build absolute URLs read it.
  if (url.protocol === "https:") Object.defineProperty(socket, "encrypted", { value: true });
  const req = new IncomingMessage(socket);
  req.method = request.method;
  req.url = `${url.pathname}${url.search}`;
  req.httpVersion = "1.1";
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  const rawHeaders: string[] = [];
  request.headers.forEach((value, name) => {
    rawHeaders.push(name, value);
    req.headers[name] = name === "set-cookie" ? [value] : value;
  });
  if (req.headers.host === undefined) {
    req.headers.host = url.host;
    rawHeaders.push("host", url.host);
  }
  req.rawHeaders = rawHeaders;
  streamBody(request, req);

  const res = new FetchBridgeResponse(req);
  request.signal?.addEventListener("abort", () => res.clientGone(), { once: true });
  listener(req, res);
  return res.response;
}

/**
 * Feeds the request's body into `req`: a chunk at a time while its buffer has room, then again when the
 * listener reads. Once `req` is destroyed (the answer went out without reading it all), the body is cancelled.
 */
function streamBody(request: Request, req: IncomingMessage): void {
  const body = request.body;
  if (body === null) {
    req.complete = true;
    req.push(null);
    return;
  }
  const reader = body.getReader();
  let wake: (() => void) | undefined;
  const resume = (): void => {
    const waiting = wake;
    wake = undefined;
    waiting?.();
  };
  // IncomingMessage asks for more only through `_read` when its buffer drained.
  req._read = resume;
  req.once("close", () => {
    resume();
    if (!req.complete) void reader.cancel().catch(() => {});
  });
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (req.destroyed) return;
        if (done) {
          req.complete = true;
          req.push(null);
          return;
        }
        if (!req.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength))) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
      }
    } catch (error) {
      if (!req.destroyed) req.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  })();
}

const NO_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** A ServerResponse whose head and body become a Fetch `Response` instead of bytes on a socket. */
class FetchBridgeResponse extends ServerResponse {
  readonly response: Promise<Response>;
  #resolve!: (response: Response) => void;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  #started = false;
  #ended = false;
  #gone = false;

  constructor(req: IncomingMessage) {
    super(req);
    this.response = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    // Node's own getter reads the socket's header state, which this response never has.
    Object.defineProperty(this, "headersSent", { get: () => this.#started });
  }

  override writeHead(statusCode: number, reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    if (this.#started) return this;
    this.statusCode = statusCode;
    if (typeof reason === "string") this.statusMessage = reason;
    const given = typeof reason === "string" ? headers : reason;
    if (Array.isArray(given)) {
      // Either [name, value, name, value, ...] or [[name, value], ...].
      const flat = given.flat() as OutgoingHttpHeader[];
      for (let i = 0; i + 1 < flat.length; i += 2) this.appendHeader(String(flat[i]), flat[i + 1] as string | string[]);
    } else if (given !== undefined) {
      for (const [name, value] of Object.entries(given)) if (value !== undefined) this.setHeader(name, value);
    }
    this.#start();
    return this;
  }

  override flushHeaders(): void {
    this.#start();
  }

  override write(chunk: unknown, encoding?: BufferEncoding | ((error?: Error | null) => void), callback?: (error?: Error | null) => void): boolean {
    const done = typeof encoding === "function" ? encoding : callback;
    this.#start();
    if (!this.#ended && !this.#gone) this.#enqueue(chunk, typeof encoding === "string" ? encoding : undefined);
    if (done) process.nextTick(done);
    return true;
  }

  override end(chunk?: unknown, encoding?: BufferEncoding | (() => void), callback?: () => void): this {
    if (typeof chunk === "function") return this.end(undefined, undefined, chunk as () => void);
    const done = typeof encoding === "function" ? encoding : callback;
    if (this.#ended) {
      if (done) process.nextTick(done);
      return this;
    }
    this.#start();
    if (chunk !== undefined && chunk !== null && !this.#gone) this.#enqueue(chunk, typeof encoding === "string" ? encoding : undefined);
    this.#ended = true;
    this.finished = true;
    if (!this.#gone) this.#controller?.close();
    // An unread rest of the body is dropped, as a server does with a body nobody read.
    if (!this.req.complete) this.req.destroy();
    process.nextTick(() => {
      this.emit("finish");
      done?.();
      this.emit("close");
    });
    return this;
  }

  override destroy(error?: Error): this {
    if (!this.#started) {
      this.#started = true;
      this.#resolve(new Response(null, { status: 500 }));
    } else if (!this.#ended && !this.#gone) {
      this.#controller?.error(error ?? new Error("the response was destroyed"));
    }
    this.clientGone();
    return this;
  }

  /** The client stopped reading (or the request was aborted): the listener sees `close`, as on a socket. */
  clientGone(): void {
    if (this.#gone || this.#ended) return;
    this.#gone = true;
    this.req.destroy();
    process.nextTick(() => this.emit("close"));
  }

  #enqueue(chunk: unknown, encoding: BufferEncoding | undefined): void {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, encoding ?? "utf8") : (chunk as Uint8Array);
    if (bytes.byteLength > 0) this.#controller?.enqueue(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  }

  #start(): void {
    if (this.#started) return;
    this.#started = true;
    const headers = new Headers();
    for (const [name, value] of Object.entries(this.getHeaders())) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const item of value) headers.append(name, item);
      else headers.set(name, String(value));
    }
    const bodyless = NO_BODY_STATUSES.has(this.statusCode) || this.req.method === "HEAD";
    const body = bodyless
      ? null
      : new ReadableStream<Uint8Array>({
          start: (controller) => {
            this.#controller = controller;
          },
          cancel: () => this.clientGone(),
        });
    this.#resolve(new Response(body, { status: this.statusCode, statusText: this.statusMessage, headers }));
  }
}
