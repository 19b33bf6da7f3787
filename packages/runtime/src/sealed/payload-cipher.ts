import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { ToolpactError } from "@toolpact/contract";

const FORMAT = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + IV_BYTES + TAG_BYTES;

/**
 * Seals payloads the store must keep (recorded results, inputs kept for recovery) with AES-256-GCM.
 * Layout: format byte, 12-byte random IV, 16-byte tag, ciphertext. The AAD binds a sealed value to the
 * row it belongs to, so a ciphertext copied into another row does not open.
 */
export class PayloadCipher {
  readonly #key: Buffer;

  constructor(storageKey: Uint8Array) {
    if (storageKey.byteLength !== 32) {
      throw new TypeError(`the storage key must be exactly 32 bytes for AES-256-GCM; got ${storageKey.byteLength}`);
    }
    this.#key = Buffer.from(storageKey);
  }

  /** Encrypts `plaintext` for the row named by `aad`. */
  seal(plaintext: string, aad: string): Uint8Array {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(aad, "utf8"));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    const out = Buffer.allocUnsafe(HEADER_BYTES + body.byteLength);
    out[0] = FORMAT;
    iv.copy(out, 1);
    cipher.getAuthTag().copy(out, 1 + IV_BYTES);
    body.copy(out, HEADER_BYTES);
    return out;
  }

  /** Decrypts a value sealed for the row named by `aad`. */
  open(sealed: Uint8Array, aad: string): string {
    const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    if (bytes.byteLength < HEADER_BYTES || bytes[0] !== FORMAT) {
      throw new ToolpactError("STORED_DATA_DAMAGED", "a stored payload is damaged or in an unknown format; it cannot be read");
    }
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.#key, bytes.subarray(1, 1 + IV_BYTES), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(Buffer.from(aad, "utf8"));
      decipher.setAuthTag(bytes.subarray(1 + IV_BYTES, HEADER_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(HEADER_BYTES)), decipher.final()]).toString("utf8");
    } catch (error) {
      throw new ToolpactError(
        "STORED_DATA_DAMAGED",
        "a stored payload did not decrypt: it was altered, moved to another row, or sealed with another storage key",
        {},
        { cause: error },
      );
    }
  }
}
