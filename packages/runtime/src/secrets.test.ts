import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checkSecrets, parseSigningKeys } from "./secrets.js";

const key = () => randomBytes(32);
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

describe("parseSigningKeys", () => {
  it("reads kid:base64 pairs in order; the first signs", () => {
    const a = key();
    const b = randomBytes(48);
    const keys = parseSigningKeys(`k1:${b64(a)}, k2:${Buffer.from(b).toString("base64url")}`);
    expect(keys.map((k) => k.kid)).toEqual(["k1", "k2"]);
    expect(Buffer.from(keys[0]!.key).equals(a)).toBe(true);
    expect(Buffer.from(keys[1]!.key).equals(b)).toBe(true);
  });

  it("refuses empty, malformed, short and duplicate entries without echoing key material", () => {
    const short = b64(randomBytes(16));
    expect(() => parseSigningKeys("")).toThrow(/empty/);
    expect(() => parseSigningKeys(b64(key()))).toThrow(/entry 1 is not "kid:base64"/);
    expect(() => parseSigningKeys(`k1:${b64(key())},k1:${b64(key())}`)).toThrow(/appears twice/);
    expect(() => parseSigningKeys(`k 1:${b64(key())}`)).toThrow(/kid must be/);
    expect(() => parseSigningKeys(`k1:not base64!`)).toThrow(/not base64/);
    try {
      parseSigningKeys(`k1:${short}`);
      throw new Error("expected a refusal");
    } catch (error) {
      expect((error as Error).message).toMatch(/signing key "k1" is too short: it has 16 bytes, at least 32/);
      expect((error as Error).message).not.toContain(short);
    }
  });
});

describe("checkSecrets", () => {
  const base = () => ({ signingKeys: [{ kid: "k1", key: key() }], storageKey: key(), actorSecret: key(), adminKey: b64(key()) });

  it("accepts long, distinct secrets", () => {
    expect(() => checkSecrets(base())).not.toThrow();
  });

  it("refuses each secret when too short, naming it", () => {
    expect(() => checkSecrets({ ...base(), signingKeys: [{ kid: "k1", key: randomBytes(31) }] })).toThrow(/signing key "k1" is too short/);
    expect(() => checkSecrets({ ...base(), storageKey: randomBytes(16) })).toThrow(/storage key .* exactly 32 bytes/);
    expect(() => checkSecrets({ ...base(), storageKey: randomBytes(64) })).toThrow(/storage key .* exactly 32 bytes/);
    expect(() => checkSecrets({ ...base(), actorSecret: randomBytes(8) })).toThrow(/actor token secret .* too short/);
    expect(() => checkSecrets({ ...base(), adminKey: "short-admin-key" })).toThrow(/admin key .* too short/);
    expect(() => checkSecrets({ ...base(), signingKeys: [] })).toThrow(/no confirmation signing key/);
  });

  it("refuses any secret used twice", () => {
    const shared = key();
    expect(() => checkSecrets({ ...base(), storageKey: shared, actorSecret: shared })).toThrow(
      /storage key .* and the actor token secret .* are the same secret/,
    );
    expect(() => checkSecrets({ ...base(), signingKeys: [{ kid: "k1", key: shared }], storageKey: shared })).toThrow(/same secret/);
    expect(() =>
      checkSecrets({
        ...base(),
        signingKeys: [
          { kid: "k1", key: shared },
          { kid: "k2", key: Buffer.from(shared) },
        ],
      }),
    ).toThrow(/signing key "k1" and signing key "k2" are the same secret/);
    const admin = b64(key());
    expect(() => checkSecrets({ ...base(), adminKey: admin, actorSecret: Buffer.from(admin, "utf8") })).toThrow(/same secret/);
  });
});
