/**
 * The console's page frame and its small pages (sign-in, messages, the "are you sure" step of an
 * action). Plain server-rendered HTML: no inline style or script, every value through `escapeHtml`.
 */
import { escapeHtml } from "../visible-text.js";

/** The console's sections, in the navigation's order: path below the console's root, and label. */
export const CONSOLE_SECTIONS = [
  { path: "", label: "Activity" },
  { path: "/confirmations", label: "Pending confirmations" },
  { path: "/plugins", label: "Plugins" },
  { path: "/policy", label: "Policy" },
  { path: "/keys", label: "Keys" },
] as const;

/** Where a page sits and whom it is shown to. */
export interface PageFrame {
  /** The console's root path, e.g. `/console`. */
  readonly base: string;
  /** The section the page belongs to (its path), for `aria-current`; undefined outside the sections. */
  readonly section?: string;
  /** The tenant the navigation's links keep. */
  readonly tenantId?: string;
  /** The session's CSRF token (the sign-out button); undefined when signed out. */
  readonly csrfToken?: string;
}

/** A whole page: head with the stylesheet, the navigation when signed in, and `body` in `<main>`. */
export function renderPage(frame: PageFrame, title: string, body: string): string {
  const nav = frame.csrfToken === undefined ? "" : renderNav(frame, frame.csrfToken);
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="same-origin">` +
    `<title>${escapeHtml(title)} - toolpact console</title><link rel="stylesheet" href="${escapeHtml(frame.base)}/console.css"></head>` +
    `<body><a class="skip" id="skip" href="#main">Skip to content</a>${nav}<main id="main" tabindex="-1">${body}</main></body></html>`
  );
}

/** A link inside the console, keeping the tenant. */
export function consoleHref(frame: PageFrame, path: string, query: Record<string, string | undefined> = {}): string {
  const params = new URLSearchParams();
  if (frame.tenantId !== undefined) params.set("tenant", frame.tenantId);
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== "") params.set(name, value);
  const search = params.toString();
  return `${frame.base}${path}${search === "" ? "" : `?${search}`}`;
}

function renderNav(frame: PageFrame, csrfToken: string): string {
  const links = CONSOLE_SECTIONS.map((section) => {
    const current = section.path === frame.section ? ' aria-current="page"' : "";
    return `<a href="${escapeHtml(consoleHref(frame, section.path))}"${current}>${escapeHtml(section.label)}</a>`;
  }).join("");
  return (
    `<header><nav aria-label="Console">${links}` +
    (frame.tenantId === undefined ? "" : `<span>tenant <code>${escapeHtml(frame.tenantId)}</code></span>`) +
    `<form method="post" action="${escapeHtml(frame.base)}/sign-out">${csrfField(csrfToken)}<button type="submit" id="sign-out">Sign out</button></form>` +
    `</nav></header>`
  );
}

/** The hidden field that carries the session's CSRF token in a form. */
export function csrfField(csrfToken: string): string {
  return `<input type="hidden" name="csrf" value="${escapeHtml(csrfToken)}">`;
}

/** The sign-in form: the admin key, posted to `<base>/session`, then on to `next`. */
export function renderSignIn(base: string, next: string | undefined, problem?: string): string {
  const body =
    `<h1>Sign in to the toolpact console</h1>` +
    (problem === undefined ? "" : `<p class="error" id="message">${escapeHtml(problem)}</p>`) +
    `<p>The console is for this server's operator: sign in with the admin key (<code>TOOLPACT_ADMIN_KEY</code>).</p>` +
    `<form method="post" action="${escapeHtml(base)}/session">` +
    (next === undefined ? "" : `<input type="hidden" name="next" value="${escapeHtml(next)}">`) +
    `<p><label for="admin-key">Admin key</label><br><input type="password" id="admin-key" name="adminKey" autocomplete="current-password" required></p>` +
    `<button type="submit" id="sign-in">Sign in</button></form>`;
  return renderPage({ base }, "Sign in", body);
}

/** What a message page says: a heading, an explanation, and a link onward. */
export interface Message {
  readonly heading: string;
  readonly message: string;
  readonly back?: { readonly href: string; readonly label: string };
}

/** A page with a heading and an explanation (errors, results of actions), and a link onward. */
export function renderMessage(frame: PageFrame, said: Message): string {
  const { heading, message, back } = said;
  const link = back === undefined ? "" : `<p><a id="back" href="${escapeHtml(back.href)}">${escapeHtml(back.label)}</a></p>`;
  return renderPage(frame, heading, `<h1>${escapeHtml(heading)}</h1><p class="status" id="message">${escapeHtml(message)}</p>${link}`);
}

/** What an action's confirmation step asks and posts. */
export interface ActionQuestion {
  readonly heading: string;
  /** What will happen, in plain words. */
  readonly consequence: string;
  /** Where the confirmed form posts. */
  readonly action: string;
  /** The action's own fields, posted again with `confirm=yes`. */
  readonly fields: Readonly<Record<string, string>>;
  readonly button: string;
  /** Where Cancel goes. */
  readonly cancel: string;
}

/** The second step of an action: asks again, and posts the same fields with `confirm=yes` and the CSRF token. */
export function renderActionQuestion(frame: PageFrame & { readonly csrfToken: string }, question: ActionQuestion): string {
  const hidden = Object.entries({ ...question.fields, confirm: "yes" })
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("");
  const body =
    `<h1>${escapeHtml(question.heading)}</h1><p class="error" id="consequence">${escapeHtml(question.consequence)}</p>` +
    `<div class="actions"><form method="post" action="${escapeHtml(question.action)}">${csrfField(frame.csrfToken)}${hidden}` +
    `<button type="submit" class="danger" id="confirm-action">${escapeHtml(question.button)}</button></form>` +
    `<a id="cancel" href="${escapeHtml(question.cancel)}">Cancel</a></div>`;
  return renderPage(frame, question.heading, body);
}
