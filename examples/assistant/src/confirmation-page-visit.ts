/**
 * A person's visit to toolpact's confirmation page, made with plain HTTP requests where a browser
 * would follow links and press buttons: sign in with a presence token, read the page, press a button.
 */

/** What the person saw and did. */
export interface ConfirmationPageVisit {
  /** The provider's preview summary, as the page shows it. */
  readonly summary: string;
  /** The plugin that asked, as the page names it. */
  readonly askedBy: string;
  /** The request's status after the decision, as the page shows it (`approved`, `denied`). */
  readonly status: string;
  /** The name of the session cookie `/confirm/session` set. */
  readonly cookieName: string;
}

/** Options of `decideOnConfirmationPage`. */
export interface ConfirmationPageVisitOptions {
  /** The `confirmUrl` of a platform-mode preview. */
  readonly confirmUrl: string;
  /** A presence token from the platform's identity service, for the person the request is for. */
  readonly presenceToken: string;
  readonly decision: "approve" | "deny";
  /** Told each thing the person does, in words. */
  readonly onStep?: (text: string) => void;
}

/**
 * Signs in through `/confirm/session?token=...&next=...` (which sets the HttpOnly session cookie),
 * loads the request's page, reads the CSRF token from the decision form, and posts the decision
 * with the cookie, as the page's button does. Throws when any of this does not go as a browser expects.
 */
export async function decideOnConfirmationPage(options: ConfirmationPageVisitOptions): Promise<ConfirmationPageVisit> {
  const onStep = options.onStep ?? (() => {});
  const page = new URL(options.confirmUrl);
  const signIn = new URL("session", page);
  signIn.search = new URLSearchParams({ token: options.presenceToken, next: page.pathname }).toString();

  // The sign-in answers with the session cookie and moves the browser on to the request (a redirect,
  // or a page that refreshes to it); either way the browser's next stop is the request's page.
  const session = await fetch(signIn, { redirect: "manual" });
  const setCookie = session.headers.getSetCookie()[0];
  const answer = await session.text();
  if ((session.status !== 200 && session.status !== 303) || setCookie === undefined) {
    throw new Error(`signing in at ${signIn.pathname} answered HTTP ${session.status} without a session cookie: ${messageOf(answer)}`);
  }
  const cookie = setCookie.split(";")[0]!;
  const cookieName = cookie.slice(0, cookie.indexOf("="));
  const attributes = setCookie.toLowerCase();
  if (!attributes.includes("httponly") || !attributes.includes("samesite=strict")) {
    throw new Error(`the session cookie is not HttpOnly and SameSite=Strict: ${setCookie.replace(/=[^;]*/, "=…")}`);
  }
  onStep(`signed in at ${signIn.pathname} with a presence token: the page set the session cookie "${cookieName}" (HttpOnly, SameSite=Strict)`);

  const shown = await fetch(page, { headers: { cookie } });
  const html = await shown.text();
  if (shown.status !== 200) throw new Error(`the confirmation page answered HTTP ${shown.status}: ${messageOf(html)}`);
  const summary = textOfElement(html, "summary");
  const askedBy = textOfElement(html, "caller");
  const form = formOf(html, options.decision);
  onStep(`opened ${page.pathname}: it shows ${summary}, asked by ${askedBy}`);
  onStep(`read the CSRF token from the ${options.decision} form and pressed ${options.decision === "approve" ? "Approve" : "Deny"}`);

  const decided = await fetch(new URL(form.action, page), {
    method: "POST",
    redirect: "manual",
    headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ csrf: form.csrf }).toString(),
  });
  if (decided.status !== 200) {
    throw new Error(`pressing ${options.decision} answered HTTP ${decided.status}: ${messageOf(await decided.text())}`);
  }
  const after = await (await fetch(page, { headers: { cookie } })).text();
  const status = /id="status" data-status="([a-z]+)"/.exec(after)?.[1] ?? "unknown";
  return { summary, askedBy, status, cookieName };
}

/** The action and CSRF token of the page's approve or deny form. */
function formOf(html: string, decision: "approve" | "deny"): { action: string; csrf: string } {
  for (const match of html.matchAll(/<form method="post" action="([^"]+)">(.*?)<\/form>/g)) {
    const action = decodeHtml(match[1]!);
    if (!action.endsWith(`/${decision}`)) continue;
    const csrf = /<input type="hidden" name="csrf" value="([^"]*)">/.exec(match[2]!)?.[1];
    if (csrf === undefined) throw new Error(`the ${decision} form carries no CSRF token`);
    return { action, csrf: decodeHtml(csrf) };
  }
  throw new Error(`the confirmation page has no ${decision} form (is the request still pending?): ${messageOf(html)}`);
}

function textOfElement(html: string, id: string): string {
  const match = new RegExp(`<[a-z]+[^>]* id="${id}">(.*?)</[a-z]+>`).exec(html);
  return match === null ? "" : decodeHtml(match[1]!.replace(/<[^>]+>/g, "")).trim();
}

function messageOf(html: string): string {
  return textOfElement(html, "message") || html.slice(0, 200);
}

const ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", middot: "·" };

function decodeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|middot);/g, (_, name: string) => ENTITIES[name] ?? "");
}
