/**
 * The operator console's routes below `/console` (`toolpact serve` with `console.enabled`): sign-in with
 * the admin key, the views, and two actions (revoke a plugin key, disable a plugin), each asked again
 * before it is done. Every page carries the confirmation page's framing and content rules; every post
 * must come from the console's own site and carry the session's CSRF token; without a session a page
 * answers 401 with the sign-in form and no data.
 */
import type { IncomingHttpHeaders } from "node:http";
import { ToolpactError } from "@toolpact/contract";
import type { AdminActivityFilter, Runtime } from "@toolpact/runtime";
import { headerRecord, readForm } from "../confirmation-page.js";
import { describeInternalError, httpStatusOf, toPublicError } from "../errors.js";
import type { Logger } from "../logger.js";
import { isForeignSite } from "../request-site.js";
import { CONSOLE_CSS } from "./console-assets.js";
import { consoleHref, renderActionQuestion, renderMessage, renderSignIn, type PageFrame } from "./console-layout.js";
import type { ConsoleSession, ConsoleSessions } from "./console-session.js";
import { OUTCOMES, renderKeys, renderPending, renderPlugins, renderPolicy, renderStory, renderTimeline, type ViewFrame } from "./console-views-html.js";

/** Where the console lives, below the server's root. */
export const CONSOLE_PATH = "/console";

/**
 * Headers every console page carries: the confirmation page's rules (no framing, same-origin forms and
 * referrers, no caching), with the console's one stylesheet from 'self' instead of inline style.
 */
export const CONSOLE_PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-security-policy": "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
});

/** Options of `createConsole`. */
export interface ConsoleOptions {
  readonly runtime: Runtime;
  readonly sessions: ConsoleSessions;
  /** The console's root as browsers see it, e.g. `/console` (with `publicUrl`'s path before it). */
  readonly base: string;
  /** `publicUrl`'s host, behind a proxy: posts from it are the console's own. */
  readonly publicHost: string | undefined;
  /** Checks a presented admin key (and counts and logs a wrong one). */
  readonly isAdminKey: (presented: string | undefined) => boolean;
  readonly logger: Logger;
}

const OPERATION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** The console's handler: `path` is the request's path below the server's root, `search` its query (`?` included). */
export function createConsole(options: ConsoleOptions): (request: Request, path: string, search: string) => Promise<Response> {
  const { runtime, sessions, base, logger } = options;
  const views = runtime.admin.views;

  /** The session of a request, or undefined. */
  const sessionOf = (headers: IncomingHttpHeaders): ConsoleSession | undefined => sessions.read(headers.cookie);

  /** Refuses a post another site made, or one without the session's CSRF token. */
  const requirePost = (headers: IncomingHttpHeaders, form: URLSearchParams): ConsoleSession => {
    if (isForeignSite(headers, options.publicHost)) {
      throw new ToolpactError("PERMISSION_DENIED", "the console accepts forms only from its own pages, not from another site");
    }
    const session = sessionOf(headers);
    if (session === undefined) throw new ToolpactError("UNAUTHENTICATED", "no valid console session (missing, expired or altered cookie): sign in again");
    if (!sessions.csrfMatches(session, form.get("csrf") ?? undefined)) {
      throw new ToolpactError("PERMISSION_DENIED", "the CSRF token is missing or does not belong to this session: reload the console page and use its buttons");
    }
    return session;
  };

  /** The frame of a signed-in page for the tenant asked for (or the first configured one). */
  const frameOf = async (session: ConsoleSession, asked: string | null): Promise<ViewFrame | undefined> => {
    const tenants = await views.tenants();
    const tenantId = asked !== null && asked !== "" ? asked : tenants[0];
    if (tenantId === undefined) return undefined;
    return { base, tenantId, tenants, csrfToken: sessions.csrfTokenOf(session) };
  };

  const signIn = async (request: Request, headers: IncomingHttpHeaders): Promise<Response> => {
    const form = await readForm(request, headers);
    if (isForeignSite(headers, options.publicHost)) {
      throw new ToolpactError("PERMISSION_DENIED", "the console signs in only from its own sign-in page, not from another site");
    }
    const next = safeNext(form.get("next"), base);
    if (!options.isAdminKey(form.get("adminKey") ?? undefined)) {
      return page(401, renderSignIn(base, next, "That is not this server's admin key. Nothing was signed in."));
    }
    const { setCookie } = sessions.issue();
    logger.info({ event: "console_signed_in" });
    return new Response(null, { status: 303, headers: { ...CONSOLE_PAGE_HEADERS, location: next ?? base, "set-cookie": setCookie } });
  };

  const view = async (section: string, session: ConsoleSession, query: URLSearchParams): Promise<Response> => {
    const frame = await frameOf(session, query.get("tenant"));
    if (frame === undefined) {
      const none: PageFrame = { base, csrfToken: sessions.csrfTokenOf(session) };
      return page(
        200,
        renderMessage(none, {
          heading: "No tenants yet",
          message: "No tenant has any configuration: install a plugin for a tenant (toolpact admin) and come back.",
        }),
      );
    }
    const { tenantId } = frame;
    if (section === "") {
      const filter = filterOf(tenantId, query);
      return page(200, renderTimeline(frame, filter, await views.activity(filter)));
    }
    if (section === "/confirmations") return page(200, renderPending(frame, await views.pendingConfirmations(tenantId)));
    if (section === "/plugins") return page(200, renderPlugins(frame, await views.plugins(tenantId)));
    if (section === "/policy") return page(200, renderPolicy(frame, await views.policy(tenantId)));
    if (section === "/keys") return page(200, renderKeys(frame, await views.keys(tenantId)));
    const operationId = section.slice("/operations/".length);
    const story = await views.operationStory(tenantId, operationId);
    if (story === undefined) {
      return page(
        404,
        renderMessage(frame, {
          heading: "No such operation",
          message: `Tenant "${tenantId}" has no operation "${operationId}" (or it was pruned).`,
          back: back(frame, ""),
        }),
      );
    }
    return page(200, renderStory(frame, story));
  };

  /** An action: the first post asks again; the second (`confirm=yes`) does it. */
  const act = async (action: "revoke" | "disable", request: Request, headers: IncomingHttpHeaders): Promise<Response> => {
    const form = await readForm(request, headers);
    const session = requirePost(headers, form);
    const tenantId = form.get("tenant") ?? "";
    const frame = { base, tenantId, csrfToken: sessions.csrfTokenOf(session) };
    const subject = action === "revoke" ? (form.get("keyId") ?? "") : (form.get("pluginId") ?? "");
    const section = action === "revoke" ? "/keys" : "/plugins";
    if (form.get("confirm") !== "yes") {
      const fields = action === "revoke" ? { tenant: tenantId, keyId: subject } : { tenant: tenantId, pluginId: subject };
      return page(
        200,
        renderActionQuestion(frame, {
          heading: action === "revoke" ? `Revoke key ${subject}?` : `Disable plugin ${subject}?`,
          consequence:
            action === "revoke"
              ? `Every call made with plugin key "${subject}" of tenant "${tenantId}" is refused from now on, on every instance. This cannot be undone: the plugin needs a new key.`
              : `Plugin "${subject}" stops serving and calling tools for tenant "${tenantId}" at once. An admin can enable it again (admin.setPluginEnabled).`,
          action: `${base}${section}/${action}`,
          fields,
          button: action === "revoke" ? "Revoke key" : "Disable plugin",
          cancel: consoleHref(frame, section),
        }),
      );
    }
    if (action === "revoke") await runtime.admin.revokePluginKey(tenantId, subject);
    else await runtime.admin.setPluginEnabled(tenantId, subject, false);
    logger.info({ event: "console_action", action, tenantId, subject });
    const done =
      action === "revoke" ? `Plugin key "${subject}" of tenant "${tenantId}" is revoked.` : `Plugin "${subject}" is disabled for tenant "${tenantId}".`;
    return page(200, renderMessage(frame, { heading: "Done", message: done, back: back(frame, section) }));
  };

  const route = async (request: Request, rest: string, query: URLSearchParams): Promise<Response> => {
    const method = request.method;
    const headers = headerRecord(request);
    if (rest === "/console.css")
      return method === "GET"
        ? new Response(CONSOLE_CSS, { status: 200, headers: { ...CONSOLE_PAGE_HEADERS, "content-type": "text/css; charset=utf-8" } })
        : notAllowed("GET");
    if (rest === "/sign-in") return method === "GET" ? page(200, renderSignIn(base, safeNext(query.get("next"), base))) : notAllowed("GET");
    if (rest === "/session") return method === "POST" ? signIn(request, headers) : notAllowed("POST");
    if (rest === "/sign-out") {
      if (method !== "POST") return notAllowed("POST");
      requirePost(headers, await readForm(request, headers));
      return page(200, renderSignIn(base, undefined), { "set-cookie": sessions.clearCookie });
    }
    if (rest === "/keys/revoke" || rest === "/plugins/disable") {
      return method === "POST" ? act(rest === "/keys/revoke" ? "revoke" : "disable", request, headers) : notAllowed("POST");
    }
    const isView = rest === "" || rest === "/confirmations" || rest === "/plugins" || rest === "/policy" || rest === "/keys";
    const isStory = rest.startsWith("/operations/") && OPERATION_ID.test(rest.slice("/operations/".length));
    if (!isView && !isStory)
      return page(
        404,
        renderMessage({ base }, { heading: "Not found", message: "The console has no such page.", back: { href: base, label: "Open the console" } }),
      );
    if (method !== "GET") return notAllowed("GET");
    const session = sessionOf(headers);
    if (session === undefined) {
      const search = query.toString();
      return page(401, renderSignIn(base, `${base}${rest}${search === "" ? "" : `?${search}`}`));
    }
    return view(rest, session, query);
  };

  return async (request, path, search) => {
    const rest = path.slice(CONSOLE_PATH.length).replace(/\/$/, "");
    try {
      return await route(request, rest, new URLSearchParams(search));
    } catch (error) {
      const pub = toPublicError(error);
      if (pub.internal) logger.error({ event: "console_failed_unexpectedly", ...describeInternalError(error) });
      const status = httpStatusOf(pub.trpcCode);
      if (status === 401) return page(401, renderSignIn(base, undefined, pub.message));
      return page(
        status,
        renderMessage(
          { base },
          {
            heading: status === 403 ? "Not allowed" : status < 500 ? "This did not work" : "Something went wrong",
            message: pub.message,
            back: { href: base, label: "Back to the console" },
          },
        ),
      );
    }
  };
}

/** The timeline's filter from the query; a time that is not one is INPUT_INVALID. */
function filterOf(tenantId: string, query: URLSearchParams): AdminActivityFilter {
  const text = (name: string) => {
    const value = query.get(name)?.trim();
    return value === undefined || value === "" ? undefined : value.slice(0, 256);
  };
  const outcome = text("outcome");
  if (outcome !== undefined && !(OUTCOMES as readonly string[]).includes(outcome)) {
    throw new ToolpactError("INPUT_INVALID", `outcome must be one of ${OUTCOMES.join(", ")}; got "${outcome}"`, {
      issues: [{ path: "/outcome", message: "unknown outcome" }],
    });
  }
  const entries = {
    caller: text("caller"),
    provider: text("provider"),
    tool: text("tool"),
    actor: text("actor"),
    outcome: outcome as AdminActivityFilter["outcome"],
    since: timeOf("since", text("since")),
    until: timeOf("until", text("until")),
  };
  return { tenantId, ...Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined)) };
}

/** A time from a `datetime-local` field (read as UTC) or an ISO time; undefined when empty. */
function timeOf(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(/(Z|[+-]\d\d:\d\d)$/.test(value) ? value : `${value}Z`);
  if (Number.isNaN(ms)) {
    throw new ToolpactError("INPUT_INVALID", `${name} must be a time such as 2026-12-04T09:30 (UTC); got "${value.slice(0, 64)}"`, {
      issues: [{ path: `/${name}`, message: "not a time" }],
    });
  }
  return ms;
}

/** Where to go after sign-in: a path inside the console, never another site. */
function safeNext(next: string | null, base: string): string | undefined {
  if (next === null || next.length > 2048) return undefined;
  const inside = next === base || next.startsWith(`${base}/`) || next.startsWith(`${base}?`);
  return inside && !next.startsWith("//") && !next.includes("\\") ? next : undefined;
}

function back(frame: PageFrame, section: string): { readonly href: string; readonly label: string } {
  return { href: consoleHref(frame, section), label: "Back" };
}

function page(status: number, html: string, extra: Record<string, string> = {}): Response {
  return new Response(html, { status, headers: { ...CONSOLE_PAGE_HEADERS, ...extra, "content-type": "text/html; charset=utf-8" } });
}

function notAllowed(allow: string): Response {
  return new Response(`This address answers ${allow} only.`, {
    status: 405,
    headers: { ...CONSOLE_PAGE_HEADERS, allow, "content-type": "text/plain; charset=utf-8" },
  });
}
