import { describe, expect, it } from "vitest";
import {
  escapeHtml,
  renderConfirmationPage,
  renderContinuePage,
  renderMessagePage,
  renderSignInStep,
  type ConfirmationPageView,
} from "./confirmation-page-html.js";

const hostile = `<script>alert("x")</script>' onmouseover="steal()`;

function view(overrides: Partial<ConfirmationPageView> = {}): ConfirmationPageView {
  return {
    requestId: "0193a0c2-aaaa-7bbb-8ccc-000000000001",
    tool: "com.example.notes:create-note@1",
    title: "Create note",
    description: "Creates a note.",
    effect: "write",
    summary: 'Create note "Q3 plan"',
    details: { title: "Q3 plan", nested: { a: [1, 2] } },
    callerPluginId: "com.example.assistant",
    status: "pending",
    expiresAt: "2026-11-30T21:30:00.000Z",
    createdAt: "2026-11-30T21:25:00.000Z",
    ...overrides,
  };
}

const viewer = { tenantId: "t1", userId: "user-1" };

describe("the confirmation page's HTML", () => {
  it("escapes every character that could open markup or leave an attribute", () => {
    expect(escapeHtml(`&<>"'`)).toBe("&amp;&lt;&gt;&quot;&#39;");
  });

  it("shows tool, effect, summary, pretty details, who asks and expiry, with both buttons posting the CSRF token", () => {
    const html = renderConfirmationPage(view(), viewer, "csrf-token-value");
    expect(html).toContain("<h1>Create note</h1>");
    expect(html).toContain("com.example.notes:create-note@1");
    expect(html).toContain('class="effect-write">write<');
    expect(html).toContain("Create note &quot;Q3 plan&quot;");
    expect(html).toContain(escapeHtml(JSON.stringify(view().details, null, 2)));
    expect(html).toContain("com.example.assistant");
    expect(html).toContain("2026-11-30T21:30:00.000Z");
    expect(html).toContain('<form method="post" action="0193a0c2-aaaa-7bbb-8ccc-000000000001/approve">');
    expect(html).toContain('<form method="post" action="0193a0c2-aaaa-7bbb-8ccc-000000000001/deny">');
    expect(html.match(/<input type="hidden" name="csrf" value="csrf-token-value">/g)).toHaveLength(2);
    expect(html).not.toMatch(/<script/i);
  });

  it("renders hostile provider, caller and title text as text", () => {
    const html = renderConfirmationPage(
      view({ title: hostile, summary: hostile, description: hostile, details: { x: hostile }, callerPluginId: hostile, tool: hostile }),
      { tenantId: hostile, userId: hostile },
      `"><script>`,
    );
    expect(html).not.toContain("<script>");
    expect(html).not.toContain(`' onmouseover="steal()`);
    expect(html).not.toContain(`value=""><script>`);
    expect(html).toContain("&lt;script&gt;");
  });

  it("shows a decided or expired request's status without buttons", () => {
    for (const status of ["approved", "denied", "expired", "cancelled"] as const) {
      const html = renderConfirmationPage(view({ status }), viewer, "csrf");
      expect(html).not.toContain("<form");
      expect(html).toContain(`data-status="${status}"`);
    }
  });

  it("shows everything the approval binds, whole: no cut, the exact input in canonical member order after the details", () => {
    const padding = "p".repeat(150_000);
    const input = { subject: "Invoice", padding, to: "attacker@evil.example", "10": "ten", "9": "nine" };
    const html = renderConfirmationPage(view({ details: input, input }), viewer, "csrf");
    const exact = html.slice(html.indexOf('<pre id="input">'));
    expect(exact).toContain(padding);
    expect(exact).toContain("attacker@evil.example");
    // RFC 8785 order ("10" < "9" < "padding" < "subject" < "to"), whatever order the caller chose.
    const order = ['"10"', '"9"', '"padding"', '"subject"', '"to"'].map((key) => exact.indexOf(key));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(html.indexOf("attacker@evil.example", html.indexOf('<pre id="input">'))).toBeLessThan(html.indexOf('id="approve"'));
    expect(html).not.toContain("more characters not shown");
    expect(html).not.toMatch(/max-height/);
  });

  it("makes control, bidirectional and zero-width characters visible as badges", () => {
    const sneaky = "Report\rBcc: attacker@evil.example\tinvoice\u202Efdp.exe\u200B\u2066x\u0000";
    const html = renderConfirmationPage(view({ summary: sneaky, details: { file: "invoice\u202Efdp.exe" }, input: { file: "a\u200Bb" } }), viewer, "csrf");
    const summary = /<p class="summary" id="summary">(.*?)<\/p>/s.exec(html)![1]!;
    for (const badge of ["\\r", "\\t", "U+202E", "U+200B", "U+2066", "U+0000"]) expect(summary).toContain(`>${badge}</span>`);
    expect(summary).not.toMatch(/[\r\t\u202E\u200B\u2066\u0000]/u);
    expect(html).toContain('title="U+202E RIGHT-TO-LEFT OVERRIDE"');
    const rest = html.slice(html.indexOf('<pre id="details">'));
    expect(rest).not.toMatch(/[\u202E\u200B]/u);
    expect(rest).toContain(">U+202E</span>fdp.exe");
    expect(html).toContain('id="hidden-note"');
    expect(renderConfirmationPage(view(), viewer, "csrf")).not.toContain('id="hidden-note"');
  });

  it("message pages escape their text too", () => {
    expect(renderMessagePage("Not allowed", hostile)).not.toContain("<script>");
  });

  it("the page after sign-in refreshes to its target and links to it, escaped", () => {
    const html = renderContinuePage("abc");
    expect(html).toContain('<meta http-equiv="refresh" content="0;url=abc">');
    expect(html).toContain('<a id="continue" href="abc">');
    expect(renderContinuePage(`x"><script>`)).not.toContain("<script>");
  });

  it("answers a decision with what was decided on: summary, details and exact input stay, under what you approved or denied", () => {
    for (const [status, heading] of [
      ["approved", "What you approved"],
      ["denied", "What you denied"],
    ] as const) {
      const html = renderConfirmationPage(view({ status, input: { title: "Q3 plan" } }), viewer, undefined);
      expect(html).toContain(`<h2>${heading}</h2>`);
      expect(html).toContain('<p class="summary" id="summary">Create note &quot;Q3 plan&quot;</p>');
      expect(html).toMatch(/<pre id="input">\{\n {2}&quot;title&quot;: &quot;Q3 plan&quot;\n\}<\/pre>/);
      expect(html).toContain(`data-status="${status}"`);
      expect(html).not.toContain("<form");
    }
    // Read back later, a decided request's preview is no longer kept: the page says so instead of an empty heading.
    const later = renderConfirmationPage(view({ status: "approved", summary: "", details: null }), viewer, undefined);
    expect(later).toContain('id="not-kept"');
    expect(later).not.toContain('id="summary"');
  });

  it("offers no buttons for a pending request when it may not decide here, and says why", () => {
    const html = renderConfirmationPage(view(), viewer, undefined);
    expect(html).not.toContain("<form");
    expect(html).toContain('id="decide-elsewhere"');
    expect(html).toContain("confirmationOrigin");
  });

  it("renders the sign-in step: a same-origin form posting the token (and next), escaped", () => {
    const html = renderSignInStep({ token: `tok"en<`, next: "/confirm/abc" });
    expect(html).toContain('<form method="post" action="session">');
    expect(html).toContain('<input type="hidden" name="token" value="tok&quot;en&lt;">');
    expect(html).toContain('<input type="hidden" name="next" value="/confirm/abc">');
    expect(html).toContain('<button type="submit" id="continue">Continue</button>');
    expect(renderSignInStep({ token: "t" })).not.toContain('name="next"');
  });
});
