/**
 * The Node adapter around the Fetch core: a Node request becomes a Fetch `Request` once (headers copied,
 * the body streamed in as it is read, a signal that aborts when the client goes away), and the `Response`
 * is written back as it streams (event streams flushed chunk by chunk), as `@hono/node-server` does.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/** What a request that a body parser already read carries (Express's `express.json()`, Fastify). */
type ParsedRequest = IncomingMessage & { body?: unknown };

/** Serves a Node request with a Fetch handler; a request that makes no Fetch `Request` (a malformed Host) gets 400. */
export function serveNodeRequest(req: IncomingMessage, res: ServerResponse, handle: (request: Request) => Promise<Response> | Response): void {
  const request = toFetchRequest(req, res);
  if (request === undefined) {
    res.writeHead(400, { "content-type": "text/plain; charset=utf-8", connection: "close" });
    res.end("bad request: the request's Host header or target is not a valid URL");
    return;
  }
  void writeFetchResponse(handle(request), req, res);
}

/** What a Node-backed request holds; the Fetch `Request` itself is made only if something needs more. */
interface NodeRequestState {
  readonly req: ParsedRequest;
  readonly res: ServerResponse;
  readonly url: string;
  readonly method: string;
  readonly controller: AbortController;
  headers?: Headers;
  body?: ReadableStream<Uint8Array> | string | null;
  request?: Request;
}

const STATE = Symbol("toolpact.nodeRequest");
type NodeBacked = Request & { readonly [STATE]: NodeRequestState };

function stateOf(request: object): NodeRequestState {
  return (request as NodeBacked)[STATE];
}

function headersOf(state: NodeRequestState): Headers {
  if (state.headers !== undefined) return state.headers;
  const headers = new Headers();
  const raw = state.req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    // HTTP/2 pseudo-headers (`:authority`, ...) are no header a Fetch request carries.
    if (name.charCodeAt(0) !== 58) headers.append(name, raw[i + 1]!);
  }
  return (state.headers = headers);
}

function bodyStateOf(state: NodeRequestState): ReadableStream<Uint8Array> | string | null {
  if (state.body !== undefined) return state.body;
  return (state.body = state.method === "GET" || state.method === "HEAD" ? null : bodyOf(state.req, state.res));
}

/** The Fetch `Request` itself, made once, for whatever the Node-backed one does not answer by itself. */
function fetchRequestOf(state: NodeRequestState): Request {
  if (state.request !== undefined) return state.request;
  const body = bodyStateOf(state);
  const init = { method: state.method, headers: headersOf(state), signal: state.controller.signal };
  state.request = body === null ? new Request(state.url, init) : new Request(state.url, { ...init, body, duplex: "half" } as RequestInit);
  return state.request;
}

/**
 * A `Request` backed by the Node request, as `@hono/node-server` makes them: method, URL, headers,
 * signal and body are answered from the Node request (headers copied on first use, the body streamed),
 * and the Fetch `Request` itself (whose constructor costs more than the rest of the conversion) is made
 * only when something asks for anything else (`text()`, `json()`, `clone()`, ...).
 */
const nodeRequestPrototype: object = Object.create(Request.prototype, {
  method: {
    get(this: object) {
      return stateOf(this).method;
    },
  },
  url: {
    get(this: object) {
      return stateOf(this).url;
    },
  },
  headers: {
    get(this: object) {
      return headersOf(stateOf(this));
    },
  },
  signal: {
    get(this: object) {
      return stateOf(this).controller.signal;
    },
  },
  body: {
    get(this: object) {
      const state = stateOf(this);
      if (state.request !== undefined) return state.request.body;
      const body = bodyStateOf(state);
      // A parser's text: made a stream by the Fetch request.
      return typeof body === "string" ? fetchRequestOf(state).body : body;
    },
  },
});
for (const name of Object.getOwnPropertyNames(Request.prototype)) {
  if (name === "constructor" || Object.hasOwn(nodeRequestPrototype, name)) continue;
  const descriptor = Object.getOwnPropertyDescriptor(Request.prototype, name)!;
  if (typeof descriptor.value === "function") {
    Object.defineProperty(nodeRequestPrototype, name, {
      value(this: object, ...args: unknown[]) {
        const request = fetchRequestOf(stateOf(this)) as unknown as Record<string, (...args: unknown[]) => unknown>;
        return request[name]!(...args);
      },
    });
  } else if (descriptor.get !== undefined) {
    Object.defineProperty(nodeRequestPrototype, name, {
      get(this: object) {
        return (fetchRequestOf(stateOf(this)) as unknown as Record<string, unknown>)[name];
      },
    });
  }
}

/** The Fetch `Request` for a Node request; undefined when its URL cannot make one (answer 400). */
export function toFetchRequest(req: ParsedRequest, res: ServerResponse): Request | undefined {
  const encrypted = (req.socket as { encrypted?: boolean } | null)?.encrypted === true;
  const host = req.headers.host ?? req.headers[":authority"] ?? "localhost";
  const url = `${encrypted ? "https" : "http"}://${String(host)}${req.url ?? "/"}`;
  if (!URL.canParse(url)) return undefined;
  const controller = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) controller.abort(new Error("the client closed the connection"));
  });
  const state: NodeRequestState = { req, res, url, method: req.method ?? "GET", controller };
  return Object.create(nodeRequestPrototype, { [STATE]: { value: state } }) as Request;
}

/**
 * The request body as a stream, read from the socket only as it is read (nobody reads it: Node drops it
 * after the answer, as with any unread body), pausing the socket while the reader is behind; a body a
 * parser already read (mounted behind `express.json()`, against the advice) as its JSON text. A rest
 * nobody read once the answer is sent is read and dropped, so the connection can serve the next request.
 */
function bodyOf(req: ParsedRequest, res: ServerResponse): ReadableStream<Uint8Array> | string {
  if (req.body !== undefined) return typeof req.body === "string" ? req.body : JSON.stringify(req.body);
  let attached = false;
  let done = false;
  let onData: (chunk: Buffer) => void = () => {};
  const drop = (): void => {
    done = true;
    req.off("data", onData);
    req.resume();
  };
  res.once("finish", () => {
    if (attached && !req.complete) drop();
  });
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (!attached) {
          attached = true;
          onData = (chunk) => {
            if (done) return;
            controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
            if ((controller.desiredSize ?? 0) <= 0) req.pause();
          };
          const end = (error?: Error): void => {
            if (done) return;
            done = true;
            if (error === undefined) controller.close();
            else controller.error(error);
          };
          req.on("data", onData);
          req.once("end", () => end());
          req.once("error", end);
          req.once("close", () => {
            if (!req.complete) end(new Error("the client closed the connection while sending the body"));
          });
        }
        req.resume();
      },
      cancel: drop,
    },
    { highWaterMark: 0 },
  );
}

/** Writes `answer` to `res`: the head, then the body as it comes; the body is cancelled if the client goes away. */
export async function writeFetchResponse(answer: Promise<Response> | Response, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let response: Response;
  try {
    response = await answer;
  } catch {
    res.destroy();
    return;
  }
  if (response.type === "error" || res.destroyed) {
    void response.body?.cancel().catch(() => {});
    res.destroy();
    return;
  }
  res.statusCode = response.status;
  if (response.statusText !== "") res.statusMessage = response.statusText;
  for (const [name, value] of response.headers) {
    if (name !== "set-cookie" && name !== "transfer-encoding") res.setHeader(name, value);
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
  const body = response.body;
  if (body === null || req.method === "HEAD") {
    void body?.cancel().catch(() => {});
    res.end();
    return;
  }
  // A body that keeps coming (events, a refusal held open while the request drains) goes out chunk by
  // chunk as it comes; any other is whole once read, and goes out in one piece with its length.
  const streaming = response.headers.get("content-type")?.startsWith("text/event-stream") === true || response.headers.has("content-length");
  const reader = body.getReader();
  const gone = (): void => void reader.cancel().catch(() => {});
  res.once("close", gone);
  try {
    if (streaming) res.flushHeaders();
    let next = await reader.read();
    if (!streaming && !next.done) {
      const first = next.value;
      next = await reader.read();
      if (next.done) {
        res.end(first);
        return;
      }
      res.write(first);
    }
    while (!next.done) {
      if (!res.write(next.value)) await drained(res);
      next = await reader.read();
    }
    res.end();
  } catch {
    res.destroy();
  } finally {
    res.off("close", gone);
  }
}

/** Resolves when `res` can take more, or is closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}
