/**
 * The confirmation page's grant parts, plain HTML like the rest of the page (no script): the offer to
 * approve the next calls like this one within the policy's bounds, limited to values of this request's
 * own input, and the "your grants" list with a Revoke button each. Every value passes through `escapeHtml`.
 */
import type { GrantLimits, GrantView } from "@toolpact/runtime";
import { escapeHtml } from "./visible-text.js";

/** The input's top-level text properties a grant may be limited to, as `[name, value]`. */
export function limitableProperties(input: unknown): [string, string][] {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return [];
  return Object.entries(input as Record<string, unknown>)
    .filter((entry): entry is [string, string] => typeof entry[1] === "string" && entry[1].length <= 256 && /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/.test(entry[0]))
    .slice(0, 16);
}

/**
 * "Approve this call and the next N calls / until ...": a form posting to `<id>/grant` with the session's CSRF
 * token, the number of calls and minutes bounded by the policy, and a checkbox per text property of the input.
 */
export function renderGrantOffer(
  offer: { readonly id: string; readonly limits: GrantLimits; readonly input: unknown; readonly callerPluginId: string },
  csrfToken: string,
): string {
  const { limits } = offer;
  const maxMinutes = Math.max(1, Math.floor((limits.maxSeconds ?? 30 * 24 * 3600) / 60));
  const defaultMinutes = Math.min(maxMinutes, 24 * 60);
  const calls =
    limits.maxCalls === undefined
      ? ""
      : `<p><label>Calls: the next <input type="number" name="maxCalls" id="grant-calls" min="1" max="${limits.maxCalls}" value="${Math.min(10, limits.maxCalls)}" required> calls (at most ${limits.maxCalls})</label></p>`;
  const properties = limitableProperties(offer.input)
    .map(
      ([name, value]) =>
        `<li><label><input type="checkbox" name="limitTo" value="${escapeHtml(name)}" id="limit-${escapeHtml(name)}"> only ${escapeHtml(name)} <code>${escapeHtml(value)}</code></label></li>`,
    )
    .join("");
  return (
    `<section id="grant-offer"><h2>Or approve the next calls like this one</h2>` +
    `<p class="note">A grant lets <code>${escapeHtml(offer.callerPluginId)}</code> make the next calls of this tool, with this version, ` +
    "for you, without asking again, within the limits below. You can revoke it at any time under Your grants.</p>" +
    `<form method="post" action="${escapeHtml(offer.id)}/grant">` +
    `<input type="hidden" name="csrf" value="${escapeHtml(csrfToken)}">` +
    calls +
    `<p><label>Until: <input type="number" name="minutes" id="grant-minutes" min="1" max="${maxMinutes}" value="${defaultMinutes}" required> minutes from now (at most ${maxMinutes})</label></p>` +
    (properties === "" ? "" : `<p>Limit it to this request's values:</p><ul id="grant-limits">${properties}</ul>`) +
    `<button type="submit" id="approve-grant">Approve this call and grant the next ones</button></form></section>`
  );
}

/** The signed-in user's grants, newest first, a Revoke button on each live one (a form posting `grants/<id>/revoke`). */
export function renderGrantList(grants: readonly GrantView[], csrfToken: string | undefined, prefix: string): string {
  if (grants.length === 0) return `<p id="no-grants">You have no grants.</p>`;
  const rows = grants
    .map((grant) => {
      const limits = grant.limits.length === 0 ? "every input" : grant.limits.join(", ");
      const calls = grant.maxCalls === undefined ? "no call limit" : `${grant.uses} of ${grant.maxCalls} calls used`;
      const state = grant.live ? "live" : grant.revokedAt !== undefined ? "revoked" : "ended";
      const revoke =
        grant.live && csrfToken !== undefined
          ? `<form method="post" action="${escapeHtml(prefix)}grants/${encodeURIComponent(grant.grantId)}/revoke">` +
            `<input type="hidden" name="csrf" value="${escapeHtml(csrfToken)}"><button type="submit" class="revoke">Revoke</button></form>`
          : "";
      return (
        `<li class="grant" data-grant="${escapeHtml(grant.grantId)}" data-state="${state}"><code>${escapeHtml(grant.tool)}</code> v${grant.version} ` +
        `for <code>${escapeHtml(grant.callerPluginId)}</code>: ${escapeHtml(limits)}; ${escapeHtml(calls)}; ` +
        `until ${escapeHtml(new Date(grant.expiresAt).toISOString())} (${state}) ${revoke}</li>`
      );
    })
    .join("");
  return `<ul id="grants">${rows}</ul>`;
}
