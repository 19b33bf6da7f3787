import type { IncomingHttpHeaders } from "node:http";
import { ACTOR_TOKEN_MAX_LENGTH, ToolpactError } from "@toolpact/contract";
import type { Runtime } from "@toolpact/runtime";
import {
  isServedAtConfirmationOrigin,
  mayDecideHere,
  notServedHereMessage,
  requireConfirmationOrigin,
  type ConfirmationOrigin,
} from "./confirmation-origin.js";
import type { ConfirmationLogin } from "./confirmation-login.js";
import { createGrantRoutes } from "./confirmation-grant-routes.js";
import { renderConfirmationPage, renderContinuePage, renderLoginLink, renderMessagePage, renderSignInStep } from "./confirmation-page-html.js";
import { headingOf, methodNotAllowed, pageHeaders, readForm, sendPage } from "./confirmation-page-response.js";
import { describeInternalError, httpStatusOf, toPublicError } from "./errors.js";
import type { Logger } from "./logger.js";
import { personDeciding, type PresenceSession, type PresenceSessions } from "./presence-session.js";
import { isForeignSite, isTopLevelNavigation } from "./request-site.js";
import { createRouterCaller } from "./router.js";

export { CONFIRMATION_PAGE_HEADERS, readForm } from "./confirmation-page-response.js";

/** The header a tRPC `confirmations.approve`/`deny` request carries its CSRF token in. */
export const CSRF_HEADER = "x-toolpact-csrf";

/** Where the confirmation page lives, below the server's root. */
export const CONFIRM_PREFIX = "/confirm/";

const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/**
 * The confirmation page's sessions, the host its own pages are served at (`publicUrl`'s, behind a proxy),
 * whether it has an origin of its own to decide on, and its sign-in at the platform's OpenID provider (if any).
 */
export interface PresencePage {
  readonly sessions: PresenceSessions;
  readonly publicHost: string | undefined;
  readonly origin: ConfirmationOrigin;
  readonly login?: ConfirmationLogin;
}

/**
 * The session a `Cookie` header carries, if it is valid and made the way this page signs people in now:
 * with a sign-in configured, a session from a presence token counts only while `presenceTokens` is on.
 */
export function sessionOf(page: PresencePage, cookieHeader: string | undefined): PresenceSession | undefined {
  const session = page.sessions.read(cookieHeader);
  if (session?.attestation.method === "presence-token" && !acceptsPresenceTokens(page)) return undefined;
  return session;
}

function acceptsPresenceTokens(page: PresencePage): boolean {
  return page.login === undefined || page.login.acceptsPresenceTokens;
}

/**
 * Step 1 of `approve`/`deny`, for the page's form posts and for tRPC alike: the request must carry no
 * caller credential (plugin key, actor token), must not come from another site (`Sec-Fetch-Site`, else
 * `Origin`), must reach a page with an origin of its own (`requireConfirmationOrigin`), must carry a
 * valid session cookie, and the session's CSRF token. Throws a ToolpactError saying which rule failed.
 */
export function requirePresence(page: PresencePage, headers: IncomingHttpHeaders, csrfToken: string | undefined): PresenceSession {
  const { sessions } = page;
  refusePluginCredentials(headers, "approve and deny are for the person on the confirmation page, not for plugins");
  if (isForeignSite(headers, page.publicHost)) {
    throw new ToolpactError("PERMISSION_DENIED", "approve and deny are accepted only from the confirmation page itself, not from another site");
  }
  requireConfirmationOrigin(page.origin, headers);
  const session = sessionOf(page, headers.cookie);
  if (session === undefined) {
    throw new ToolpactError(
      "UNAUTHENTICATED",
      "no valid confirmation-page session (missing, expired or altered cookie): open the confirmation link from your app again to sign in",
    );
  }
  if (!sessions.csrfMatches(session, csrfToken)) {
    throw new ToolpactError(
      "PERMISSION_DENIED",
      "the CSRF token is missing or does not belong to this session: reload the confirmation page and use its buttons",
    );
  }
  return session;
}

/**
 * Refuses a request to the page that carries a plugin's credential: the page acts for people only.
 * @throws ToolpactError PERMISSION_DENIED, `what` first.
 */
function refusePluginCredentials(headers: IncomingHttpHeaders, what: string): void {
  if (headers.authorization !== undefined) {
    throw new ToolpactError(
      "PERMISSION_DENIED",
      `${what}: this request carries an Authorization header (a plugin key); send it from the page's session without one`,
    );
  }
  if (headers["x-toolpact-actor"] !== undefined) {
    throw new ToolpactError(
      "PERMISSION_DENIED",
      `${what}: this request carries an actor token (X-Toolpact-Actor); send it from the page's session without one`,
    );
  }
}

/** Options of `createConfirmationPage`. */
export interface ConfirmationPageOptions extends PresencePage {
  readonly runtime: Runtime;
  readonly logger: Logger;
  /** Aborts when the server shuts down. */
  readonly shutdown: AbortSignal;
  /** Said on the "Sign-in needed" page: where this deployment's people find the link that signs them in. */
  readonly signInHint?: string;
}

/**
 * The confirmation page's routes below `/confirm/`:
 * `GET|POST /confirm/session` (presence token -> session cookie, then on to the request `?next=` names;
 *   another site may only navigate a browser here, never post or embed, and such a navigation gets a
 *   Continue button whose same-origin post signs in: no site can sign a browser in by itself),
 * `GET /confirm/login?request=<id>` and `GET /confirm/<redirectPath>` (sign-in at the platform's OpenID
 *   provider, when `login` is given: the same rule, another site may only navigate here, and the way back
 *   must carry the state of a sign-in this browser started),
 * `GET /confirm/<id>` (the request and its Approve and Deny buttons),
 * `POST /confirm/<id>/approve|deny` (form posts; decided through the router's procedures),
 * `POST /confirm/<id>/grant` (approve, and grant the next calls like it within the policy's bounds),
 * `GET /confirm/grants` and `POST /confirm/grants/<grantId>/revoke` (the signed-in person's own grants).
 * Every post needs the session and its CSRF token (`requirePresence`); grants are made nowhere else.
 */
export function createConfirmationPage(options: ConfirmationPageOptions): (request: Request, path: string, search: string) => Promise<Response> {
  const { runtime, sessions, logger, shutdown, login } = options;
  const { decideGrant, showGrants, revokeGrant } = createGrantRoutes(options);

  const fail = (error: unknown, head = false, cookies: readonly string[] = []): Response => {
    const pub = toPublicError(error);
    if (pub.internal) logger.error({ event: "confirmation_page_failed_unexpectedly", ...describeInternalError(error) });
    const status = httpStatusOf(pub.trpcCode);
    return sendPage({ status, html: renderMessagePage(headingOf(status), pub.message) }, head, cookies);
  };

  /** Another site may send a browser to a sign-in only by navigating it there; never by a post, a fetch or a frame. */
  const refuseForeignNonNavigation = (req: PageRequest): boolean => {
    const foreign = isForeignSite(req.headers, options.publicHost);
    if (foreign && !isTopLevelNavigation(req.method, req.headers)) {
      throw new ToolpactError(
        "PERMISSION_DENIED",
        "another site posted or embedded this sign-in: the confirmation page signs you in only when your browser opens its link itself; open the confirmation link from your app",
      );
    }
    return foreign;
  };

  const startSession = async (req: PageRequest, search: URLSearchParams): Promise<Response> => {
    let token = search.get("token") ?? undefined;
    let next = search.get("next") ?? undefined;
    if (req.method === "POST") {
      const form = await readForm(req.request, req.headers);
      token = form.get("token") ?? token;
      next = form.get("next") ?? next;
    }
    refusePluginCredentials(req.headers, "the confirmation page signs in people, not plugins");
    if (!acceptsPresenceTokens(options)) {
      throw new ToolpactError(
        "PERMISSION_DENIED",
        `this confirmation page signs people in at ${login?.issuer ?? "the platform's sign-in provider"}, not with presence tokens: ` +
          "open the confirmation link from your app and sign in with your account",
      );
    }
    const foreign = refuseForeignNonNavigation(req);
    if (req.method === "POST" && options.origin.kind === "dedicated") requireConfirmationOrigin(options.origin, req.headers);
    if (token === undefined || token.length === 0) {
      throw new ToolpactError(
        "UNAUTHENTICATED",
        "no presence token: open the confirmation link from your app; it signs you in through /confirm/session?token=...",
      );
    }
    if (token.length > ACTOR_TOKEN_MAX_LENGTH) {
      throw new ToolpactError("UNAUTHENTICATED", "the presence token is too long to be valid: open the confirmation link from your app again");
    }
    if (foreign) {
      // A navigation another site started (the identity service's, or an attacker's with their own token):
      // nothing is signed in until this page's own post, which only the person's click on it makes.
      return sendPage({ status: 200, html: renderSignInStep({ token, ...(next === undefined ? {} : { next }) }) });
    }
    const person = await runtime.verifyPresenceToken(token);
    const { setCookie } = sessions.issue({ tenantId: person.tenantId, userId: person.userId, notAfter: person.expiresAt, ...bound(person.requestId) });
    const cookie = [setCookie];
    const requestId = person.requestId ?? (next === undefined ? undefined : requestIdOfNext(next));
    if (requestId !== undefined) {
      // Not a redirect: the identity service's page on another site started this navigation, and a
      // browser withholds SameSite=Strict cookies along a redirect chain a cross-site page started.
      // This page's own (same-site) refresh carries the new cookie. Relative: /confirm/<id> under any prefix.
      return sendPage({ status: 200, html: renderContinuePage(encodeURIComponent(requestId)) }, false, cookie);
    }
    return sendPage(
      {
        status: 200,
        html: renderMessagePage(
          "Signed in for confirmations",
          `You are signed in as ${person.userId}. Open the confirmation link from your app again to see the request.`,
        ),
      },
      false,
      cookie,
    );
  };

  /** `GET /confirm/login?request=<id>`: on to the provider, with a fresh login cookie (from another site's link, after a click here). */
  const beginLogin = async (req: PageRequest, search: URLSearchParams, signIn: ConfirmationLogin): Promise<Response> => {
    refusePluginCredentials(req.headers, "the confirmation page signs in people, not plugins");
    const requestId = search.get("request") ?? undefined;
    if (requestId !== undefined && !REQUEST_ID.test(requestId)) {
      throw new ToolpactError("INPUT_INVALID", "request is not a confirmation request id: open the confirmation link from your app", {
        issues: [{ path: "/request", message: "not a request id" }],
      });
    }
    if (refuseForeignNonNavigation(req)) {
      return sendPage({ status: 200, html: renderLoginLink({ href: loginHref(requestId), started: true }) });
    }
    const { location, setCookie } = await signIn.begin(requestId);
    return new Response(null, { status: 303, headers: pageHeaders({ location }, [setCookie]) });
  };

  /** `GET /confirm/<redirectPath>`: the provider's way back; a session for the signed-in person, and on to the request. */
  const completeLogin = async (req: PageRequest, search: URLSearchParams, signIn: ConfirmationLogin): Promise<Response> => {
    try {
      refusePluginCredentials(req.headers, "the confirmation page signs in people, not plugins");
      refuseForeignNonNavigation(req);
      const person = await signIn.complete(search, req.headers.cookie);
      const attestation = { method: "oidc", subject: person.subject, issuer: person.issuer } as const;
      const { setCookie } = sessions.issue({ tenantId: person.tenantId, userId: person.userId, notAfter: person.expiresAt, attestation });
      const cookies = [setCookie, signIn.clearCookie];
      logger.info({ event: "confirmation_page_signed_in", method: "oidc", issuer: person.issuer });
      if (person.next !== undefined) {
        // As after a presence token: the provider's site started this navigation, so this page's own
        // (same-site) refresh is what carries the SameSite=Strict session cookie on to the request.
        const up = "../".repeat(signIn.redirectPath.split("/").length - 1);
        return sendPage({ status: 200, html: renderContinuePage(`${up}${encodeURIComponent(person.next)}`) }, false, cookies);
      }
      const html = renderMessagePage(
        "Signed in for confirmations",
        `You are signed in as ${person.userId}. Open the confirmation link from your app again to see the request.`,
      );
      return sendPage({ status: 200, html }, false, cookies);
    } catch (error) {
      return fail(error, false, [signIn.clearCookie]);
    }
  };

  const showRequest = async (req: PageRequest, requestId: string): Promise<Response> => {
    const head = req.method === "HEAD";
    const session = sessionOf(options, req.headers.cookie);
    if (session === undefined && login !== undefined) {
      return sendPage({ status: 401, html: renderLoginLink({ href: loginHref(requestId), started: false }) }, head);
    }
    if (session === undefined) {
      const html = renderMessagePage(
        "Sign-in needed",
        "This page shows a request for your confirmation, and it needs to know who you are. " +
          (options.signInHint ??
            "Open the confirmation link from your app: it signs you in (through /confirm/session with a short-lived presence token) and brings you back here."),
      );
      return sendPage({ status: 401, html }, head);
    }
    const person = personDeciding(session, requestId);
    const view = await runtime.describeConfirmation(person, requestId);
    const csrfToken = mayDecideHere(options.origin) ? sessions.csrfTokenOf(session) : undefined;
    return sendPage({ status: 200, html: renderConfirmationPage(view, person, csrfToken) }, head);
  };

  const decide = async (req: PageRequest, asked: { readonly requestId: string; readonly decision: "approve" | "deny" }): Promise<Response> => {
    const { requestId, decision } = asked;
    const form = await readForm(req.request, req.headers);
    const csrf = form.get("csrf") ?? undefined;
    const session = requirePresence(options, req.headers, csrf);
    const person = personDeciding(session, requestId);
    // What the person decides on, read before the decision: the preview is not kept once it is made.
    const view = await runtime.describeConfirmation(person, requestId);
    const caller = createRouterCaller({
      runtime,
      authenticate: () => Promise.reject(new ToolpactError("UNAUTHENTICATED", "the confirmation page has no caller credentials")),
      authorizeAdmin: () => false,
      presence: async () => session,
      shutdown,
    });
    const decided = await (decision === "approve" ? caller.confirmations.approve({ requestId }) : caller.confirmations.deny({ requestId }));
    // The page again, with what was decided on and its new status (a reload posts again and is told it is decided).
    return sendPage({ status: 200, html: renderConfirmationPage({ ...view, status: decided.status }, person, undefined, "../grants") });
  };

  return async (request, path, search) => {
    const req: PageRequest = { request, method: request.method, headers: headerRecord(request) };
    const rest = path.slice(CONFIRM_PREFIX.length).split("/");
    const head = req.method === "HEAD";
    if (!isServedAtConfirmationOrigin(options.origin, req.headers)) {
      return sendPage({ status: 404, html: renderMessagePage("Not found", notServedHereMessage(options.origin)) }, head);
    }
    try {
      if (login !== undefined && rest.length === 1 && rest[0] === "login") {
        if (req.method !== "GET") return methodNotAllowed("GET");
        return await beginLogin(req, new URLSearchParams(search), login);
      }
      if (login !== undefined && rest.join("/") === login.redirectPath) {
        if (req.method !== "GET") return methodNotAllowed("GET");
        return await completeLogin(req, new URLSearchParams(search), login);
      }
      if (rest.length === 1 && rest[0] === "session") {
        if (req.method !== "GET" && req.method !== "POST") return methodNotAllowed("GET, POST");
        return await startSession(req, new URLSearchParams(search));
      }
      if (rest.length === 1 && rest[0] === "grants") {
        if (req.method !== "GET" && req.method !== "HEAD") return methodNotAllowed("GET, HEAD");
        return await showGrants(req);
      }
      if (rest.length === 3 && rest[0] === "grants" && REQUEST_ID.test(rest[1] ?? "") && rest[2] === "revoke") {
        if (req.method !== "POST") return methodNotAllowed("POST");
        return await revokeGrant(req, rest[1]!);
      }
      if (rest.length === 2 && REQUEST_ID.test(rest[0] ?? "") && rest[1] === "grant") {
        if (req.method !== "POST") return methodNotAllowed("POST");
        return await decideGrant(req, rest[0]!);
      }
      if (rest.length === 1 && REQUEST_ID.test(rest[0] ?? "")) {
        if (req.method !== "GET" && req.method !== "HEAD") return methodNotAllowed("GET, HEAD");
        return await showRequest(req, rest[0]!);
      }
      if (rest.length === 2 && REQUEST_ID.test(rest[0] ?? "") && (rest[1] === "approve" || rest[1] === "deny")) {
        if (req.method !== "POST") return methodNotAllowed("POST");
        return await decide(req, { requestId: rest[0]!, decision: rest[1] });
      }
    } catch (error) {
      return fail(error, head);
    }
    const html = renderMessagePage("Not found", "There is no such confirmation page: check the link your app gave you.");
    return sendPage({ status: 404, html });
  };
}

/** A request to the page, with its headers read once into a record (the page's checks take Node's shape). */
export interface PageRequest {
  readonly request: Request;
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
}

/**
 * The request's headers as a record of lower-case names (several values joined by commas, as `Headers`
 * gives them), with `host` taken from its URL when it has no Host header (a Request made in code).
 */
export function headerRecord(request: Request): IncomingHttpHeaders {
  const record: IncomingHttpHeaders = {};
  request.headers.forEach((value, name) => {
    record[name] = value;
  });
  record.host ??= new URL(request.url).host;
  return record;
}

/** `{ requestId }` when a presence token bound its sign-in to one request. */
function bound(requestId: string | undefined): { readonly requestId?: string } {
  return requestId === undefined ? {} : { requestId };
}

/** The request id a `next` parameter points at: `/confirm/<id>` (under any prefix) or nothing. */
function requestIdOfNext(next: string): string | undefined {
  if (!next.startsWith("/") || next.startsWith("//") || next.includes("\\")) return undefined;
  const match = /\/confirm\/([^/?#]+)$/.exec(next);
  const id = match?.[1];
  return id !== undefined && REQUEST_ID.test(id) ? id : undefined;
}

/** The sign-in link relative to `/confirm/<id>` and `/confirm/login`: `login`, with the request to come back to. */
function loginHref(requestId: string | undefined): string {
  return requestId === undefined ? "login" : `login?request=${encodeURIComponent(requestId)}`;
}
