/**
 * Where the confirmation page may be served and approved from. A page that shares its origin with an
 * app's own pages cannot tell the person's click from the app's scripts (they may read it, CSRF token
 * and all, and post its form), so it decides only on an origin of its own.
 */
import type { IncomingHttpHeaders } from "node:http";
import { ToolpactError } from "@toolpact/contract";

/** Where the page lives, as the routes were told. */
export type ConfirmationOrigin =
  /** A server of its own (`toolpact serve`, `dev`): the page's origin is toolpact's. */
  | { readonly kind: "own-server" }
  /** A mount without `confirmationOrigin`: the page shares the app's origin, and approvals are refused. */
  | { readonly kind: "shared" }
  /** `confirmationOrigin` given: the page is served, and approvals accepted, at that origin only. */
  | { readonly kind: "dedicated"; readonly origin: URL };

/** The doc section that explains the rule, for messages. */
const SAME_ORIGIN_DOCS = 'see "Same-origin mounts" in docs/embedding.md';

/**
 * Parses the `confirmationOrigin` option: an http(s) origin with nothing after it.
 * @throws TypeError naming what is wrong.
 */
export function parseConfirmationOrigin(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`confirmationOrigin must be an origin such as "https://confirm.example.com"; got "${value}"`);
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.origin !== value.replace(/\/$/, "")) {
    throw new TypeError(`confirmationOrigin must be an http(s) origin, scheme and host (and port) only, such as "https://confirm.example.com"; got "${value}"`);
  }
  return url;
}

/** Where the routes live decides the page's origin rule: a mount shares the app's origin unless told otherwise. */
export function confirmationOriginOf(option: string | undefined, mounted: boolean): ConfirmationOrigin {
  if (option !== undefined) return { kind: "dedicated", origin: parseConfirmationOrigin(option) };
  return mounted ? { kind: "shared" } : { kind: "own-server" };
}

/** True when a request reached the page where it may be served (any host, unless `confirmationOrigin` names one). */
export function isServedAtConfirmationOrigin(rule: ConfirmationOrigin, headers: IncomingHttpHeaders): boolean {
  return rule.kind !== "dedicated" || headers.host === rule.origin.host;
}

/** The page a request that reached another host should open instead (`confirmationOrigin` only). */
export function notServedHereMessage(rule: ConfirmationOrigin): string {
  const where = rule.kind === "dedicated" ? rule.origin.origin : "its own origin";
  return `This confirmation page is served only at ${where}, an origin of its own, so that no other page's scripts can read it or approve in your name. Open the confirmation link your app gave you.`;
}

/**
 * Refuses a decision (approve, deny) or a sign-in post the page cannot attribute to the person: on an
 * origin shared with the app (a mount without `confirmationOrigin`) always; with `confirmationOrigin`,
 * one that reached another host or whose `Sec-Fetch-Site` is not `same-origin` or whose `Origin` is
 * not that origin.
 * @throws ToolpactError PERMISSION_DENIED saying which rule failed.
 */
export function requireConfirmationOrigin(rule: ConfirmationOrigin, headers: IncomingHttpHeaders): void {
  if (rule.kind === "own-server") return;
  if (rule.kind === "shared") {
    throw new ToolpactError(
      "PERMISSION_DENIED",
      "this confirmation page is mounted on the app's own origin, where the app's scripts could read it and approve in your name, " +
        `so it accepts no approvals: the operator must serve it from an origin of its own with the handler's confirmationOrigin option (${SAME_ORIGIN_DOCS})`,
    );
  }
  const site = headers["sec-fetch-site"];
  const origin = headers.origin;
  if (headers.host !== rule.origin.host || (site !== undefined && site !== "same-origin") || (origin !== undefined && origin !== rule.origin.origin)) {
    throw new ToolpactError(
      "PERMISSION_DENIED",
      `approve and deny are accepted only from the confirmation page at ${rule.origin.origin} itself, not from another origin's page or script (${SAME_ORIGIN_DOCS})`,
    );
  }
}

/** Whether the page may offer Approve and Deny at all. */
export function mayDecideHere(rule: ConfirmationOrigin): boolean {
  return rule.kind !== "shared";
}
