/**
 * `@toolpact/client` in platform mode against a real server: `confirm` hands the confirmation page to
 * `onConfirmationRequired` once, the user decides there, and a request nobody decides in time rejects
 * with a CONFIRMATION_EXPIRED that says so.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { getEventListeners } from "node:events";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createConfirmedToolMethod, createHttpTransport, isToolpactError, type ConfirmationRequired, type ToolDescriptor } from "@toolpact/client";
import { fetchPage, postDecision, signIn } from "./support/confirm-page.js";
import { ASSISTANT_ID, PROVIDER_ID } from "./support/plugins.js";
import { configureWorld, makeSecrets, startStack, type Stack, type WorldKeys } from "./support/stack.js";
import { mintActorToken } from "./support/tokens.js";

const PLATFORM_POLICY = {
  rules: [
    { tools: "com.test.*", effects: ["read"], decision: "allow" },
    { tools: "com.test.*", effects: ["write"], decision: "confirm", mode: "platform" },
  ],
} as const;

/** What codegen emits for com.test.notes:create-note@1. */
const createNote = {
  providerId: PROVIDER_ID,
  name: "create-note",
  version: 1,
  fullName: `${PROVIDER_ID}:create-note@1`,
  effect: "write",
  requiresConfirmation: true,
} as const satisfies ToolDescriptor;

let dir: string;
let stack: Stack;
let keys: WorldKeys;
const secrets = makeSecrets();
/** Moves the runtime's clock (ms): the way to let a request expire without waiting minutes. */
let clockOffset = 0;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-client-platform-"));
  stack = await startStack({
    dbFile: path.join(dir, "toolpact.db"),
    secrets,
    publicUrl: "self",
    clock: () => Date.now() + clockOffset,
  });
  keys = await configureWorld(stack);
  await stack.admin("setPolicy", { tenantId: "t1", policy: PLATFORM_POLICY });
});

beforeEach(() => {
  clockOffset = 0;
});

afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function toolFor(user: string) {
  const transport = createHttpTransport({
    url: stack.url,
    pluginKey: keys.t1[ASSISTANT_ID]!.key,
    actorToken: await mintActorToken(secrets.actorSecret, { sub: user, expiresIn: 3600 }),
  });
  return { transport, tool: createConfirmedToolMethod<typeof createNote.fullName, { title: string }, unknown>(transport, createNote) };
}

describe("confirm in platform mode, over HTTP", () => {
  it("hands the confirmation page to onConfirmationRequired once; the user approves there; execute runs", async () => {
    const { tool } = await toolFor("u-client-approve");
    const preview = await tool.preview({ title: "approved through the page" });
    if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
    const calls: ConfirmationRequired[] = [];
    const token = await tool.confirm(preview, {
      // The caller's code brings the URL to the user, who signs in and approves on the page it leads to.
      onConfirmationRequired: async (request) => {
        calls.push(request);
        const session = await signIn(stack.url, secrets.actorSecret, { sub: "u-client-approve" });
        const page = await fetchPage(new URL(request.confirmUrl).origin, request.requestId, session);
        expect(page.status).toBe(200);
        const decided = await postDecision(stack.url, request.requestId, "approve", { session, csrf: page.csrf! });
        expect(decided.status).toBeLessThan(400);
      },
    });
    expect(calls).toEqual([
      {
        confirmUrl: preview.confirmation.confirmUrl,
        expiresAt: preview.confirmation.expiresAt,
        requestId: preview.confirmation.requestId,
        tool: createNote.fullName,
      },
    ]);
    expect(calls[0]!.confirmUrl).toBe(`${stack.url}/confirm/${preview.confirmation.requestId}`);
    const done = await tool.execute({ title: "approved through the page" }, { confirmationToken: token });
    expect(done.operationId).toBeTypeOf("string");
  });

  it("a request nobody decides before it expires rejects with CONFIRMATION_EXPIRED saying when and what to do", async () => {
    const { tool } = await toolFor("u-client-expire");
    const preview = await tool.preview({ title: "nobody decides" });
    if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
    let called = 0;
    const error = await tool
      .confirm(preview, {
        onConfirmationRequired: () => {
          called++;
          // The user never comes; the runtime's clock passes the request's expiry.
          clockOffset = Date.parse(preview.confirmation.required ? preview.confirmation.expiresAt : "") - Date.now() + 1_000;
        },
      })
      .catch((e: unknown) => e);
    expect(called).toBe(1);
    expect(isToolpactError(error) && error.code).toBe("CONFIRMATION_EXPIRED");
    const { requestId, expiresAt } = preview.confirmation;
    expect((error as Error).message).toBe(
      `confirmation request ${requestId} for ${createNote.fullName} expired: nobody approved or denied it before ${expiresAt}, so nothing ran. ` +
        "Preview again for a new request and bring its confirmUrl to the user (confirm's onConfirmationRequired gets it)",
    );
    expect(error).toMatchObject({ data: { requestId, tool: createNote.fullName } });
  });

  it("a callback that throws ends confirm with its error; the request stays open for the page", async () => {
    const { tool } = await toolFor("u-client-callback-throws");
    const preview = await tool.preview({ title: "callback throws" });
    const mine = new Error("no chat window to show the link in");
    await expect(tool.confirm(preview, { onConfirmationRequired: () => Promise.reject(mine) })).rejects.toBe(mine);
  });

  it("waiting again and again with one long-lived signal leaves no abort listener on it", async () => {
    const { transport, tool } = await toolFor("u-client-listeners");
    const preview = await tool.preview({ title: "listeners" });
    if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
    const { requestId } = preview.confirmation;
    await stack.runtime.decideConfirmation({ tenantId: "t1", userId: "u-client-listeners" }, requestId, "approve");
    const session = new AbortController();
    for (let round = 0; round < 30; round++) {
      expect((await transport.waitForConfirmation(requestId, { signal: session.signal })).status).toBe("approved");
      await tool.confirm(preview, { signal: session.signal });
    }
    expect(getEventListeners(session.signal, "abort")).toHaveLength(0);
  });
});
