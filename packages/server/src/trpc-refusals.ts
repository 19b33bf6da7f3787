/**
 * The answers `/trpc` and `/mcp` give a request refused before it reaches tRPC or the MCP SDK: JSON
 * errors that name the procedure, as Fetch `Response`s.
 */
import { RETRY_AFTER_SECONDS } from "./caller-admission.js";
import { toErrorShape } from "./errors.js";

/** A refusal of the request itself (INPUT_INVALID with one issue), closing the connection after it. */
export function refuseInput(
  trpcCode: "BAD_REQUEST" | "UNSUPPORTED_MEDIA_TYPE" | "METHOD_NOT_SUPPORTED",
  message: string,
  procedures: string,
  extra: Record<string, string> = {},
): Response {
  const shape = toErrorShape(
    { trpcCode, message, toolpactCode: "INPUT_INVALID", toolpactData: { issues: [{ path: "", message }] }, internal: false },
    procedures.slice(0, 200),
  );
  return Response.json({ error: shape }, { status: shape.data.httpStatus, headers: { ...extra, connection: "close" } });
}

/** Answers 400 to a batched request (`?batch=...`) before reading its body or running any of its calls. */
export function refuseBatch(procedures: string): Response {
  return refuseInput("BAD_REQUEST", "batched requests are not accepted: send one call per request (tRPC's httpLink, not httpBatchLink)", procedures);
}

/**
 * Answers 415 to a call whose body is not declared JSON, as a JSON error like every other refusal
 * (tRPC's own answer is text/plain and names no procedure).
 */
export function refuseMediaType(type: string | null, procedures: string): Response {
  const given = type === null ? "no content-type" : `content-type "${type.slice(0, 100)}"`;
  return refuseInput("UNSUPPORTED_MEDIA_TYPE", `calls take a JSON body: send "content-type: application/json" (this request has ${given})`, procedures);
}

/** Answers 405 to a method `/trpc` does not serve (queries are GET, mutations POST), with `Allow`. */
export function refuseMethod(method: string, procedures: string): Response {
  return refuseInput("METHOD_NOT_SUPPORTED", `method ${method.slice(0, 20)} is not allowed here: queries use GET, mutations POST`, procedures, {
    allow: "GET, POST",
  });
}

/** Answers 429 RATE_LIMITED with `Retry-After` to a caller past its bound. */
export function refuseRateLimited(message: string, procedures: string): Response {
  const shape = toErrorShape(
    { trpcCode: "TOO_MANY_REQUESTS", message, toolpactCode: "RATE_LIMITED", toolpactData: { retryAfterMs: RETRY_AFTER_SECONDS * 1000 }, internal: false },
    procedures.slice(0, 200),
  );
  return Response.json({ error: shape }, { status: shape.data.httpStatus, headers: { "retry-after": String(RETRY_AFTER_SECONDS) } });
}

/** The same refusal on `/mcp`, as a JSON-RPC error. */
export function refuseMcpRateLimited(message: string): Response {
  return Response.json(
    { jsonrpc: "2.0", error: { code: -32000, message: `RATE_LIMITED: ${message}` }, id: null },
    { status: 429, headers: { "retry-after": String(RETRY_AFTER_SECONDS) } },
  );
}

/** A plain-text answer to GET or HEAD; any other method gets 405. */
export function plain(method: string, status: number, text: string, headers: Record<string, string> = {}): Response {
  if (method !== "GET" && method !== "HEAD") {
    return new Response("method not allowed: use GET", {
      status: 405,
      headers: { ...headers, allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" },
    });
  }
  return new Response(method === "HEAD" ? null : text, { status, headers: { ...headers, "content-type": "text/plain; charset=utf-8" } });
}
