/**
 * What the confirmation page answers with: its headers, a rendered page and its status, the refusal of a
 * method an address does not answer, and the form body its posts carry (read under a size bound).
 */
import type { IncomingHttpHeaders } from "node:http";
import { ToolpactError } from "@toolpact/contract";
import { renderMessagePage } from "./confirmation-page-html.js";

/**
 * Headers every confirmation-page response carries. The referrer policy is `same-origin`, not
 * `no-referrer`: under `no-referrer` browsers send `Origin: null` on the page's own form posts, which
 * the origin checks (`confirmationOrigin`, and browsers without Fetch Metadata) must refuse; under
 * `same-origin` other origins still get neither a Referer nor an Origin from the page.
 */
export const CONFIRMATION_PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
});

const MAX_FORM_BYTES = 16 * 1024;

export function headingOf(status: number): string {
  if (status === 401) return "Sign-in needed";
  if (status === 403) return "Not allowed";
  if (status === 404) return "Not found";
  if (status === 429) return "Too many requests";
  if (status < 500) return "This did not work";
  return "Something went wrong";
}

/** A rendered page and its status. */
export interface Page {
  readonly status: number;
  readonly html: string;
}

/** A page with the confirmation page's headers (for HEAD, the headers alone), setting `cookies`. */
export function sendPage(page: Page, head = false, cookies: readonly string[] = []): Response {
  return new Response(head ? null : page.html, { status: page.status, headers: pageHeaders({ "content-type": "text/html; charset=utf-8" }, cookies) });
}

/** The confirmation page's headers, with `extra` and one `Set-Cookie` per cookie. */
export function pageHeaders(extra: Record<string, string>, cookies: readonly string[]): Headers {
  const headers = new Headers({ ...CONFIRMATION_PAGE_HEADERS, ...extra });
  for (const cookie of cookies) headers.append("set-cookie", cookie);
  return headers;
}

export function methodNotAllowed(allow: string): Response {
  const headers = { ...CONFIRMATION_PAGE_HEADERS, allow, "content-type": "text/html; charset=utf-8" };
  return new Response(renderMessagePage("Method not allowed", `This address answers ${allow} only.`), { status: 405, headers });
}

/** An `application/x-www-form-urlencoded` body of at most 16 KiB. */
export async function readForm(request: Request, headers: IncomingHttpHeaders): Promise<URLSearchParams> {
  const type = headers["content-type"] ?? "";
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
    throw new ToolpactError("INPUT_INVALID", "send the form as application/x-www-form-urlencoded, as the page's buttons do", {
      issues: [{ path: "", message: "unsupported content type" }],
    });
  }
  const declared = Number(headers["content-length"] ?? 0);
  if (declared > MAX_FORM_BYTES) throw formTooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body ?? []) {
    size += chunk.byteLength;
    if (size > MAX_FORM_BYTES) throw formTooLarge();
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function formTooLarge(): ToolpactError {
  return new ToolpactError("INPUT_INVALID", `the form is larger than ${MAX_FORM_BYTES} bytes: send only the page's fields`, {
    issues: [{ path: "", message: "form too large" }],
  });
}
