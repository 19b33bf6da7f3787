/**
 * The console's views as HTML: the activity timeline with its filters and chart, one operation's story,
 * pending confirmations, plugins, policy and keys. What they show is what `runtime.admin.views` reads:
 * ids, names, times, outcomes and codes, never an input, an output or a preview's text.
 */
import { SETTLED_OPERATION_STATES, ToolpactError, isToolpactErrorCode } from "@toolpact/contract";
import type {
  ActivityEvent,
  ActivityOutcome,
  AdminActivityFilter,
  AdminActivityResult,
  AdminKeyView,
  AdminPluginView,
  AdminPolicyView,
  OperationStory,
  PendingConfirmationView,
} from "@toolpact/runtime";
import { escapeHtml } from "../visible-text.js";
import { renderChart } from "./console-chart.js";
import { consoleHref, csrfField, renderPage, type PageFrame } from "./console-layout.js";

/** A signed-in page's frame: the tenant is chosen, the CSRF token known. */
export type ViewFrame = PageFrame & { readonly tenantId: string; readonly csrfToken: string; readonly tenants: readonly string[] };

/** The outcomes the timeline's filter offers (`allow`, `confirm`, `deny`: a shadow policy's disagreements). */
export const OUTCOMES: readonly ActivityOutcome[] = ["previewed", ...SETTLED_OPERATION_STATES, "denied", "approved", "expired", "allow", "confirm", "deny"];

/** The timeline: filters (a GET form), the chart of calls and refusals, and the matching events, newest first. */
export function renderTimeline(frame: ViewFrame, filter: AdminActivityFilter, result: AdminActivityResult): string {
  const text = (name: keyof AdminActivityFilter & string, label: string) =>
    `<label for="f-${name}">${escapeHtml(label)}<input id="f-${name}" name="${name}" value="${escapeHtml(String(filter[name] ?? ""))}"></label>`;
  const time = (name: "since" | "until", label: string) => {
    const value = filter[name] === undefined ? "" : new Date(filter[name]).toISOString().slice(0, 16);
    return `<label for="f-${name}">${escapeHtml(label)} (UTC)<input type="datetime-local" id="f-${name}" name="${name}" value="${escapeHtml(value)}"></label>`;
  };
  const outcomes = [`<option value="">any</option>`, ...OUTCOMES.map((o) => `<option${o === filter.outcome ? " selected" : ""}>${o}</option>`)].join("");
  const form =
    `<form method="get" action="${escapeHtml(frame.base)}" class="filters" id="filters" aria-label="Filter the activity">` +
    tenantSelect(frame) +
    text("caller", "Caller") +
    text("provider", "Provider") +
    text("tool", "Tool") +
    text("actor", "Actor") +
    `<label for="f-outcome">Outcome<select id="f-outcome" name="outcome">${outcomes}</select></label>` +
    time("since", "From") +
    time("until", "To") +
    `<button type="submit" id="apply-filters">Filter</button></form>`;
  // A preview's or a decision's event names the confirmation; the call it let run names the operation too.
  const operations = new Map(
    result.events.flatMap((e) => (e.confirmationId !== undefined && e.operationId !== undefined ? [[e.confirmationId, e.operationId]] : [])),
  );
  const rows = result.events
    .map((event) => eventRow(frame, event, event.operationId ?? (event.confirmationId === undefined ? undefined : operations.get(event.confirmationId))))
    .join("");
  const table =
    result.events.length === 0
      ? `<p id="no-events">No activity matches these filters.</p>`
      : `<table id="timeline"><caption class="note">${result.events.length === 1 ? "1 event" : `${result.events.length} events`}, newest first</caption>` +
        `<thead><tr><th scope="col">Time (UTC)</th><th scope="col">What</th><th scope="col">Tool</th><th scope="col">Caller</th>` +
        `<th scope="col">Actor</th><th scope="col">Outcome</th><th scope="col">Why</th><th scope="col">Operation</th></tr></thead><tbody>${rows}</tbody></table>`;
  const truncated = result.truncated
    ? `<p class="note" id="truncated">Read ${result.scanned} events of the log and stopped: narrow the time range or the filters to see further back.</p>`
    : "";
  return renderPage({ ...frame, section: "" }, "Activity", `<h1>Activity</h1>${form}${renderChart(result.chart)}${truncated}${table}`);
}

/** One timeline row; `operationId` is the operation it belongs to (its own, or the one its confirmation let run). */
function eventRow(frame: ViewFrame, event: ActivityEvent, operationId: string | undefined): string {
  const refused = event.kind === "call" && event.outcome === "denied";
  const story =
    operationId === undefined
      ? ""
      : `<a href="${escapeHtml(consoleHref(frame, `/operations/${encodeURIComponent(operationId)}`))}">${escapeHtml(operationId.slice(0, 13))}&hellip;</a>`;
  return (
    `<tr${refused ? ' class="refused"' : ""} data-event="${escapeHtml(event.id)}">` +
    `<td>${escapeHtml(event.at.replace("T", " ").slice(0, 23))}</td>` +
    `<td>${escapeHtml(`${event.kind} ${event.phase}`)}${event.via === undefined ? "" : ` <span class="note">via ${escapeHtml(event.via)}</span>`}</td>` +
    `<td>${code(event.tool)}</td><td>${code(event.callerPluginId)}</td><td>${escapeHtml(event.actorUserId ?? "")}</td>` +
    `<td class="outcome">${escapeHtml(event.outcome)}</td><td class="why">${why(event)}</td><td>${story}</td></tr>`
  );
}

/** Why an event ended as it did: its error code and what the code means, the error class, the gate or hook. */
function why(event: ActivityEvent): string {
  const parts: string[] = [];
  if (event.errorCode !== undefined) {
    const meaning = isToolpactErrorCode(event.errorCode) ? new ToolpactError(event.errorCode, event.errorCode).whatToDo : undefined;
    parts.push(
      `<code class="error-code">${escapeHtml(event.errorCode)}</code>${meaning === undefined ? "" : ` <span class="note">${escapeHtml(meaning)}</span>`}`,
    );
  }
  if (event.errorClass !== undefined) parts.push(`class <code>${escapeHtml(event.errorClass)}</code>`);
  if (event.seam !== undefined) parts.push(`by <code>${escapeHtml(event.seam)}</code>`);
  return parts.join("<br>");
}

function code(value: string | undefined): string {
  return value === undefined ? "" : `<code>${escapeHtml(value)}</code>`;
}

/** The tenant picker: a select of the configured tenants (the one in use selected). */
function tenantSelect(frame: ViewFrame): string {
  const tenants = frame.tenants.includes(frame.tenantId) ? frame.tenants : [frame.tenantId, ...frame.tenants];
  const options = tenants.map((t) => `<option${t === frame.tenantId ? " selected" : ""}>${escapeHtml(t)}</option>`).join("");
  return `<label for="f-tenant">Tenant<select id="f-tenant" name="tenant">${options}</select></label>`;
}

/** A section's tenant picker on its own (a GET form back to the same section). */
function tenantForm(frame: ViewFrame, path: string): string {
  return (
    `<form method="get" action="${escapeHtml(frame.base + path)}" class="filters" aria-label="Choose the tenant">` +
    `${tenantSelect(frame)}<button type="submit" id="show-tenant">Show</button></form>`
  );
}

/** One operation: what the ledger keeps of it, and its events (the call's steps, its confirmation) oldest first. */
export function renderStory(frame: ViewFrame, story: OperationStory): string {
  const steps = story.events
    .map(
      (event) =>
        `<li data-event="${escapeHtml(event.id)}"><strong>${escapeHtml(`${event.kind} ${event.phase}`)}</strong>: ${escapeHtml(event.outcome)}` +
        ` <span class="note">${escapeHtml(event.at)}${event.durationMs === undefined ? "" : `, ${event.durationMs} ms`}` +
        `${event.via === undefined ? "" : `, via ${escapeHtml(event.via)}`}${event.actorUserId === undefined ? "" : `, by ${escapeHtml(event.actorUserId)}`}</span>` +
        (event.confirmationId === undefined ? "" : `<br>confirmation <code>${escapeHtml(event.confirmationId)}</code>`) +
        (event.errorCode === undefined && event.seam === undefined ? "" : `<br>${why(event)}`) +
        `</li>`,
    )
    .join("");
  const body =
    `<h1>Operation <code>${escapeHtml(story.operationId)}</code></h1><dl id="operation">` +
    `<dt>Tool</dt><dd>${code(story.tool)}</dd><dt>Provider</dt><dd>${code(story.providerPluginId)}</dd>` +
    `<dt>Caller</dt><dd>${code(story.callerPluginId)}</dd><dt>Actor</dt><dd>${escapeHtml(story.actorUserId)}</dd>` +
    `<dt>State</dt><dd id="state">${escapeHtml(story.state)}</dd>` +
    (story.errorCode === undefined ? "" : `<dt>Error</dt><dd>${code(story.errorCode)}</dd>`) +
    `<dt>Began</dt><dd>${escapeHtml(story.createdAt)}</dd>` +
    (story.settledAt === undefined ? "" : `<dt>Settled</dt><dd>${escapeHtml(story.settledAt)}</dd>`) +
    `<dt>Recovery runs</dt><dd>${story.recoveryAttempts}</dd></dl>` +
    `<h2>Story</h2>${steps === "" ? `<p>No events of it are left in the log.</p>` : `<ol class="story" id="story">${steps}</ol>`}` +
    `<p class="note">Inputs and results are never shown here.</p><p><a href="${escapeHtml(consoleHref(frame, ""))}">Back to activity</a></p>`;
  return renderPage({ ...frame, section: "" }, `Operation ${story.operationId}`, body);
}

/** Requests waiting for their person, soonest to expire first. */
export function renderPending(frame: ViewFrame, pending: readonly PendingConfirmationView[]): string {
  const rows = pending
    .map(
      (p) =>
        `<tr><td><code>${escapeHtml(p.requestId)}</code></td><td>${code(p.tool)}</td><td>${escapeHtml(p.effect)}</td>` +
        `<td>${code(p.callerPluginId)}</td><td>${escapeHtml(p.actorUserId)}</td><td>${escapeHtml(p.createdAt)}</td><td>${escapeHtml(p.expiresAt)}</td></tr>`,
    )
    .join("");
  const table =
    pending.length === 0
      ? `<p id="none-pending">No confirmation request is waiting.</p>`
      : `<table id="pending"><thead><tr><th scope="col">Request</th><th scope="col">Tool</th><th scope="col">Effect</th><th scope="col">Caller</th>` +
        `<th scope="col">For</th><th scope="col">Asked</th><th scope="col">Expires</th></tr></thead><tbody>${rows}</tbody></table>`;
  return renderPage(
    { ...frame, section: "/confirmations" },
    "Pending confirmations",
    `<h1>Pending confirmations</h1>${tenantForm(frame, "/confirmations")}${table}`,
  );
}

/** The plugins loaded into this host, each with its tools, and for the tenant whether installed and enabled; Disable for enabled ones. */
export function renderPlugins(frame: ViewFrame, plugins: readonly AdminPluginView[]): string {
  const rows = plugins
    .map((p) => {
      const tools = p.tools
        .map((t) => `<li><code>${escapeHtml(`${t.name}@${t.version}`)}</code> ${escapeHtml(t.effect)}${t.requiresConfirmation ? ", confirmed" : ""}</li>`)
        .join("");
      const state = !p.installed ? "not installed" : p.enabled ? "enabled" : "disabled";
      const disable =
        p.installed && p.enabled
          ? `<form method="post" action="${escapeHtml(frame.base)}/plugins/disable">${csrfField(frame.csrfToken)}` +
            `<input type="hidden" name="tenant" value="${escapeHtml(frame.tenantId)}"><input type="hidden" name="pluginId" value="${escapeHtml(p.pluginId)}">` +
            `<button type="submit" aria-label="Disable ${escapeHtml(p.pluginId)}">Disable</button></form>`
          : "";
      return (
        `<tr data-plugin="${escapeHtml(p.pluginId)}"><td>${code(p.pluginId)}${p.name === undefined ? "" : `<br>${escapeHtml(p.name)}`}</td>` +
        `<td>${escapeHtml(p.version)}</td><td class="state">${state}</td><td>${tools === "" ? "none (calls tools only)" : `<ul>${tools}</ul>`}</td><td>${disable}</td></tr>`
      );
    })
    .join("");
  const body =
    `<h1>Plugins</h1>${tenantForm(frame, "/plugins")}<table id="plugins"><thead><tr><th scope="col">Plugin</th><th scope="col">Version</th>` +
    `<th scope="col">For this tenant</th><th scope="col">Tools</th><th scope="col">Action</th></tr></thead><tbody>${rows}</tbody></table>`;
  return renderPage({ ...frame, section: "/plugins" }, "Plugins", body);
}

/** The tenant's policy, recovery policy and activations as set. */
export function renderPolicy(frame: ViewFrame, view: AdminPolicyView): string {
  const json = (value: unknown) => `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`;
  const activations = view.activations
    .map((a) => `<li><code>${escapeHtml(a.pluginId)}</code>: gates ${list(a.gates)}; hooks ${list(a.hooks)}; guards ${list(a.guards)}</li>`)
    .join("");
  const body =
    `<h1>Policy</h1>${tenantForm(frame, "/policy")}<p class="note">Configuration version ${view.configVersion}.</p>` +
    `<h2>Tenant policy</h2>${view.policy === undefined ? `<p id="no-policy">No policy is set: every call is denied.</p>` : `<div id="policy">${json(view.policy)}</div>`}` +
    `<h2>Recovery policy</h2>${view.recoveryPolicy === undefined ? "<p>None pinned.</p>" : json(view.recoveryPolicy)}` +
    `<h2>Activated gates, hooks and guards</h2>${activations === "" ? "<p>None.</p>" : `<ul>${activations}</ul>`}`;
  return renderPage({ ...frame, section: "/policy" }, "Policy", body);
}

function list(names: readonly string[]): string {
  return names.length === 0 ? "none" : names.map((n) => `<code>${escapeHtml(n)}</code>`).join(", ");
}

/** The tenant's plugin keys with their ages; Revoke for live ones. */
export function renderKeys(frame: ViewFrame, keys: readonly AdminKeyView[]): string {
  const rows = keys
    .map((k) => {
      const revoke =
        k.revokedAt === undefined
          ? `<form method="post" action="${escapeHtml(frame.base)}/keys/revoke">${csrfField(frame.csrfToken)}` +
            `<input type="hidden" name="tenant" value="${escapeHtml(frame.tenantId)}"><input type="hidden" name="keyId" value="${escapeHtml(k.keyId)}">` +
            `<button type="submit" aria-label="Revoke key ${escapeHtml(k.keyId)}">Revoke</button></form>`
          : "";
      return (
        `<tr data-key="${escapeHtml(k.keyId)}"><td><code>${escapeHtml(k.keyId)}</code></td><td>${code(k.pluginId)}</td><td>${escapeHtml(k.createdAt)}</td>` +
        `<td class="age">${k.ageDays} days</td><td class="state">${k.revokedAt === undefined ? "live" : `revoked ${escapeHtml(k.revokedAt)}`}</td><td>${revoke}</td></tr>`
      );
    })
    .join("");
  const table =
    keys.length === 0
      ? `<p id="no-keys">This tenant has no plugin keys.</p>`
      : `<table id="keys"><thead><tr><th scope="col">Key</th><th scope="col">Plugin</th><th scope="col">Issued</th><th scope="col">Age</th>` +
        `<th scope="col">State</th><th scope="col">Action</th></tr></thead><tbody>${rows}</tbody></table>`;
  return renderPage({ ...frame, section: "/keys" }, "Keys", `<h1>Plugin keys</h1>${tenantForm(frame, "/keys")}${table}`);
}
