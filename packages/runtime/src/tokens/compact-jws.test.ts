/** Compact JWS as toolpact reads it: one spelling per token, header checked before the signature. */
import { randomBytes } from "node:crypto";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { ConfirmationTokens } from "../confirmation/confirmation-tokens.js";
import type { ConfirmationBinding } from "../confirmation/binding.js";
import { ActorTokenVerifier } from "../identity/actor-token.js";
import { Hs256Key, JwsError, isCanonicalBase64url, readJwsHeader } from "./compact-jws.js";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** The same token with its signature's last character moved within its unused bits: decodes to the same bytes. */
function reencoded(token: string): string {
  const last = token.at(-1)!;
  const twin = token.slice(0, -1) + ALPHABET[ALPHABET.indexOf(last) ^ 1]!;
  const signature = (t: string) => Buffer.from(t.slice(t.lastIndexOf(".") + 1), "base64url");
  expect(signature(twin).equals(signature(token))).toBe(true);
  return twin;
}

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

describe("compact JWS", () => {
  it("knows canonical base64url: no padding, no other alphabet, zero unused bits", () => {
    expect(isCanonicalBase64url(Buffer.from("hello").toString("base64url"))).toBe(true);
    expect(isCanonicalBase64url("aGVsbG8=")).toBe(false);
    expect(isCanonicalBase64url("aGVsbG9")).toBe(false); // 'o' -> '9' sets unused bits
    expect(isCanonicalBase64url("aGVs+G8")).toBe(false);
    expect(() => readJwsHeader("a.b")).toThrow(JwsError);
    expect(() => readJwsHeader("not.a.token")).toThrow(expect.objectContaining({ failure: "malformed" }));
  });

  it("signs with node:crypto through fast-jwt and refuses another key's or a re-encoded signature", () => {
    const key = new Hs256Key(randomBytes(32), { kid: "k", typ: "x+jwt" });
    const token = key.sign({ a: 1, iat: 10 });
    expect(readJwsHeader(token)).toEqual({ alg: "HS256", typ: "x+jwt", kid: "k" });
    expect(key.claimsOf(token)).toEqual({ a: 1, iat: 10 });
    expect(() => new Hs256Key(randomBytes(32)).claimsOf(token)).toThrow(expect.objectContaining({ failure: "signature" }));
    expect(() => readJwsHeader(reencoded(token))).toThrow(expect.objectContaining({ failure: "non-canonical" }));
  });

  it("a confirmation token re-encoded in its unused bits is CONFIRMATION_INVALID, though its signature bytes verify", async () => {
    const tokens = ConfirmationTokens.create([{ kid: "k", key: randomBytes(32) }], 300, Date.now);
    const { token } = await tokens.mint(binding);
    await expect(tokens.verify(token, binding, "tool")).resolves.toBeDefined();
    await expect(tokens.verify(reencoded(token), binding, "tool")).rejects.toMatchObject({
      code: "CONFIRMATION_INVALID",
      message: expect.stringContaining("not canonical base64url"),
    });
  });

  it("an actor token re-encoded in its unused bits is UNAUTHENTICATED", async () => {
    const secret = new Uint8Array(randomBytes(32));
    const verifier = await ActorTokenVerifier.create({ issuer: "https://id.example", secret }, Date.now);
    const token = await new SignJWT({ sub: "u", tid: "t", lvl: 1 })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer("https://id.example")
      .setAudience("toolpact")
      .setExpirationTime("5m")
      .sign(secret);
    await expect(verifier.verify(token)).resolves.toMatchObject({ tenantId: "t" });
    await expect(verifier.verify(reencoded(token))).rejects.toMatchObject({
      code: "UNAUTHENTICATED",
      message: expect.stringContaining("not canonical base64url"),
    });
  });
});
