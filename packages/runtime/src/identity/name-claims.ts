/** Characters no stored name may hold: C0 controls (NUL above all: PostgreSQL's text refuses it), DEL, C1 controls. */
const CONTROL_CHARACTER = /[\u0000-\u001F\u007F-\u009F]/;
/** Half of a surrogate pair without its other half: not text any store can keep. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Which token a claim came from, for messages. */
export type TokenKind = "actor token" | "presence token";

/** A string claim the store keeps: 1 to `max` characters, well-formed Unicode, no control characters (no NUL). */
export function isNameClaim(value: unknown, max: number): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= max && !CONTROL_CHARACTER.test(value) && !LONE_SURROGATE.test(value);
}

/** What a bad name claim must be, for an UNAUTHENTICATED message. */
export function nameClaimMessage(kind: TokenKind, claim: string, meaning: string, max: number): string {
  return `the ${kind}'s \`${claim}\` claim (${meaning}) must be a non-empty string of at most ${max} characters, without control characters (NUL included) or unpaired surrogates`;
}
