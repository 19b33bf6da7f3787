import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ToolExecuteContext } from "@toolpact/client";
import { loadManifestOrThrow } from "@toolpact/contract";
import { createRuntime, createSqliteStore, type ToolpactRuntime } from "@toolpact/runtime";
import { createInProcessTransport } from "@toolpact/server";
import { createMailerClient, type MailerClient } from "./generated/index.js";
import { mailerProvider, openOutbox, type Outbox } from "./index.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const MAILER = "com.example.mailer";
const ASSISTANT = "com.example.assistant";
const ISSUER = "https://id.mailer-test.example";
const TENANT = "tenant-mail";
const message = { to: "team@example.com", subject: "Weekly summary", body: "Three notes created, one archived." };

let dir: string;
let runtime: ToolpactRuntime;
let outbox: Outbox;
let mailer: MailerClient;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-mailer-"));
  const actorSecret = new Uint8Array(randomBytes(32));
  runtime = await createRuntime({
    store: await createSqliteStore({ path: path.join(dir, "toolpact.db") }),
    signingKeys: [{ kid: "k1", key: new Uint8Array(randomBytes(32)) }],
    storageKey: new Uint8Array(randomBytes(32)),
    actorTokens: { issuer: ISSUER, secret: actorSecret },
  });
  runtime.registerPlugin(await loadManifestOrThrow(path.join(here, "../plugin.json")));
  runtime.registerPlugin(await loadManifestOrThrow(path.join(here, "../../assistant/plugin.json")));
  outbox = openOutbox(path.join(dir, "outbox.db"));
  runtime.sdkFor(MAILER).tools.provideAll(mailerProvider(outbox));
  await runtime.admin.installPlugin(TENANT, MAILER);
  await runtime.admin.installPlugin(TENANT, ASSISTANT);
  await runtime.admin.setPolicy(TENANT, {
    rules: [{ tools: `${MAILER}:*`, callers: [ASSISTANT], decision: "confirm" }],
    trustedConfirmationUis: [ASSISTANT],
  });
  const { key } = await runtime.admin.issuePluginKey(TENANT, ASSISTANT);
  const actorToken = await new SignJWT({ tid: TENANT, lvl: 1, azp: ASSISTANT })
    .setProtectedHeader({ alg: "HS256" })
    .setIssuer(ISSUER)
    .setAudience("toolpact")
    .setSubject("ada")
    .setExpirationTime("10m")
    .sign(actorSecret);
  mailer = createMailerClient(createInProcessTransport({ runtime, pluginKey: key, actorToken }));
});

afterAll(async () => {
  await runtime?.close();
  outbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The context the runtime hands `execute`; a re-invoked operation gets the same operation id. */
function executeContext(operationId: string): ToolExecuteContext {
  return Object.freeze({
    tenantId: TENANT,
    actor: Object.freeze({ userId: "ada", verificationLevel: 1, roles: Object.freeze([]) }),
    callerPluginId: ASSISTANT,
    tool: `${MAILER}:send-summary@1`,
    effect: "external" as const,
    phase: "execute" as const,
    signal: new AbortController().signal,
    operationId,
  });
}

describe("the mailer provider", () => {
  it("previews what it would send, then sends once with the operation id as idempotency key", async () => {
    const preview = await mailer.sendSummary.preview(message);
    expect(preview.summary).toBe('Email "Weekly summary" to team@example.com');
    expect(preview.details).toEqual(message);
    const { operationId, result } = await mailer.sendSummary.execute(message, {
      confirmationToken: await mailer.sendSummary.confirm(preview),
    });
    expect(result.targetId).toBe(result.messageId);
    const sent = outbox.list().filter((queued) => queued.idempotencyKey === operationId);
    expect(sent).toEqual([expect.objectContaining({ messageId: result.messageId, to: message.to, userId: "ada", tenantId: TENANT })]);
  });

  it("sends nothing twice when the runtime re-invokes the same operation (recovery: idempotent)", async () => {
    const handler = mailerProvider(outbox).tools.find((tool) => tool.name === "send-summary")!.handler;
    const before = outbox.list().length;
    const first = await handler.execute(message, executeContext("0190a0b0-0000-7000-8000-000000000001"));
    const again = await handler.execute(message, executeContext("0190a0b0-0000-7000-8000-000000000001"));
    expect(again).toEqual(first);
    expect(outbox.list()).toHaveLength(before + 1);

    // Another operation is another send, even with the same text.
    const other = await handler.execute(message, executeContext("0190a0b0-0000-7000-8000-000000000002"));
    expect(other).not.toEqual(first);
    expect(outbox.list()).toHaveLength(before + 2);
  });

  it("returns the recorded outcome for a repeated idempotencyKey instead of sending again", async () => {
    const before = outbox.list().length;
    const send = async () => {
      const preview = await mailer.sendSummary.preview(message);
      return mailer.sendSummary.execute(message, {
        confirmationToken: await mailer.sendSummary.confirm(preview),
        idempotencyKey: "weekly-summary-2026-48",
      });
    };
    const first = await send();
    const second = await send();
    expect(second).toEqual(first);
    expect(outbox.list()).toHaveLength(before + 1);
  });

  it("keeps a preview's body short", async () => {
    const long = { ...message, body: "x".repeat(500) };
    const preview = await mailer.sendSummary.preview(long);
    expect((preview.details as { body: string }).body).toBe(`${"x".repeat(160)}…`);
  });

  it("rejects a recipient that is not an email address before anything is sent", async () => {
    const before = outbox.list().length;
    await expect(mailer.sendSummary.preview({ ...message, to: "not an address" })).rejects.toMatchObject({ code: "INPUT_INVALID" });
    expect(outbox.list()).toHaveLength(before);
  });
});
