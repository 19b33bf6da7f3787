/**
 * docs/plugin-sdk.md held to a real server: the table of what an `execute` answer makes of a call is
 * parsed from the page, and each row is made to happen with a plain handler object (no generated code)
 * and checked over HTTP (the code the caller gets, and the operation's state). The answers of
 * `authorize` and `preview` the page lists are checked the same way.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ProviderBusy, ProviderOutcomeUnknown, ProviderRefusal } from "@toolpact/contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ASSISTANT_ID, manifest } from "./support/plugins.js";
import { makeSecrets, startStack, type Stack } from "./support/stack.js";
import { mintActorToken } from "./support/tokens.js";
import { mutate, ok, query, type WireResponse } from "./support/wire.js";

const PLUGIN_SDK = fileURLToPath(new URL("../../docs/plugin-sdk.md", import.meta.url));
const EXECUTE_TABLE = "| `execute`... | the caller gets | the operation |";
const PROVIDER = "com.test.plain";
const TENANT = "t-plain";
const object = { type: "object" };
const okOutput = { type: "object", properties: { ok: { const: true } }, required: ["ok"] };

/** A tool of the plain provider: its declaration and its handler, an object of plain functions. */
const TOOLS: Record<string, { effect: "read" | "write"; outputSchema?: unknown; timeoutMs?: number; handler: Record<string, unknown> }> = {
  fits: { effect: "read", outputSchema: okOutput, handler: { execute: () => ({ ok: true }) } },
  misfits: { effect: "read", outputSchema: okOutput, handler: { execute: () => ({ ok: "yes" }) } },
  "not-json": { effect: "read", handler: { execute: () => ({ count: 1n }) } },
  throws: {
    effect: "read",
    handler: {
      execute: () => {
        throw new RangeError("secret detail");
      },
    },
  },
  rejects: { effect: "read", handler: { execute: async () => Promise.reject(new TypeError("secret detail")) } },
  "slow-read": { effect: "read", timeoutMs: 50, handler: { execute: () => sleep(2_000).then(() => ({})) } },
  "slow-write": { effect: "write", timeoutMs: 50, handler: { execute: () => sleep(2_000).then(() => ({})) } },
  "authorize-true": { effect: "read", handler: { authorize: () => true, execute: () => ({}) } },
  "authorize-allowed": { effect: "read", handler: { authorize: async () => ({ allowed: true }), execute: () => ({}) } },
  "authorize-false": { effect: "read", handler: { authorize: () => false, execute: () => ({}) } },
  "authorize-reason": { effect: "read", handler: { authorize: () => ({ allowed: false, reason: "secret reason" }), execute: () => ({}) } },
  "authorize-nothing": { effect: "read", handler: { authorize: () => undefined, execute: () => ({}) } },
  "authorize-throws": {
    effect: "read",
    handler: {
      authorize: () => {
        throw new Error("secret");
      },
      execute: () => ({}),
    },
  },
  "preview-long": { effect: "read", handler: { preview: () => ({ summary: "x".repeat(2001) }), execute: () => ({}) } },
  "preview-none": { effect: "write", handler: { execute: () => ({}) } },
  "lost-write": { effect: "write", handler: { execute: () => Promise.reject(new ProviderOutcomeUnknown("connection closed")) } },
  "lost-read": { effect: "read", handler: { execute: () => Promise.reject(new ProviderOutcomeUnknown("connection closed")) } },
  refuses: { effect: "read", handler: { execute: () => Promise.reject(new ProviderRefusal("no such record\u202E")) } },
  busy: { effect: "read", handler: { execute: () => Promise.reject(new ProviderBusy("16 calls in flight", 1000)) } },
  "busy-authorize": { effect: "read", handler: { authorize: () => Promise.reject(new ProviderBusy("16 calls in flight", 1000)), execute: () => ({}) } },
};

let dir: string;
let stack: Stack;
let headers: Record<string, string>;
const secrets = makeSecrets();

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-plain-"));
  stack = await startStack({
    dbFile: path.join(dir, "toolpact.db"),
    secrets,
    setup: (runtime) => {
      runtime.registerPlugin(
        manifest({
          id: PROVIDER,
          version: "1.0.0",
          permissions: ["tools:provide"],
          tools: Object.entries(TOOLS).map(([name, tool]) => ({
            name,
            effect: tool.effect,
            inputSchema: object,
            ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
            ...(tool.timeoutMs === undefined ? {} : { timeoutMs: tool.timeoutMs }),
          })),
        }),
      );
      const sdk = runtime.sdkFor(PROVIDER);
      for (const [name, tool] of Object.entries(TOOLS)) sdk.tools.provide(name, tool.handler as never);
    },
  });
  for (const pluginId of [PROVIDER, ASSISTANT_ID]) await stack.admin("installPlugin", { tenantId: TENANT, pluginId });
  // Everything allowed, writes included, with no confirmation asked beyond what a tool declares.
  await stack.admin("setPolicy", {
    tenantId: TENANT,
    policy: { rules: [{ tools: `${PROVIDER}:*`, decision: "allow" }], trustedConfirmationUis: [ASSISTANT_ID] },
  });
  const { key } = await stack.admin<{ key: string }>("issuePluginKey", { tenantId: TENANT, pluginId: ASSISTANT_ID });
  headers = { authorization: `Bearer ${key}`, "x-toolpact-actor": await mintActorToken(secrets.actorSecret, { tid: TENANT }) };
});

afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const ref = (tool: string) => ({ providerId: PROVIDER, tool });

/** Executes `tool` (previewing first for a token when it needs confirmation). */
async function execute(tool: string): Promise<WireResponse> {
  const preview = ok<{ confirmation: { required: boolean; token?: string } }>(await mutate(stack.url, "tools.preview", { ref: ref(tool), input: {} }, headers));
  const token = preview.confirmation.required ? { confirmationToken: preview.confirmation.token } : {};
  return mutate(stack.url, "tools.execute", { ref: ref(tool), input: {}, ...token }, headers);
}

/** What a call showed: the toolpact code (or `ok`), and the state of its operation. */
async function outcomeOf(tool: string): Promise<{ code: string; state: string }> {
  const response = await execute(tool);
  const error = response.body.error?.data as { toolpactCode?: string; toolpactData?: { operationId?: string } } | undefined;
  const operationId = error === undefined ? (response.body.result!.data as { operationId: string }).operationId : error.toolpactData?.operationId;
  if (operationId === undefined) throw new Error(`${tool}: no operationId in ${JSON.stringify(response.body)}`);
  const operation = ok<{ state: string }>(await query(stack.url, "tools.operation", { operationId }, headers));
  return { code: error?.toolpactCode ?? "ok", state: operation.state };
}

/** The tools that make each row of the page's table happen, by the row's first cell. */
const ROWS: Record<string, readonly string[]> = {
  "answers a JSON value that passes the tool's `outputSchema` (if any)": ["fits"],
  "answers a value that fails `outputSchema`, is not JSON (a function, a cycle, a `BigInt`), or names a `targetId` over 256 characters or with a control character":
    ["misfits", "not-json"],
  "throws or rejects": ["throws", "rejects"],
  "does not finish within `timeoutMs`, for a `read` tool": ["slow-read"],
  "does not finish within `timeoutMs`, for a `write` or `external` tool": ["slow-write"],
  "throws `ProviderOutcomeUnknown` (its answer was lost after the effect may have run), for a `write` or `external` tool": ["lost-write"],
  "throws `ProviderOutcomeUnknown`, for a `read` tool": ["lost-read"],
  "throws `ProviderRefusal` (it says why the call failed, for the caller)": ["refuses"],
  "throws `ProviderBusy` (at capacity, nothing sent)": ["busy"],
};

function executeTable(): { when: string; code: string; state: string }[] {
  const text = readFileSync(PLUGIN_SDK, "utf8");
  const start = text.indexOf(`${EXECUTE_TABLE}\n`);
  if (start < 0) throw new Error(`docs/plugin-sdk.md has no table starting "${EXECUTE_TABLE}"`);
  const rows: { when: string; code: string; state: string }[] = [];
  for (const line of text.slice(start).split("\n").slice(2)) {
    if (!line.startsWith("|")) break;
    const [when = "", gets = "", state = ""] = line
      .slice(1, -1)
      .split(" | ")
      .map((cell) => cell.trim());
    const code = gets.startsWith("`{ operationId, result }`") ? "ok" : (/^`([A-Z_]+)`/.exec(gets)?.[1] ?? `unreadable: ${gets}`);
    rows.push({ when, code, state: state.replace(/`/g, "") });
  }
  return rows;
}

describe("docs/plugin-sdk.md: what an execute answer makes of a call", () => {
  const rows = executeTable();

  it("has a row for each case this test makes happen", () => {
    expect(rows.map((row) => row.when).sort()).toEqual(Object.keys(ROWS).sort());
  });

  for (const row of rows) {
    it(`${row.when}: ${row.code}, ${row.state}`, async () => {
      for (const tool of ROWS[row.when] ?? []) expect(await outcomeOf(tool), tool).toEqual({ code: row.code, state: row.state });
    });
  }

  it("a timed-out read names TimeoutError; a throw names the error's class, never its message", async () => {
    const slow = await execute("slow-read");
    expect(slow.body.error?.data.toolpactData).toMatchObject({ errorClass: "TimeoutError" });
    const thrown = await execute("throws");
    expect(thrown.body.error?.data.toolpactData).toMatchObject({ errorClass: "RangeError" });
    expect(JSON.stringify(thrown.body)).not.toContain("secret detail");
  });

  it("a ProviderRefusal's text reaches the caller made visible; ProviderBusy from authorize is RATE_LIMITED before any operation", async () => {
    const refused = await execute("refuses");
    expect(refused.body.error?.message).toMatch(/and says: no such record\\u\{202e\}$/);
    const busy = await mutate(stack.url, "tools.execute", { ref: ref("busy-authorize"), input: {} }, headers);
    expect(busy.body.error?.data).toMatchObject({ toolpactCode: "RATE_LIMITED", toolpactData: { retryAfterMs: 1000 } });
  });
});

describe("docs/plugin-sdk.md: authorize and preview answers", () => {
  const codeOf = async (tool: string) => {
    const response = await mutate(stack.url, "tools.preview", { ref: ref(tool), input: {} }, headers);
    return { code: response.body.error?.data.toolpactCode ?? "ok", text: JSON.stringify(response.body) };
  };

  it("authorize: true or { allowed: true } allows; anything else refuses without forwarding a reason; a throw is PROVIDER_FAILED", async () => {
    expect((await codeOf("authorize-true")).code).toBe("ok");
    expect((await codeOf("authorize-allowed")).code).toBe("ok");
    for (const tool of ["authorize-false", "authorize-reason", "authorize-nothing"]) {
      const refused = await codeOf(tool);
      expect(refused.code, tool).toBe("PERMISSION_DENIED");
      expect(refused.text).toContain("refused this call for this user");
      expect(refused.text).not.toContain("secret reason");
    }
    expect((await codeOf("authorize-throws")).code).toBe("PROVIDER_FAILED");
  });

  it("preview: a summary over 2000 characters is PROVIDER_FAILED; without a preview the input is shown when confirmation is needed", async () => {
    expect((await codeOf("preview-long")).code).toBe("PROVIDER_FAILED");
    const shown = ok<{ summary: string; details: unknown; confirmation: { required: boolean } }>(
      await mutate(stack.url, "tools.preview", { ref: ref("preview-none"), input: { say: "hi" } }, headers),
    );
    expect(shown).toMatchObject({ summary: `preview-none (${PROVIDER}:preview-none@1)`, details: { say: "hi" }, confirmation: { required: true } });
  });
});

describe("docs/security.md: which confirmation mode a call gets", () => {
  const trusted = { trustedConfirmationUis: [ASSISTANT_ID] };
  const allow = (extra: Record<string, unknown> = {}) => ({ tools: `${PROVIDER}:*`, decision: "allow", ...extra });
  const modeOf = async (policy: unknown, tool = "preview-none") => {
    await stack.admin("setPolicy", { tenantId: TENANT, policy });
    const preview = ok<{ confirmation: { required: boolean; mode?: string; token?: string } }>(
      await mutate(stack.url, "tools.preview", { ref: ref(tool), input: {} }, headers),
    );
    return preview.confirmation;
  };
  const restore = () => stack.admin("setPolicy", { tenantId: TENANT, policy: { rules: [allow()], ...trusted } });

  it("token mode only for a listed caller that no matching rule sends to the platform", async () => {
    try {
      expect((await modeOf({ rules: [allow()], ...trusted })).mode).toBe("token");
      expect((await modeOf({ rules: [allow(), allow({ tools: `${PROVIDER}:preview-none`, mode: "platform" })], ...trusted })).mode).toBe("platform");
      expect((await modeOf({ rules: [allow()] })).mode).toBe("platform");
      expect((await modeOf({ rules: [allow({ mode: "token" })] })).mode).toBe("platform");
      expect(await modeOf({ rules: [allow(), { tools: `${PROVIDER}:fits`, decision: "confirm" }], ...trusted }, "fits")).toMatchObject({
        required: true,
        mode: "token",
      });
    } finally {
      await restore();
    }
  });

  it("a token-mode token is CONFIRMATION_MISMATCH once the policy demands platform mode", async () => {
    try {
      const { token } = await modeOf({ rules: [allow()], ...trusted });
      await stack.admin("setPolicy", { tenantId: TENANT, policy: { rules: [allow({ mode: "platform" })], ...trusted } });
      const refused = await mutate(stack.url, "tools.execute", { ref: ref("preview-none"), input: {}, confirmationToken: token }, headers);
      expect(refused.body.error?.data.toolpactCode).toBe("CONFIRMATION_MISMATCH");
    } finally {
      await restore();
    }
  });
});
