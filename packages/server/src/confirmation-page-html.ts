/**
 * The confirmation page's HTML: plain, server-rendered, no script (the page's CSP allows none).
 * Every value from a request, a provider or a store passes through `escapeHtml`, and what the approval
 * binds (summary, details, the exact input) through `visibleHtml`: shown whole, hidden characters as badges.
 */
import type { ConfirmationRequestView } from "@toolpact/runtime";
import { renderGrantOffer } from "./confirmation-grants-html.js";
import { escapeHtml, sortedJson, visibleHtml } from "./visible-text.js";

export { escapeHtml } from "./visible-text.js";

/** What the page shows about one confirmation request: the runtime's view of it, one type for both. */
export type ConfirmationPageView = ConfirmationRequestView;

/** Who the page is shown to. */
export interface ConfirmationPageViewer {
  readonly tenantId: string;
  readonly userId: string;
}

const EFFECT_MEANING: Readonly<Record<string, string>> = {
  read: "reads data; changes nothing",
  write: "changes data kept by the plugin",
  external: "acts outside this platform (sends email, calls another service, ...)",
};

const STATUS_TEXT: Readonly<Record<string, string>> = {
  approved: "You approved this request. The app that asked can now carry it out.",
  denied: "You denied this request. Nothing was done.",
  expired: "This request expired before anyone decided. Nothing was done; the app has to ask again.",
  cancelled: "The app that asked withdrew this request. Nothing was done.",
};

const DECIDE_ELSEWHERE =
  "Approve and Deny are not offered here: this page shares its origin with an app whose scripts could press them in your name. " +
  "The operator must serve the confirmation page from an origin of its own (confirmationOrigin).";

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:44rem;margin:2rem auto;background:#fff;border:1px solid #d9dde5;border-radius:8px;padding:1.5rem 2rem}
h1{font-size:1.4rem;margin:0 0 .25rem}
code,pre{font:13px/1.45 ui-monospace,monospace}
pre{background:#f1f3f6;padding:.75rem;border-radius:6px;white-space:pre-wrap;word-break:break-word}
.hidden-char{display:inline-block;font:bold 11px/1.3 ui-monospace,monospace;color:#fff;background:#b91c1c;border-radius:3px;padding:0 .25em;margin:0 .1em}
.note{color:#5a6375;font-size:.9rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{color:#5a6375}dd{margin:0}
.effect-write,.effect-external{color:#9a3412;font-weight:600}
.summary{font-size:1.1rem;font-weight:600}
.actions{display:flex;gap:1rem;margin-top:1.5rem}.actions form{margin:0}
button{font:inherit;padding:.5rem 1.5rem;border-radius:6px;border:1px solid #888;cursor:pointer}
#approve{background:#166534;color:#fff;border-color:#166534}#deny{background:#fff;color:#991b1b;border-color:#991b1b}
.status{padding:.75rem;border-radius:6px;background:#eef2ff}
.error{padding:.75rem;border-radius:6px;background:#fef2f2}`;

function layout(title: string, body: string, head = ""): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="same-origin">${head}` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`
  );
}

/**
 * The page for one request: tool, effect, the provider's summary and details, the exact input the
 * approval binds (members in canonical order), who asks, expiry; Approve and Deny (forms posting the
 * session's CSRF token) only while the request is pending, after everything they approve. Without a
 * CSRF token (a page that may not decide here, or the answer to a decision) it shows no buttons.
 * `grantsHref`: the "Your grants" link relative to where the page is answered (`../grants` below `/confirm/<id>/`).
 */
export function renderConfirmationPage(
  view: ConfirmationPageView,
  viewer: ConfirmationPageViewer,
  csrfToken: string | undefined,
  grantsHref = "grants",
): string {
  const heading = view.title ?? view.tool;
  const effectMeaning = EFFECT_MEANING[view.effect];
  const details =
    view.details === undefined || view.details === null
      ? undefined
      : typeof view.details === "string"
        ? visibleHtml(view.details, "badge-and-break")
        : visibleHtml(JSON.stringify(view.details, null, 2), "layout");
  const summary = visibleHtml(view.summary);
  const input = view.input === undefined ? undefined : visibleHtml(sortedJson(view.input), "layout");
  const hidden = [summary, details, input].some((html) => html?.includes('class="hidden-char"'));
  const id = encodeURIComponent(view.requestId);
  const decision =
    view.status === "pending" && csrfToken === undefined
      ? `<p class="status" id="decide-elsewhere">${escapeHtml(DECIDE_ELSEWHERE)}</p>`
      : view.status === "pending" && csrfToken !== undefined
        ? `<p>Approve only if you asked for this. Approving lets <code>${escapeHtml(view.callerPluginId)}</code> carry out exactly the call shown above, with exactly this input, once.</p>` +
          `<div class="actions">` +
          decisionForm({ action: `${id}/approve`, id: "approve", label: "Approve" }, csrfToken) +
          decisionForm({ action: `${id}/deny`, id: "deny", label: "Deny" }, csrfToken) +
          `</div>` +
          (view.grants === undefined ? "" : renderGrantOffer({ id, limits: view.grants, input: view.input, callerPluginId: view.callerPluginId }, csrfToken))
        : `<p class="status" id="status" data-status="${escapeHtml(view.status)}">${escapeHtml(STATUS_TEXT[view.status] ?? `This request is ${view.status}.`)}</p>`;
  const body =
    `<h1>${escapeHtml(heading)}</h1>` +
    `<p><code>${escapeHtml(view.tool)}</code> &middot; effect: <span class="effect-${escapeHtml(view.effect)}">${escapeHtml(view.effect)}</span>` +
    (effectMeaning === undefined ? "" : ` (${escapeHtml(effectMeaning)})`) +
    `</p>` +
    (view.description === undefined ? "" : `<p>${escapeHtml(view.description)}</p>`) +
    (view.status !== "pending" && view.summary === "" && details === undefined && input === undefined
      ? `<p class="note" id="not-kept">What was asked is not kept once a request is decided or ends.</p>`
      : `<h2>${view.status === "pending" ? "What will happen" : `What you ${view.status === "approved" ? "approved" : view.status === "denied" ? "denied" : "were asked"}`}</h2>` +
        `<p class="summary" id="summary">${summary}</p>`) +
    (details === undefined ? "" : `<pre id="details">${details}</pre>`) +
    (input === undefined
      ? ""
      : `<h2>Exact input</h2><p class="note">What the app sends, in full, members in a fixed order.</p><pre id="input">${input}</pre>`) +
    (hidden
      ? `<p class="note" id="hidden-note">Marked in red: characters that are invisible or change how text reads (controls, direction overrides, zero-width).</p>`
      : "") +
    `<dl>` +
    `<dt>Asked by</dt><dd id="caller">${view.callerName === undefined ? "" : `${escapeHtml(view.callerName)} `}<code>${escapeHtml(view.callerPluginId)}</code></dd>` +
    `<dt>Asked at</dt><dd>${escapeHtml(view.createdAt)}</dd>` +
    `<dt>Expires</dt><dd>${escapeHtml(view.expiresAt)}</dd>` +
    `<dt>You are</dt><dd>${escapeHtml(viewer.userId)} (tenant ${escapeHtml(viewer.tenantId)})</dd>` +
    `<dt>Request</dt><dd><code>${escapeHtml(view.requestId)}</code></dd>` +
    `</dl>` +
    decision +
    `<p class="note"><a id="your-grants" href="${escapeHtml(grantsHref)}">Your grants</a></p>`;
  return layout(`Confirm: ${heading}`, body);
}

/**
 * After sign-in: moves on to the request at once (meta refresh, no script) and offers a link for
 * browsers that do not refresh. `target` is a URL relative to the page, already encoded.
 */
export function renderContinuePage(target: string): string {
  const href = escapeHtml(target);
  return layout(
    "Signed in",
    `<h1>Signed in</h1><p id="message">Opening the request for your confirmation&hellip; ` + `<a id="continue" href="${href}">Continue</a></p>`,
    `<meta http-equiv="refresh" content="0;url=${href}">`,
  );
}

/**
 * The same-site step of a sign-in another site started: a Continue button that posts the presence
 * token from this page (a same-origin post, which only the person's click makes). Nothing is signed in
 * before it, so another site cannot sign a browser into a session of its choosing.
 */
export function renderSignInStep(link: { readonly token: string; readonly next?: string }): string {
  return layout(
    "Sign in to confirm",
    `<h1>Sign in to confirm</h1><p id="message">A link brought you here to sign in to the confirmation page. ` +
      `Continue only if you just asked your app to do something that needs your confirmation.</p>` +
      `<form method="post" action="session">` +
      `<input type="hidden" name="token" value="${escapeHtml(link.token)}">` +
      (link.next === undefined ? "" : `<input type="hidden" name="next" value="${escapeHtml(link.next)}">`) +
      `<button type="submit" id="continue">Continue</button></form>`,
  );
}

/**
 * Sign-in at the platform's OpenID provider: a link (not a form: the page's CSP allows form posts to
 * itself only) to `/confirm/login`, which sends the browser on to the provider. `started` says another
 * site sent the browser here: the sign-in then starts only from this page's own link.
 */
export function renderLoginLink(link: { readonly href: string; readonly started: boolean }): string {
  const heading = link.started ? "Sign in to confirm" : "Sign-in needed";
  const message = link.started
    ? "A link brought you here to sign in to the confirmation page. Continue only if you just asked your app to do something that needs your confirmation."
    : "This page shows a request for your confirmation, and it needs to know who you are. Sign in with your account to see it.";
  return layout(
    heading,
    `<h1>${heading}</h1><p id="message">${escapeHtml(message)}</p>` + `<p><a id="sign-in" href="${escapeHtml(link.href)}">Sign in</a></p>`,
  );
}

/** The "your grants" page: `list` is `renderGrantList`'s HTML. */
export function renderGrantsPage(viewer: ConfirmationPageViewer, list: string, message?: string): string {
  return layout(
    "Your grants",
    `<h1>Your grants</h1><p class="note">Signed in as ${escapeHtml(viewer.userId)} (tenant ${escapeHtml(viewer.tenantId)}). ` +
      "A grant lets one app make the next calls of one tool for you without asking; revoking it takes effect at once.</p>" +
      (message === undefined ? "" : `<p class="status" id="message">${escapeHtml(message)}</p>`) +
      list,
  );
}

/** A page with a heading and an explanation (errors, sign-in results). */
export function renderMessagePage(heading: string, message: string): string {
  return layout(heading, `<h1>${escapeHtml(heading)}</h1><p class="error" id="message">${escapeHtml(message)}</p>`);
}

/** A form that posts one decision with the session's CSRF token. */
function decisionForm(button: { readonly action: string; readonly id: string; readonly label: string }, csrfToken: string): string {
  const { action, id, label } = button;
  return (
    `<form method="post" action="${escapeHtml(action)}">` +
    `<input type="hidden" name="csrf" value="${escapeHtml(csrfToken)}">` +
    `<button type="submit" id="${id}">${escapeHtml(label)}</button></form>`
  );
}
