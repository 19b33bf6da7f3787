import { hash, timingSafeEqual } from "node:crypto";
import { randomBase64url, randomHex } from "../ids.js";

/** `tpk_<key id: 20 hex>_<secret: 32 random bytes, base64url>`. */
const PLUGIN_KEY_PATTERN = /^tpk_([0-9a-f]{20})_([A-Za-z0-9_-]{43})$/;

/** A freshly issued plugin key: the only time the secret exists outside the caller's hands. */
export interface IssuedPluginKey {
  readonly keyId: string;
  readonly key: string;
  readonly keyHash: Uint8Array;
}

/** Makes a new plugin key and the hash the store keeps. */
export function issuePluginKey(): IssuedPluginKey {
  const keyId = randomHex(10);
  const key = `tpk_${keyId}_${randomBase64url(32)}`;
  return { keyId, key, keyHash: hashPluginKey(key) };
}

/** The key id of a well-formed plugin key, else undefined. */
export function pluginKeyId(key: string): string | undefined {
  return PLUGIN_KEY_PATTERN.exec(key)?.[1];
}

/** SHA-256 of the whole key (UTF-8): what the store keeps. One shot, as every request hashes the key it presents. */
export function hashPluginKey(key: string): Uint8Array {
  return hash("sha256", key, "buffer");
}

/** Compares a presented key with a stored hash in constant time. */
export function pluginKeyMatches(key: string, storedHash: Uint8Array): boolean {
  const presented = hashPluginKey(key);
  return presented.byteLength === storedHash.byteLength && timingSafeEqual(presented, storedHash);
}
