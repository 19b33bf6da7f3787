/**
 * `confirm` with an actor token that expires: the wait for the user's decision stops when the token
 * expires (not after the server's ~25 s round), a token that has expired or is about to fails the wait at
 * once, and the request stays open for a fresh token. Against a real server, with short-lived tokens.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createConfirmedToolMethod,
  createHttpTransport,
  isToolpactError,
  type HttpTransportOptions,
  type ToolDescriptor,
  type ToolpactError,
} from "@toolpact/client";
import { ASSISTANT_ID, PROVIDER_ID } from "./support/plugins.js";
import { configureWorld, makeSecrets, startStack, type Stack, type WorldKeys } from "./support/stack.js";
import { mintActorToken } from "./support/tokens.js";

const PLATFORM_POLICY = {
  rules: [
    { tools: "com.test.*", effects: ["read"], decision: "allow" },
    { tools: "com.test.*", effects: ["write"], decision: "confirm", mode: "platform" },
  ],
} as const;

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

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-client-token-expiry-"));
  stack = await startStack({ dbFile: path.join(dir, "toolpact.db"), secrets, publicUrl: "self" });
  keys = await configureWorld(stack);
  await stack.admin("setPolicy", { tenantId: "t1", policy: PLATFORM_POLICY });
});

afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function toolWith(actorToken: HttpTransportOptions["actorToken"]) {
  const transport = createHttpTransport({ url: stack.url, pluginKey: keys.t1[ASSISTANT_ID]!.key, actorToken });
  return createConfirmedToolMethod<typeof createNote.fullName, { title: string }, unknown>(transport, createNote);
}

async function failure(promise: Promise<unknown>): Promise<ToolpactError> {
  const error = await promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (e: unknown) => e,
  );
  if (!isToolpactError(error)) throw new Error(`expected a ToolpactError, got ${String(error)}`);
  return error;
}

const ISO = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z";
const WHAT_TO_DO =
  ": mint a fresh actor token for the user (from the platform's identity service; in development, toolpact token), give it to the " +
  "transport (an actorToken function is asked before every request), and call confirm again with the same preview: the request " +
  "stays open until it expires";
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("confirm and an actor token that expires", () => {
  it("stops waiting when the token expires, with UNAUTHENTICATED saying when and what to do; the request stays open", async () => {
    const user = "u-token-expires-while-waiting";
    const tool = toolWith(await mintActorToken(secrets.actorSecret, { sub: user, expiresIn: 5 }));
    const preview = await tool.preview({ title: "the token runs out" });
    if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
    const { requestId } = preview.confirmation;
    const started = Date.now();
    const error = await failure(tool.confirm(preview));
    // The server would have held the round for ~25 s; the token had at most 5 s left.
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(error.code).toBe("UNAUTHENTICATED");
    expect(error.message).toMatch(
      new RegExp(`^the actor token expired at ${ISO} while confirm waited for the user's decision on confirmation request ${requestId}${escaped(WHAT_TO_DO)}$`),
    );
    expect(error.data).toEqual({ requestId });

    // With a fresh token, confirm on the same preview waits for the same request, which the user then approves.
    const fresh = toolWith(await mintActorToken(secrets.actorSecret, { sub: user, expiresIn: 3600 }));
    const token = await fresh.confirm(preview, {
      onConfirmationRequired: async () => {
        await stack.runtime.decideConfirmation({ tenantId: "t1", userId: user }, requestId, "approve");
      },
    });
    expect((await fresh.execute({ title: "the token runs out" }, { confirmationToken: token })).operationId).toBeTypeOf("string");
  }, 20_000);

  it("fails the wait at once when the token has expired, or expires in under 2 s", async () => {
    const user = "u-token-expired-before-waiting";
    // The preview goes out with a valid token; the wait asks the function again and gets an expired one.
    const tokens = [
      await mintActorToken(secrets.actorSecret, { sub: user, expiresIn: 3600 }),
      await mintActorToken(secrets.actorSecret, { sub: user, expiresIn: -30 }),
    ];
    const tool = toolWith(() => tokens.shift()!);
    const preview = await tool.preview({ title: "too late" });
    if (!preview.confirmation.required) throw new Error("expected a confirmation");
    let started = Date.now();
    const expired = await failure(tool.confirm(preview));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(expired.code).toBe("UNAUTHENTICATED");
    expect(expired.message).toMatch(
      new RegExp(
        `^the actor token expired at ${ISO}, so confirm cannot wait for the user's decision on confirmation request ${preview.confirmation.mode === "platform" ? preview.confirmation.requestId : ""}${escaped(WHAT_TO_DO)}$`,
      ),
    );

    const soon = await mintActorToken(secrets.actorSecret, { sub: user, expiresIn: 3 });
    const exp = JSON.parse(Buffer.from(soon.split(".")[1]!, "base64url").toString("utf8")).exp * 1000;
    const almost = toolWith(soon);
    const second = await almost.preview({ title: "almost too late" });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, exp - Date.now() - 1_500)));
    started = Date.now();
    const aboutTo = await failure(almost.confirm(second));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(aboutTo.message).toMatch(new RegExp(`^the actor token expires at ${ISO}, in under 2 s, so confirm cannot wait`));
  }, 20_000);
});
