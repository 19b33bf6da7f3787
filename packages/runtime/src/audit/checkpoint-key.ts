/**
 * The key that signs activity checkpoints: Ed25519, its seed derived by HKDF-SHA256 from the storage key
 * with its own info string, so it is never the confirmation-token key and reveals nothing of the storage
 * key. Anyone holding the public key can verify checkpoints; only the server can make them.
 */
import { createHash, createPrivateKey, createPublicKey, hkdfSync, sign, verify, type KeyObject } from "node:crypto";
import type { ActivityCheckpointRecord } from "../store/store.js";

/** The HKDF info of the checkpoint key: a purpose of its own. */
export const AUDIT_KEY_INFO = "toolpact-audit-checkpoint v1";
/** What a public key's text starts with. */
const PUBLIC_KEY_PREFIX = "ed25519:";
/** PKCS#8 DER of an Ed25519 private key, up to its 32-byte seed (RFC 8410). */
const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/** The fields of a checkpoint its signature covers. */
export type CheckpointClaims = Omit<ActivityCheckpointRecord, "signature" | "keyId">;

/** Signs checkpoints. */
export interface AuditKey {
  /** `ed25519:<base64url of the 32-byte public key>`: what `toolpact audit key` prints. */
  readonly publicKey: string;
  /** A short name of the key, kept with each checkpoint: the first 16 hex digits of SHA-256 of the public key. */
  readonly keyId: string;
  /** The signature over a checkpoint's claims, base64url. */
  sign(claims: CheckpointClaims): string;
}

/** Each key's seed, for the runtime's checkpoint worker alone (never a property of the key). */
const seeds = new WeakMap<AuditKey, Uint8Array>();

/** The checkpoint key of a storage key. */
export function deriveAuditKey(storageKey: Uint8Array): AuditKey {
  return auditKeyFromSeed(new Uint8Array(hkdfSync("sha256", storageKey, new Uint8Array(0), AUDIT_KEY_INFO, 32)));
}

/** The checkpoint key of its 32-byte Ed25519 seed (what a checkpoint worker thread is handed). */
export function auditKeyFromSeed(seed: Uint8Array): AuditKey {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: "der", type: "pkcs8" });
  const raw = Buffer.from(createPublicKey(privateKey).export({ format: "jwk" }).x as string, "base64url");
  const key: AuditKey = Object.freeze({
    publicKey: PUBLIC_KEY_PREFIX + raw.toString("base64url"),
    keyId: keyIdOf(raw),
    sign: (claims: CheckpointClaims) => sign(null, checkpointBytes(claims), privateKey).toString("base64url"),
  });
  seeds.set(key, seed);
  return key;
}

/** The seed of a key made here, to hand to the checkpoint worker; undefined for any other object. */
export function auditKeySeed(key: AuditKey): Uint8Array | undefined {
  return seeds.get(key);
}

/** A checkpoint verifier for a public key's text; throws a TypeError saying what is wrong with the text. */
export function checkpointVerifier(publicKey: string): { readonly keyId: string; verify(checkpoint: ActivityCheckpointRecord): boolean } {
  const text = publicKey.trim();
  const raw = text.startsWith(PUBLIC_KEY_PREFIX) ? Buffer.from(text.slice(PUBLIC_KEY_PREFIX.length), "base64url") : Buffer.alloc(0);
  if (raw.length !== 32) {
    throw new TypeError(`"${publicKey}" is not a checkpoint public key: expected ed25519:<43 base64url characters>, as \`toolpact audit key\` prints`);
  }
  const key: KeyObject = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") }, format: "jwk" });
  const keyId = keyIdOf(raw);
  return {
    keyId,
    verify: (checkpoint) => {
      const { signature, keyId: _signedBy, ...claims } = checkpoint;
      return verify(null, checkpointBytes(claims), key, Buffer.from(signature, "base64url"));
    },
  };
}

function keyIdOf(raw: Buffer): string {
  return createHash("sha256").update(raw).digest("hex").slice(0, 16);
}

/** The bytes a checkpoint signature covers: a JSON array under the key's purpose, so no other signed thing can pass for one. */
function checkpointBytes(claims: CheckpointClaims): Buffer {
  return Buffer.from(JSON.stringify([AUDIT_KEY_INFO, claims.tenantId, claims.seq, claims.lastId, claims.chainHash, claims.createdAt]));
}
