/**
 * An authorization server's metadata (RFC 8414 `/.well-known/oauth-authorization-server`, else OpenID
 * Connect Discovery `/.well-known/openid-configuration`): where its JWKS and introspection endpoint are.
 * Fetched on first use and kept; a failed fetch is tried again on the next token, at most once per floor.
 */

/** What toolpact reads of an issuer's metadata. */
export interface IssuerMetadata {
  readonly issuer: string;
  readonly jwksUri?: string;
  readonly introspectionEndpoint?: string;
}

/** How long a failed discovery is kept before the next token tries again, ms. */
const RETRY_FLOOR_MS = 10_000;
/** How long one metadata request may take, ms. */
const FETCH_TIMEOUT_MS = 5_000;

/** The metadata URLs of an issuer, in the order tried: RFC 8414 (path inserted), then OpenID Connect Discovery (path appended). */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === "/" ? "" : url.pathname.replace(/\/+$/, "");
  return [`${url.origin}/.well-known/oauth-authorization-server${path}`, `${url.origin}${path}/.well-known/openid-configuration`];
}

/** Discovers `issuer`'s metadata once and keeps it; `clock` for the retry floor. */
export function createIssuerDiscovery(issuer: string, clock: () => number = Date.now): () => Promise<IssuerMetadata> {
  let kept: Promise<IssuerMetadata> | undefined;
  let failedAt = Number.NEGATIVE_INFINITY;
  let lastFailure: Error | undefined;
  return () => {
    if (kept !== undefined) return kept;
    if (lastFailure !== undefined && clock() - failedAt < RETRY_FLOOR_MS) return Promise.reject(lastFailure);
    const discovering = discover(issuer);
    kept = discovering;
    discovering.catch((error: Error) => {
      kept = undefined;
      failedAt = clock();
      lastFailure = error;
    });
    return discovering;
  };
}

async function discover(issuer: string): Promise<IssuerMetadata> {
  const problems: string[] = [];
  for (const url of metadataUrls(issuer)) {
    let body: unknown;
    try {
      const response = await fetch(url, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: "error" });
      if (!response.ok) {
        problems.push(`${url}: HTTP ${response.status}`);
        continue;
      }
      body = await response.json();
    } catch (error) {
      problems.push(`${url}: ${(error as Error).message}`);
      continue;
    }
    const metadata = body as { issuer?: unknown; jwks_uri?: unknown; introspection_endpoint?: unknown };
    // RFC 8414 section 3.3: the metadata must name the issuer it was fetched for, or an attacker's could pass.
    if (metadata?.issuer !== issuer) {
      problems.push(`${url}: its "issuer" is ${JSON.stringify(metadata?.issuer)}, not ${JSON.stringify(issuer)}`);
      continue;
    }
    return {
      issuer,
      ...(typeof metadata.jwks_uri === "string" ? { jwksUri: metadata.jwks_uri } : {}),
      ...(typeof metadata.introspection_endpoint === "string" ? { introspectionEndpoint: metadata.introspection_endpoint } : {}),
    };
  }
  throw new Error(`the metadata of issuer ${issuer} could not be read (${problems.join("; ")})`);
}
