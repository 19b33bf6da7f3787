/**
 * A Fetch `Request`'s JSON body read under the limits (`readBoundedJson`), and the answer to one refused:
 * its bytes go out at once while the rest of the body is read and dropped, so a client that reads while it
 * sends sees the answer rather than a reset connection. `/trpc` and `/mcp` read their bodies here.
 */
import { readBoundedJson, type BodyLimits, type BodyRefusal } from "./bounded-json.js";

/** What reading a request's body gave: its text, or the answer that refuses it. */
export type BoundedRequestBody = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly response: Response };

/** The status and JSON text of the answer to a refused body. */
export interface RefusalAnswer {
  readonly status: number;
  readonly json: string;
}

/**
 * Reads `request`'s body with its size and depth bounded while it streams in. A refused body is answered
 * with `answer(refusal)` at once; that answer's body ends once the request's rest is drained, or errors
 * (closing the connection) past the drain bound. A client gone while sending gets `Response.error()`.
 */
export function readBoundedRequest(request: Request, limits: BodyLimits, answer: (refusal: BodyRefusal) => RefusalAnswer): Promise<BoundedRequestBody> {
  const body = request.body;
  if (body === null) return Promise.resolve({ ok: true, text: "" });
  return new Promise<BoundedRequestBody>((resolve) => {
    let finish: ((drained: boolean) => void) | undefined;
    readBoundedJson(body, {
      ...limits,
      declaredBytes: Number(request.headers.get("content-length") ?? 0),
      onRefused: (refusal) => {
        const held = heldAnswer(answer(refusal));
        finish = held.finish;
        resolve({ ok: false, response: held.response });
      },
    }).then(
      (read) => {
        if (read.ok) resolve({ ok: true, text: read.text });
        else finish?.(read.drained);
      },
      () => {
        // The client went away while sending: nobody is left to answer.
        if (finish === undefined) resolve({ ok: false, response: Response.error() });
        else finish(false);
      },
    );
  });
}

/** A JSON answer sent at once, with its length, whose body ends (drained) or errors (not) when `finish` is called. */
function heldAnswer(answer: RefusalAnswer): { readonly response: Response; readonly finish: (drained: boolean) => void } {
  const bytes = new TextEncoder().encode(answer.json);
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(started) {
      controller = started;
      controller.enqueue(bytes);
    },
  });
  const headers = { "content-type": "application/json", "content-length": String(bytes.byteLength), connection: "close" };
  const finish = (drained: boolean): void => {
    try {
      if (drained) controller.close();
      else controller.error(new Error("the refused request body was too large to drain"));
    } catch {
      // Cancelled already: the client is gone.
    }
  };
  return { response: new Response(body, { status: answer.status, headers }), finish };
}
