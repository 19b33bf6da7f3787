import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { CallerCredentials } from "@toolpact/runtime";

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

/** The token of an `Authorization: Bearer <token>` header; undefined for any other scheme or shape. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return BEARER.exec(header)?.[1];
}

/**
 * The credentials a request carries: `Authorization: Bearer <plugin key>` and `X-Toolpact-Actor`; and how
 * it came: over HTTP, unless it says `X-Toolpact-Via: mcp` (`toolpact mcp` forwarding an agent's calls; a
 * label the caller chooses, recorded on activity, never an identity).
 */
export function credentialsOf(headers: IncomingHttpHeaders): CallerCredentials {
  const actor = headers["x-toolpact-actor"];
  return {
    pluginKey: bearerToken(headers.authorization),
    actorToken: typeof actor === "string" && actor.length > 0 ? actor : undefined,
    via: headers["x-toolpact-via"] === "mcp" ? "mcp" : "http",
  };
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
