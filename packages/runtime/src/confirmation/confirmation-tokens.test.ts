import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfirmationTokens, deriveDigestKey } from "./confirmation-tokens.js";
import type { ConfirmationBinding } from "./binding.js";

const binding: ConfirmationBinding = {
  tenantId: "t",
  actorUserId: "u",
  callerPluginId: "com.example.caller",
  providerId: "com.example.notes",
  tool: "create-record",
  version: 1,
  schemaHash: "a".repeat(64),
  effect: "write",
  mode: "token",
  input: Object.freeze({ title: "x" }),
};

describe("ConfirmationTokens", () => {
  it("binds the mode and the run", async () => {
    const tokens = await ConfirmationTokens.create([{ kid: "k", key: randomBytes(32) }], 300, Date.now);
    const { token } = await tokens.mint({ ...binding, runId: "run-1" });
    await expect(tokens.verify(token, { ...binding, runId: "run-1" }, "tool")).resolves.toMatchObject({ tokenId: expect.any(String) });
    await expect(tokens.verify(token, binding, "tool")).rejects.toMatchObject({
      code: "CONFIRMATION_MISMATCH",
      message: expect.stringContaining("another run"),
    });
    await expect(tokens.verify(token, { ...binding, runId: "run-2" }, "tool")).rejects.toMatchObject({ code: "CONFIRMATION_MISMATCH" });
    await expect(tokens.verify(token, { ...binding, runId: "run-1", mode: "platform" }, "tool")).rejects.toMatchObject({
      code: "CONFIRMATION_MISMATCH",
      message: expect.stringContaining("policy now demands platform mode"),
    });
    await expect(tokens.verify(token, { ...binding, runId: "run-1", effect: "external" }, "tool")).rejects.toMatchObject({
      code: "CONFIRMATION_MISMATCH",
    });
  });

  it("derives a digest key per signing key that is not the signing key", () => {
    const key = randomBytes(32);
    const digestKey = deriveDigestKey(key);
    expect(digestKey).toHaveLength(32);
    expect(Buffer.from(digestKey).equals(key)).toBe(false);
    expect(Buffer.from(deriveDigestKey(key)).equals(Buffer.from(digestKey))).toBe(true);
  });
});
