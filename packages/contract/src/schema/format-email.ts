/** RFC 5321 mailboxes (`local-part@domain`) as the `email` format means them, and RFC 6531's for `idn-email`. */
import { IDN_MAIL_DOMAIN, isDomainName, MAIL_DOMAIN } from "./idna/domain-name.js";
import { isIpv4, isIpv6 } from "./format-uri.js";

const ATEXT = "A-Za-z0-9!#$%&'*+\\-/=?^_`{|}~";
/** RFC 6531 UTF8-non-ascii: any code point beyond ASCII that UTF-8 can encode (no lone surrogate). */
const NON_ASCII = "\\u{80}-\\u{d7ff}\\u{e000}-\\u{10ffff}";
/** A dot-string of atext (extended by `extra`). */
const dotString = (extra: string): RegExp => new RegExp(`^[${ATEXT}${extra}]+(?:\\.[${ATEXT}${extra}]+)*$`, "u");
/** qtextSMTP (extended by `extra`) and quoted-pairSMTP between double quotes. */
const quotedString = (extra: string): RegExp => new RegExp(`^"(?:[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e${extra}]|\\\\[\\x20-\\x7e])*"$`, "u");

const LOCAL_PART = { ascii: [dotString(""), quotedString("")], unicode: [dotString(NON_ASCII), quotedString(NON_ASCII)] };
/** A General-address-literal: a standardized tag, a colon, and dcontent. */
const GENERAL_LITERAL = /^[A-Za-z0-9-]*[A-Za-z0-9]:[\x21-\x5a\x5e-\x7e]+$/;
const MAX_LOCAL_OCTETS = 64;

function isAddressLiteral(literal: string): boolean {
  if (/^IPv6:/i.test(literal)) return isIpv6(literal.slice(5));
  return isIpv4(literal) || (!/^\d+(\.\d+)*$/.test(literal) && GENERAL_LITERAL.test(literal));
}

/** Octets of `text` in UTF-8. */
function utf8Length(text: string): number {
  let octets = text.length;
  for (const character of text) {
    const code = character.codePointAt(0)!;
    // One UTF-16 unit is counted already: 2 octets add 1; 3 octets, and 4 (two units), add 2.
    if (code >= 0x80) octets += code < 0x800 ? 1 : 2;
  }
  return octets;
}

function isMailbox(text: string, unicode: boolean): boolean {
  const at = text.lastIndexOf("@");
  if (at <= 0) return false;
  const local = text.slice(0, at);
  // At most 64 octets, so at most 64 UTF-16 units: checked before any pattern runs.
  if (local.length > MAX_LOCAL_OCTETS || utf8Length(local) > MAX_LOCAL_OCTETS) return false;
  if (!(unicode ? LOCAL_PART.unicode : LOCAL_PART.ascii).some((pattern) => pattern.test(local))) return false;
  const domain = text.slice(at + 1);
  if (domain.startsWith("[") && domain.endsWith("]")) return isAddressLiteral(domain.slice(1, -1));
  // The domain is looked up as IDNA2008 does, in NFC (RFC 5891 section 5.2); the local part is taken as it is.
  return unicode ? isDomainName(domain.normalize("NFC"), IDN_MAIL_DOMAIN) : isDomainName(domain, MAIL_DOMAIN);
}

/** An RFC 5321 Mailbox: a dot-string or quoted local part (at most 64 octets) and a domain or address literal. */
export function isEmail(text: string): boolean {
  return isMailbox(text, false);
}

/** An RFC 6531 Mailbox: `email` with non-ASCII in the local part and U-labels in the domain. */
export function isIdnEmail(text: string): boolean {
  return isMailbox(text, true);
}
