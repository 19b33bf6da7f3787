import { describe, expect, it } from "vitest";
import { createRequestStateCodec, type StateCall } from "./request-state.js";

const root = new Uint8Array(32).fill(7);
const call: StateCall = {
  caller: { tenantId: "t1", actorUserId: "user-1", callerPluginId: "com.test.assistant" },
  ref: { providerId: "com.test.notes", tool: "create-note", version: 1 },
  input: { title: "hello", tags: ["a", "b"] },
};
const request = {
  requestId: "7b8bcbb3-b9ce-496c-a630-9d498e32a935",
  confirmUrl: "https://toolpact.example/confirm/7b8bcbb3",
  expiresAt: "2030-01-01T00:00:00.000Z",
};

describe("the requestState codec", () => {
  it("accepts its own state for the same call, whatever the input's key order", () => {
    const codec = createRequestStateCodec(root);
    const state = codec.mint(call, request);
    expect(codec.check(state, { ...call, input: { tags: ["a", "b"], title: "hello" } })).toEqual({
      ok: true,
      requestId: request.requestId,
      confirmUrl: request.confirmUrl,
    });
  });

  it("another root's codec (another deployment, or a random per-process key) refuses it", () => {
    const state = createRequestStateCodec(root).mint(call, request);
    expect(createRequestStateCodec(new Uint8Array(32).fill(8)).check(state, call)).toMatchObject({ ok: false, code: "CONFIRMATION_INVALID" });
    expect(createRequestStateCodec().check(state, call)).toMatchObject({ ok: false, code: "CONFIRMATION_INVALID" });
  });

  it("refuses it once the confirmation request expired", () => {
    let now = Date.parse(request.expiresAt) - 1;
    const codec = createRequestStateCodec(root, () => now);
    const state = codec.mint(call, request);
    expect(codec.check(state, call).ok).toBe(true);
    now += 1;
    expect(codec.check(state, call)).toMatchObject({ ok: false, code: "CONFIRMATION_EXPIRED" });
  });

  it("refuses it for another tenant, user, caller, tool, version or input", () => {
    const codec = createRequestStateCodec(root);
    const state = codec.mint(call, request);
    const others: StateCall[] = [
      { ...call, caller: { ...call.caller, tenantId: "t2" } },
      { ...call, caller: { ...call.caller, actorUserId: "user-2" } },
      { ...call, caller: { ...call.caller, callerPluginId: "com.test.other" } },
      { ...call, ref: { ...call.ref, tool: "delete-note" } },
      { ...call, ref: { ...call.ref, version: 2 } },
      { ...call, input: { title: "hello!", tags: ["a", "b"] } },
    ];
    for (const other of others) expect(codec.check(state, other), JSON.stringify(other)).toMatchObject({ ok: false, code: "CONFIRMATION_MISMATCH" });
  });

  it("is readable, and carries neither the input nor a token", () => {
    const state = createRequestStateCodec(root).mint({ ...call, input: { password: "hunter2-very-secret" } }, request);
    const payload = Buffer.from(state.split(".")[1]!, "base64url").toString("utf8");
    expect(payload).not.toContain("hunter2");
    expect(Object.keys(JSON.parse(payload) as object).sort()).toEqual(["cpl", "dig", "exp", "prv", "rid", "sub", "tid", "tol", "url", "ver"]);
  });

  it("refuses junk without throwing", () => {
    const codec = createRequestStateCodec(root);
    for (const junk of ["", "tp1", "tp1..", "tp1.e30.", `tp1.${"A".repeat(5000)}.x`, "tp2.e30.AAAA"]) expect(codec.check(junk, call).ok).toBe(false);
  });
});
