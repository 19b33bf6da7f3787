import { SignJWT } from "jose";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ActorTokenVerifier, DEFAULT_ACTOR_MAX_LIFETIME_SECONDS } from "./actor-token.js";

const ISSUER = "https://id.example";
const SECRET = new Uint8Array(randomBytes(32));
const NOW_MS = Date.UTC(2026, 0, 1);
const NOW = NOW_MS / 1000;

interface Minted {
  readonly header?: Record<string, unknown>;
  readonly claims?: Record<string, unknown>;
  readonly iat?: number;
  readonly exp?: number;
}

/** An HS256 actor token with every claim right unless `minted` changes one. */
function token(minted: Minted = {}): Promise<string> {
  return new SignJWT({ sub: "alice", tid: "tenant-a", lvl: 1, ...minted.claims })
    .setProtectedHeader({ alg: "HS256", ...minted.header })
    .setIssuer(ISSUER)
    .setAudience("toolpact")
    .setIssuedAt(minted.iat ?? NOW)
    .setExpirationTime(minted.exp ?? NOW + 900)
    .sign(SECRET);
}

async function verifier(maxLifetimeSeconds?: number): Promise<ActorTokenVerifier> {
  return ActorTokenVerifier.create({ issuer: ISSUER, secret: SECRET, ...(maxLifetimeSeconds === undefined ? {} : { maxLifetimeSeconds }) }, () => NOW_MS);
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toMatchObject({ code: "UNAUTHENTICATED" });
  return (error as Error).message;
}

describe("actor token lifetime", () => {
  it("accepts a token within the default day, and refuses one minted to live for years (exp 1e12)", async () => {
    const verify = await verifier();
    await expect(verify.verify(await token())).resolves.toMatchObject({ actor: { userId: "alice" } });
    await expect(verify.verify(await token({ exp: NOW + DEFAULT_ACTOR_MAX_LIFETIME_SECONDS }))).resolves.toBeDefined();
    expect(await refusal(verify.verify(await token({ exp: 1e12 })))).toMatch(/lives longer than 86400 s/);
    expect(await refusal(verify.verify(await token({ exp: NOW + DEFAULT_ACTOR_MAX_LIFETIME_SECONDS + 60 })))).toMatch(/lives longer/);
  });

  it("bounds exp - now even without iat, and exp - iat for a token issued long ago", async () => {
    const verify = await verifier();
    const noIat = await new SignJWT({ sub: "alice", tid: "tenant-a", lvl: 1 })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(ISSUER)
      .setAudience("toolpact")
      .setExpirationTime(NOW + 2 * DEFAULT_ACTOR_MAX_LIFETIME_SECONDS)
      .sign(SECRET);
    expect(await refusal(verify.verify(noIat))).toMatch(/lives longer/);
    // issued two days ago, valid for another hour: exp - iat is past the bound although exp - now is not
    expect(await refusal(verify.verify(await token({ iat: NOW - 2 * DEFAULT_ACTOR_MAX_LIFETIME_SECONDS, exp: NOW + 3600 })))).toMatch(/lives longer/);
  });

  it("takes its bound from actorTokens.maxLifetimeSeconds, within 60 s to 30 days", async () => {
    const short = await verifier(300);
    await expect(short.verify(await token({ exp: NOW + 300 }))).resolves.toBeDefined();
    expect(await refusal(short.verify(await token({ exp: NOW + 900 })))).toMatch(/lives longer than 300 s/);
    await expect(verifier(59)).rejects.toThrow(/maxLifetimeSeconds must be an integer from 60 to 2592000/);
    await expect(verifier(31 * 24 * 3600)).rejects.toThrow(/maxLifetimeSeconds/);
    await expect(verifier(90.5)).rejects.toThrow(/maxLifetimeSeconds/);
  });

  it("refuses an iat in the future beyond 5 s of skew", async () => {
    const verify = await verifier();
    await expect(verify.verify(await token({ iat: NOW + 4 }))).resolves.toBeDefined();
    expect(await refusal(verify.verify(await token({ iat: NOW + 60, exp: NOW + 900 })))).toMatch(/issued in the future/);
  });
});

describe("actor token header", () => {
  it("accepts no typ, JWT or at+jwt, and refuses any other typ (a confirmation token is not an actor token)", async () => {
    const verify = await verifier();
    await expect(verify.verify(await token({ header: { typ: "JWT" } }))).resolves.toBeDefined();
    await expect(verify.verify(await token({ header: { typ: "at+jwt" } }))).resolves.toBeDefined();
    for (const typ of ["toolpact-confirm+jwt", "", "JOSE+JSON", 7]) {
      expect(await refusal(verify.verify(await token({ header: { typ } })))).toMatch(/`typ` must be "JWT" or "at\+jwt"/);
    }
  });

  it("refuses a kid that is not a short visible name", async () => {
    const verify = await verifier();
    await expect(verify.verify(await token({ header: { kid: "actor-2026" } }))).resolves.toBeDefined();
    for (const kid of ["", "a b", "k\u0000", "x".repeat(257), 12]) {
      expect(await refusal(verify.verify(await token({ header: { kid } })))).toMatch(/`kid` must be a key name/);
    }
  });

  it("refuses an HS256 secret shorter than 32 bytes, naming it", async () => {
    await expect(ActorTokenVerifier.create({ issuer: ISSUER, secret: new Uint8Array(randomBytes(31)) }, Date.now)).rejects.toThrow(
      /actorTokens.secret is too short: HS256 needs at least 32 bytes \(got 31\)/,
    );
    await expect(ActorTokenVerifier.create({ issuer: ISSUER, secret: new Uint8Array(1) }, Date.now)).rejects.toThrow(/too short/);
  });
});

describe("actor token names the store keeps", () => {
  it("refuses a sub, tid, role or azp holding NUL, another control character or an unpaired surrogate", async () => {
    const verify = await verifier();
    for (const bad of ["al\u0000ice", "al\u001bice", "al\u0085ice", "al\ud800ice"]) {
      expect(await refusal(verify.verify(await token({ claims: { sub: bad } })))).toMatch(/`sub` claim \(user id\).*without control characters/);
      expect(await refusal(verify.verify(await token({ claims: { tid: bad } })))).toMatch(/`tid` claim/);
      expect(await refusal(verify.verify(await token({ claims: { roles: ["ok", bad] } })))).toMatch(/`roles` claim/);
      expect(await refusal(verify.verify(await token({ claims: { azp: bad } })))).toMatch(/`azp` claim/);
    }
    await expect(verify.verify(await token({ claims: { sub: "Zoë 😀" } }))).resolves.toMatchObject({ actor: { userId: "Zoë 😀" } });
  });
});
