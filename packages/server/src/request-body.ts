import type { IncomingMessage, ServerResponse } from "node:http";
import { readBoundedJson, type BodyLimits, type BodyRefusal } from "@toolpact/contract";
import { toErrorShape } from "./errors.js";

/** What a request that a body parser already read carries (Express's `express.json()`, Fastify). */
type ParsedRequest = IncomingMessage & { body?: unknown };

/**
 * Reads a `/trpc` call's body with its size and depth bounded while it streams in, then hands the text to
 * tRPC as `req.body` (which tRPC's Node adapter takes as is), so nothing ever parses a body past either
 * limit. A refused body gets its INPUT_INVALID answer at once (413 too large, 400 too deep); the rest is
 * read and dropped so the client sees that answer, then the connection closes. Resolves true when the
 * call may go on to tRPC.
 */
export async function readCallBody(req: ParsedRequest, res: ServerResponse, limits: BodyLimits, procedure: string): Promise<boolean> {
  // Mounted behind a body parser (against the advice): that parser bounded the body already.
  if (req.body !== undefined || req.readableEnded) return true;
  let read;
  try {
    read = await readBoundedJson(req, {
      ...limits,
      declaredBytes: Number(req.headers["content-length"] ?? 0),
      onRefused: (refusal) => writeBodyRefusal(res, refusal, procedure),
    });
  } catch {
    // The client went away while sending: nobody is left to answer.
    res.destroy();
    return false;
  }
  if (read.ok) {
    req.body = read.text;
    return true;
  }
  if (read.drained) res.end();
  else res.destroy();
  return false;
}

/** Writes the whole refusal at once, with its length, and leaves the response open until the body is drained. */
function writeBodyRefusal(res: ServerResponse, refusal: BodyRefusal, procedure: string): void {
  const trpcCode = refusal.reason === "too-large" ? "PAYLOAD_TOO_LARGE" : "BAD_REQUEST";
  const shape = toErrorShape(
    {
      trpcCode,
      message: refusal.message,
      toolpactCode: "INPUT_INVALID",
      toolpactData: { issues: [{ path: "", message: refusal.message }] },
      internal: false,
    },
    procedure.slice(0, 200),
  );
  const body = JSON.stringify({ error: shape });
  res.writeHead(shape.data.httpStatus, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    connection: "close",
  });
  res.write(body);
}
