import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { traceContextOf, type CallerCredentials } from "@toolpact/runtime";

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

/** The token of an `Authorization: Bearer <token>` header; undefined for any other scheme or shape. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return BEARER.exec(header)?.[1];
}

/**
 * The credentials a request carries: `Authorization: Bearer <plugin key>` and `X-Toolpact-Actor`; and how
 * it came: over HTTP, unless it says `X-Toolpact-Via: mcp` (`toolpact mcp` forwarding an agent's calls; a
 * label the caller chooses, recorded on activity, never an identity); and the W3C trace context it continues
 * (`traceparent`, `tracestate`: dropped when malformed, never a reason to refuse).
 */
export function credentialsOf(headers: Headers | IncomingHttpHeaders): CallerCredentials {
  const get = headers instanceof Headers ? (name: string) => headers.get(name) ?? undefined : (name: string) => headers[name];
  const actor = get("x-toolpact-actor");
  const authorization = get("authorization");
  const traceparent = get("traceparent");
  const credentials: CallerCredentials = {
    pluginKey: bearerToken(typeof authorization === "string" ? authorization : undefined),
    actorToken: typeof actor === "string" && actor.length > 0 ? actor : undefined,
    via: get("x-toolpact-via") === "mcp" ? "mcp" : "http",
  };
  if (traceparent === undefined) return credentials;
  const traceContext = traceContextOf(traceparent, get("tracestate"));
  return traceContext === undefined ? credentials : { ...credentials, traceContext };
}

/**
 * A check of a presented admin key against the configured one, in constant time: both sides are
 * hashed first, so neither the key's content nor its length leaks through timing.
 * With no configured key, nothing passes.
 */
export function createAdminKeyCheck(adminKey: string | undefined): (presented: string | undefined) => boolean {
  if (adminKey === undefined || adminKey.length === 0) return () => false;
  const expected = digest(adminKey);
  return (presented) => presented !== undefined && timingSafeEqual(digest(presented), expected);
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
