/** Driving the confirmation page with plain fetch, as a browser would (cookies and forms by hand). */
import { mintPresenceToken, type PresenceTokenSpec } from "./tokens.js";

/** A signed-in confirmation-page session: the cookie a browser would send back. */
export interface PageSession {
  /** `name=value`, as a `Cookie` header carries it. */
  readonly cookie: string;
  /** The full `Set-Cookie` header the server sent. */
  readonly setCookie: string;
}

/** Exchanges a fresh presence token for a session cookie at `/confirm/session`. */
export async function signIn(url: string, actorSecret: Uint8Array, spec: PresenceTokenSpec = {}): Promise<PageSession> {
  const token = await mintPresenceToken(actorSecret, spec);
  const response = await fetch(`${url}/confirm/session?token=${encodeURIComponent(token)}`, { redirect: "manual" });
  const setCookie = response.headers.get("set-cookie");
  if (response.status !== 200 || setCookie === null) {
    throw new Error(`sign-in failed: HTTP ${response.status} ${await response.text()}`);
  }
  return { cookie: setCookie.split(";")[0]!, setCookie };
}

/** A confirmation page as fetched. */
export interface FetchedPage {
  readonly status: number;
  readonly headers: Headers;
  readonly html: string;
  /** The CSRF token its forms post, when it has forms. */
  readonly csrf: string | undefined;
}

/** GET /confirm/<requestId> with a session cookie (or none). */
export async function fetchPage(url: string, requestId: string, session?: PageSession, headers: Record<string, string> = {}): Promise<FetchedPage> {
  const response = await fetch(`${url}/confirm/${requestId}`, {
    headers: { ...headers, ...(session ? { cookie: session.cookie } : {}) },
    redirect: "manual",
  });
  const html = await response.text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  return { status: response.status, headers: response.headers, html, csrf };
}

/** POST /confirm/<requestId>/<decision> as the page's form does. */
export async function postDecision(
  url: string,
  requestId: string,
  decision: "approve" | "deny",
  options: { session?: PageSession; csrf?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; location: string | null; html: string }> {
  const body = new URLSearchParams(options.csrf === undefined ? {} : { csrf: options.csrf });
  const response = await fetch(`${url}/confirm/${requestId}/${decision}`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...options.headers,
      ...(options.session ? { cookie: options.session.cookie } : {}),
    },
    body: body.toString(),
    redirect: "manual",
  });
  return { status: response.status, location: response.headers.get("location"), html: await response.text() };
}
