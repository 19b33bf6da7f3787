/**
 * The `requestState` of a 2026-07-28 approval, attacked from the outside with raw requests: it is readable
 * and holds no token or secret; a retry before approval is asked again; after approval it runs the call
 * exactly once however many retries arrive; tampered, other-actor, other-input and expired states are
 * refused with a clear message and nothing runs; the agent cannot approve its own request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CSRF_HEADER } from "../../packages/server/src/index.js";
import { fetchPage, postDecision, signIn } from "../integration/support/confirm-page.js";
import { mutate } from "../integration/support/wire.js";
import { startMcpWorld, type McpWorld } from "../mcp/support/mcp-world.js";
import { rawModern, requestIdOf, type RawAnswer } from "./support/modern-clients.js";

const CREATE = "com-test-notes_create_note";

describe("the requestState of a 2026-07-28 approval", () => {
  let world: McpWorld;
  let clockOffset = 0;

  beforeAll(async () => {
    world = await startMcpWorld({ clock: () => Date.now() + clockOffset });
  });
  afterAll(async () => {
    await world?.close();
  });

  const created = () => world.stack.probe.invocations.get("create-note") ?? 0;
  const call = (title: string, extra: Record<string, unknown> = {}, options: Parameters<typeof rawModern>[3] = {}) =>
    rawModern(world, "tools/call", { name: CREATE, arguments: { title }, ...extra }, options);
  /** The first round of a confirmed call: its state and the request id its page names. */
  async function firstRound(title: string): Promise<{ state: string; requestId: string; answer: RawAnswer }> {
    const answer = await call(title);
    expect(answer.result?.resultType).toBe("input_required");
    const url = answer.result!.inputRequests!.toolpact_approval!.params!.url!;
    return { state: answer.result!.requestState!, requestId: requestIdOf(url), answer };
  }
  const retry = (title: string, state: string, options: Parameters<typeof rawModern>[3] = {}) => call(title, { requestState: state }, options);
  const codeOf = (answer: RawAnswer) => (answer.result?._meta as Record<string, unknown> | undefined)?.["toolpact/code"];
  const textOf = (answer: RawAnswer) => (answer.result?.content as { text: string }[] | undefined)?.[0]?.text ?? "";

  it("is readable by the client and carries the binding, not the input, a token or anything secret", async () => {
    const { state, requestId } = await firstRound("A very private title");
    const [version, payload, mac] = state.split(".");
    expect(version).toBe("tp1");
    expect(mac).toMatch(/^[\w-]{43}$/);
    const claims = JSON.parse(Buffer.from(payload!, "base64url").toString("utf8")) as Record<string, unknown>;
    expect(Object.keys(claims).sort()).toEqual(["cpl", "dig", "exp", "prv", "rid", "sub", "tid", "tol", "url", "ver"]);
    expect(claims).toMatchObject({ tid: "t1", sub: "user-1", cpl: "com.test.assistant", prv: "com.test.notes", tol: "create-note", ver: 1, rid: requestId });
    expect(state).not.toContain(Buffer.from("A very private title").toString("base64url").slice(0, 12));
    expect(JSON.stringify(claims)).not.toContain("private");
  });

  it("before approval a retry is asked again, with the same page and state; nothing runs", async () => {
    const before = created();
    const { state, answer } = await firstRound("Not yet decided");
    const again = await retry("Not yet decided", state);
    expect(again.result).toMatchObject({ resultType: "input_required", requestState: state, inputRequests: answer.result!.inputRequests });
    expect(created()).toBe(before);
  });

  it("after approval the retry runs the call once; a later retry answers that same run and nothing runs again", async () => {
    const before = created();
    const { state, requestId } = await firstRound("Approved then replayed");
    await world.decide(requestId, "approve");
    const ran = await retry("Approved then replayed", state);
    expect(ran.result?.structuredContent).toMatchObject({ title: "Approved then replayed" });
    const replayed = await retry("Approved then replayed", state);
    expect(replayed.result?._meta).toMatchObject({
      "toolpact/operationId": (ran.result?._meta as Record<string, unknown> | undefined)?.["toolpact/operationId"],
    });
    expect(created()).toBe(before + 1);
  });

  it("20 concurrent retries of one approved call make one effect", async () => {
    const before = created();
    const { state, requestId } = await firstRound("Twenty at once");
    await world.decide(requestId, "approve");
    const answers = await Promise.all(Array.from({ length: 20 }, () => retry("Twenty at once", state)));
    const operations = new Set(answers.map((answer) => (answer.result?._meta as Record<string, unknown> | undefined)?.["toolpact/operationId"]));
    expect(operations.size).toBe(1);
    expect([...operations][0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(created()).toBe(before + 1);
  });

  it("a tampered state is refused, clearly, and nothing runs even though the request was approved", async () => {
    const before = created();
    const { state, requestId } = await firstRound("Tampered");
    await world.decide(requestId, "approve");
    const [version, payload, mac] = state.split(".");
    const claims = JSON.parse(Buffer.from(payload!, "base64url").toString("utf8")) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: "user-2" })).toString("base64url");
    const flipped = `${mac!.slice(0, -2)}${mac!.endsWith("A") ? "BB" : "AA"}`;
    for (const bad of [`${version}.${forged}.${mac}`, `${version}.${payload}.${flipped}`, "not-a-state", `${state}x`]) {
      const answer = await retry("Tampered", bad);
      expect(answer.result?.isError, bad).toBe(true);
      expect(codeOf(answer)).toBe("CONFIRMATION_INVALID");
      expect(textOf(answer)).toContain("the requestState was refused and nothing ran");
    }
    expect(created()).toBe(before);
  });

  it("another user's state is refused: the approval of user-1 does not run user-2's call", async () => {
    const before = created();
    const { state, requestId } = await firstRound("Someone else's");
    await world.decide(requestId, "approve");
    const answer = await retry("Someone else's", state, { actor: { sub: "user-2" } });
    expect(codeOf(answer)).toBe("CONFIRMATION_MISMATCH");
    expect(textOf(answer)).toContain("another caller or user");
    expect(created()).toBe(before);
  });

  it("a state retried with another input is refused and nothing runs", async () => {
    const before = created();
    const { state, requestId } = await firstRound("Original input");
    await world.decide(requestId, "approve");
    const answer = await retry("Changed input", state);
    expect(codeOf(answer)).toBe("CONFIRMATION_MISMATCH");
    expect(textOf(answer)).toContain("exactly the arguments");
    expect(created()).toBe(before);
  });

  it("after the request expired a retry says nothing ran", async () => {
    const before = created();
    const { state } = await firstRound("Left to expire");
    clockOffset = 10 * 60_000;
    try {
      const answer = await retry("Left to expire", state);
      expect(codeOf(answer)).toBe("CONFIRMATION_EXPIRED");
      expect(textOf(answer)).toContain("nothing ran");
    } finally {
      clockOffset = 0;
    }
    expect(created()).toBe(before);
  });

  it("after the user denied a retry says nothing ran", async () => {
    const before = created();
    const { state, requestId } = await firstRound("Denied");
    await world.decide(requestId, "deny");
    const answer = await retry("Denied", state);
    expect(codeOf(answer)).toBe("CONFIRMATION_DENIED");
    expect(textOf(answer)).toContain("nothing ran");
    expect(created()).toBe(before);
  });

  it("the agent cannot approve its own request, with its credentials, even next to a person's session", async () => {
    const before = created();
    const { state, requestId } = await firstRound("Self-approved");
    const agent = await world.headers();
    expect((await mutate(world.stack.url, "confirmations.approve", { requestId }, agent)).status).toBe(403);
    const session = await signIn(world.stack.url, world.secrets.actorSecret);
    const page = await fetchPage(world.stack.url, requestId, session);
    expect((await postDecision(world.stack.url, requestId, "approve", { session, csrf: page.csrf!, headers: agent })).status).toBe(403);
    const withSession = { ...agent, cookie: session.cookie, [CSRF_HEADER]: page.csrf! };
    expect((await mutate(world.stack.url, "confirmations.approve", { requestId }, withSession)).status).toBe(403);
    const answer = await retry("Self-approved", state);
    expect(answer.result?.resultType).toBe("input_required");
    expect(created()).toBe(before);
  });
});
