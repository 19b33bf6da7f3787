/**
 * The confirmation page's grant routes: approving a request as a grant (`POST /confirm/<id>/grant`), and the
 * signed-in person's own grants (`GET /confirm/grants`, `POST /confirm/grants/<grantId>/revoke`). Every post
 * needs the session and its CSRF token (`requirePresence`); grants are made nowhere else.
 */
import { ToolpactError } from "@toolpact/contract";
import { mayDecideHere } from "./confirmation-origin.js";
import { grantChoiceOf } from "./confirmation-grant-form.js";
import { renderGrantList } from "./confirmation-grants-html.js";
import { renderConfirmationPage, renderGrantsPage } from "./confirmation-page-html.js";
import { type ConfirmationPageOptions, type PageRequest, requirePresence, sessionOf } from "./confirmation-page.js";
import { readForm, sendPage } from "./confirmation-page-response.js";
import { personDeciding } from "./presence-session.js";

/** The grant routes' handlers, for the page's options. */
export interface GrantRoutes {
  decideGrant(req: PageRequest, requestId: string): Promise<Response>;
  showGrants(req: PageRequest, message?: string, prefix?: string): Promise<Response>;
  revokeGrant(req: PageRequest, grantId: string): Promise<Response>;
}

/** The grant routes of the confirmation page `options` describes. */
export function createGrantRoutes(options: ConfirmationPageOptions): GrantRoutes {
  const { runtime, sessions, logger } = options;

  /** `POST /confirm/<id>/grant`: approves the request and makes the grant the person chose, in one decision. */
  const decideGrant = async (req: PageRequest, requestId: string): Promise<Response> => {
    const form = await readForm(req.request, req.headers);
    const session = requirePresence(options, req.headers, form.get("csrf") ?? undefined);
    const person = personDeciding(session, requestId);
    const view = await runtime.describeConfirmation(person, requestId);
    const decided = await runtime.decideConfirmation(person, requestId, "approve", grantChoiceOf(form));
    logger.info({ event: "confirmation_page_granted", requestId, ...(decided.grantId === undefined ? {} : { grantId: decided.grantId }) });
    return sendPage({ status: 200, html: renderConfirmationPage({ ...view, status: decided.status }, person, undefined, "../grants") });
  };

  /** `GET /confirm/grants`: the signed-in person's grants, with Revoke buttons where the page may decide. */
  const showGrants = async (req: PageRequest, message?: string, prefix = ""): Promise<Response> => {
    const session = sessionOf(options, req.headers.cookie);
    if (session === undefined) {
      throw new ToolpactError("UNAUTHENTICATED", "sign in first: open a confirmation link from your app, then come back to Your grants");
    }
    const person = { tenantId: session.tenantId, userId: session.userId };
    const csrfToken = mayDecideHere(options.origin) ? sessions.csrfTokenOf(session) : undefined;
    const list = renderGrantList(await runtime.grants.list(person), csrfToken, prefix);
    return sendPage({ status: 200, html: renderGrantsPage(person, list, message) }, req.method === "HEAD");
  };

  /** `POST /confirm/grants/<grantId>/revoke`: ends one of the person's own grants at once. */
  const revokeGrant = async (req: PageRequest, grantId: string): Promise<Response> => {
    const form = await readForm(req.request, req.headers);
    const session = requirePresence(options, req.headers, form.get("csrf") ?? undefined);
    const revoked = await runtime.grants.revoke({ tenantId: session.tenantId, userId: session.userId }, grantId);
    return showGrants(
      req,
      revoked ? "The grant is revoked: its app asks you again from now on." : "That grant was not live (already revoked or ended).",
      "../../",
    );
  };

  return { decideGrant, showGrants, revokeGrant };
}
