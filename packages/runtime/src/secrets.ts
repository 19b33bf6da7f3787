/** A key that signs (the first one) or verifies (all of them) confirmation tokens. */
export interface SigningKey {
  readonly kid: string;
  readonly key: Uint8Array;
}

/** The secrets a host holds; `checkSecrets` refuses weak or reused ones at start-up. */
export interface HostSecrets {
  readonly signingKeys: readonly SigningKey[];
  readonly storageKey: Uint8Array;
  readonly actorSecret?: Uint8Array | undefined;
  readonly adminKey?: string | Uint8Array | undefined;
}

/** Secrets are at least this long; the storage key is exactly this long (AES-256). */
export const MIN_SECRET_BYTES = 32;

const KID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]|[A-Za-z0-9_-])+={0,2}$/;

/**
 * Parses `TOOLPACT_SIGNING_KEYS`: `kid1:base64,kid2:base64`. The first key signs, all verify.
 * Messages name the entry, never its key material.
 * @example parseSigningKeys(process.env.TOOLPACT_SIGNING_KEYS ?? "")
 */
export function parseSigningKeys(value: string): SigningKey[] {
  const entries = value.split(",").map((entry) => entry.trim());
  if (value.trim() === "" || entries.length === 0) {
    throw new TypeError('TOOLPACT_SIGNING_KEYS is empty: set it to "kid1:<base64 of at least 32 random bytes>" (more keys comma-separated)');
  }
  const keys: SigningKey[] = [];
  entries.forEach((entry, index) => {
    const where = `TOOLPACT_SIGNING_KEYS entry ${index + 1}`;
    const colon = entry.indexOf(":");
    if (colon <= 0) {
      throw new TypeError(`${where} is not "kid:base64": write each key as <kid>:<base64 key>, comma-separated`);
    }
    const kid = entry.slice(0, colon);
    const encoded = entry.slice(colon + 1);
    if (!KID_PATTERN.test(kid)) {
      throw new TypeError(`${where}: the kid must be 1-64 characters of A-Z a-z 0-9 . _ -`);
    }
    if (!BASE64_PATTERN.test(encoded)) {
      throw new TypeError(`${where} ("${kid}"): the key is not base64; generate one with \`openssl rand -base64 32\``);
    }
    const key = new Uint8Array(Buffer.from(encoded, encoded.includes("-") || encoded.includes("_") ? "base64url" : "base64"));
    if (keys.some((known) => known.kid === kid)) {
      throw new TypeError(`${where}: kid "${kid}" appears twice; every signing key needs its own kid`);
    }
    keys.push({ kid, key });
  });
  checkSigningKeys(keys);
  return keys;
}

/**
 * Refuses secrets that are too short or used twice: each signing key, the actor secret and the admin
 * key are at least 32 bytes, the storage key is exactly 32 bytes, and no two are equal.
 * @throws TypeError naming the offending secret (never its value).
 */
export function checkSecrets(secrets: HostSecrets): void {
  checkSigningKeys(secrets.signingKeys);
  const named: { name: string; bytes: Uint8Array }[] = secrets.signingKeys.map((key) => ({
    name: `signing key "${key.kid}"`,
    bytes: key.key,
  }));
  if (!(secrets.storageKey instanceof Uint8Array) || secrets.storageKey.byteLength !== MIN_SECRET_BYTES) {
    throw new TypeError(
      `the storage key (TOOLPACT_STORAGE_KEY) must be exactly ${MIN_SECRET_BYTES} bytes for AES-256-GCM; ` +
        `got ${secrets.storageKey?.byteLength ?? 0}: generate one with \`openssl rand -base64 32\``,
    );
  }
  named.push({ name: "the storage key (TOOLPACT_STORAGE_KEY)", bytes: secrets.storageKey });
  if (secrets.actorSecret !== undefined) {
    requireLength("the actor token secret (TOOLPACT_ACTOR_SECRET)", secrets.actorSecret);
    named.push({ name: "the actor token secret (TOOLPACT_ACTOR_SECRET)", bytes: secrets.actorSecret });
  }
  if (secrets.adminKey !== undefined) {
    const bytes = typeof secrets.adminKey === "string" ? new Uint8Array(Buffer.from(secrets.adminKey, "utf8")) : secrets.adminKey;
    requireLength("the admin key (TOOLPACT_ADMIN_KEY)", bytes);
    named.push({ name: "the admin key (TOOLPACT_ADMIN_KEY)", bytes });
  }
  for (let i = 0; i < named.length; i++) {
    for (let j = i + 1; j < named.length; j++) {
      const a = named[i]!;
      const b = named[j]!;
      if (Buffer.from(a.bytes).equals(Buffer.from(b.bytes))) {
        throw new TypeError(`${a.name} and ${b.name} are the same secret: every secret must be generated on its own`);
      }
    }
  }
}

function checkSigningKeys(keys: readonly SigningKey[]): void {
  if (keys.length === 0) {
    throw new TypeError('no confirmation signing key is configured: set TOOLPACT_SIGNING_KEYS to "kid1:<base64>"');
  }
  const kids = new Set<string>();
  for (const key of keys) {
    if (!KID_PATTERN.test(key.kid)) {
      throw new TypeError(`signing key kid "${key.kid}" must be 1-64 characters of A-Z a-z 0-9 . _ -`);
    }
    if (kids.has(key.kid)) throw new TypeError(`signing key kid "${key.kid}" appears twice; every key needs its own kid`);
    kids.add(key.kid);
    requireLength(`signing key "${key.kid}"`, key.key);
  }
}

function requireLength(name: string, bytes: Uint8Array): void {
  if (!(bytes instanceof Uint8Array) || bytes.byteLength < MIN_SECRET_BYTES) {
    throw new TypeError(
      `${name} is too short: it has ${bytes?.byteLength ?? 0} bytes, at least ${MIN_SECRET_BYTES} are required; ` +
        "generate one with `openssl rand -base64 32`",
    );
  }
}
