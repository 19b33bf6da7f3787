import { readBoundedRequest, type BodyLimits, type BoundedRequestBody } from "@toolpact/contract";
import { toErrorShape } from "./errors.js";

/**
 * Reads a `/trpc` call's body with its size and depth bounded while it streams in, so nothing ever parses
 * a body past either limit. A refused body gets its INPUT_INVALID answer at once (413 too large, 400 too
 * deep) while the rest is read and dropped, then the connection closes.
 */
export function readCallBody(request: Request, limits: BodyLimits, procedure: string): Promise<BoundedRequestBody> {
  return readBoundedRequest(request, limits, (refusal) => {
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
    return { status: shape.data.httpStatus, json: JSON.stringify({ error: shape }) };
  });
}
