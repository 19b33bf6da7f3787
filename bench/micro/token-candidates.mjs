// The JWT libraries a confirmation token could be made and checked with, side by side with the same
// checks: header (alg pinned to HS256, typ, a known kid, no crit), signature, expiry with 5 s of skew,
// aud. Each candidate mints the same claims and verifies its own token; the runtime's choice is the
// fastest by these figures (bench/micro/worker.mjs measures them, docs/benchmarks.md keeps a run).
import { webcrypto } from "node:crypto";
import { createSigner, createVerifier } from "fast-jwt";
import { SignJWT, compactVerify } from "jose";
import jsonwebtoken from "jsonwebtoken";

const TYP = "toolpact-confirm+jwt";
const AUD = "toolpact-confirmation";
const SKEW_SECONDS = 5;

/** The header checks every candidate runs before the signature (the designed verification order). */
function checkHeader(token, kid) {
  const dot = token.indexOf(".");
  const header = JSON.parse(Buffer.from(token.slice(0, dot), "base64url").toString("utf8"));
  if (header.alg !== "HS256" || header.typ !== TYP || header.kid !== kid || header.crit !== undefined) throw new Error("bad header");
}

/** The claim checks after the signature. */
function checkClaims(claims, nowSeconds) {
  if (nowSeconds > claims.exp + SKEW_SECONDS || claims.iat > nowSeconds + SKEW_SECONDS || claims.aud !== AUD) throw new Error("bad claims");
  return claims;
}

/** jose 6: WebCrypto HMAC (asynchronous), what the runtime used before. */
async function joseCandidate(key, kid) {
  const cryptoKey = await webcrypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
  return {
    name: "jose 6 (WebCrypto, async)",
    mint: (claims) => new SignJWT(claims).setProtectedHeader({ alg: "HS256", kid, typ: TYP }).sign(cryptoKey),
    verify: async (token, nowSeconds) => {
      checkHeader(token, kid);
      const { payload } = await compactVerify(token, cryptoKey, { algorithms: ["HS256"] });
      return checkClaims(JSON.parse(Buffer.from(payload).toString("utf8")), nowSeconds);
    },
  };
}

/** fast-jwt 6: node:crypto HMAC, synchronous. */
function fastJwtCandidate(key, kid) {
  const secret = Buffer.from(key);
  const sign = createSigner({ key: secret, algorithm: "HS256", kid, header: { typ: TYP } });
  const verifyToken = createVerifier({ key: secret, algorithms: ["HS256"], ignoreExpiration: true, ignoreNotBefore: true });
  return {
    name: "fast-jwt 6 (node:crypto, sync)",
    mint: (claims) => sign(claims),
    verify: (token, nowSeconds) => {
      checkHeader(token, kid);
      return checkClaims(verifyToken(token), nowSeconds);
    },
  };
}

/** jsonwebtoken 9: node:crypto HMAC through jws, synchronous. */
function jsonwebtokenCandidate(key, kid) {
  const secret = Buffer.from(key);
  return {
    name: "jsonwebtoken 9 (node:crypto, sync)",
    mint: (claims) => jsonwebtoken.sign(claims, secret, { algorithm: "HS256", keyid: kid, header: { alg: "HS256", typ: TYP, kid } }),
    verify: (token, nowSeconds) => {
      checkHeader(token, kid);
      return checkClaims(jsonwebtoken.verify(token, secret, { algorithms: ["HS256"], ignoreExpiration: true, ignoreNotBefore: true }), nowSeconds);
    },
  };
}

/** Every candidate, each checked once to mint a token the others' checks accept and to refuse a tampered one. */
export async function tokenCandidates(key, kid) {
  const candidates = [await joseCandidate(key, kid), fastJwtCandidate(key, kid), jsonwebtokenCandidate(key, kid)];
  const now = Math.floor(Date.now() / 1000);
  const claims = { jti: "c0ffee", iat: now, exp: now + 300, aud: AUD, tid: "t", sub: "u", dig: "d" };
  for (const candidate of candidates) {
    const token = await candidate.mint(claims);
    for (const other of candidates) {
      if ((await other.verify(token, now)).jti !== "c0ffee") throw new Error(`${other.name} did not accept ${candidate.name}'s token`);
    }
    const tampered = token.slice(0, -2) + (token.at(-2) === "A" ? "B" : "A") + token.at(-1);
    const refused = await Promise.resolve()
      .then(() => candidate.verify(tampered, now))
      .then(
        () => false,
        () => true,
      );
    if (!refused) throw new Error(`${candidate.name} accepted a tampered signature`);
  }
  return { candidates, claims };
}
