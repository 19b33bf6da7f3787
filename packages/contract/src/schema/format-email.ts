/** RFC 5321 mailboxes (`local-part@domain`), as the `email` format means them. */
import { isIpv4, isIpv6 } from "./format-uri.js";

const DOT_STRING = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+(?:\.[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+)*$/;
/** qtextSMTP and quoted-pairSMTP between double quotes. */
const QUOTED_STRING = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"$/;
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
/** A General-address-literal: a standardized tag, a colon, and dcontent. */
const GENERAL_LITERAL = /^[A-Za-z0-9-]*[A-Za-z0-9]:[\x21-\x5a\x5e-\x7e]+$/;

function isDomain(domain: string): boolean {
  if (domain.startsWith("[") && domain.endsWith("]")) {
    const literal = domain.slice(1, -1);
    if (/^IPv6:/i.test(literal)) return isIpv6(literal.slice(5));
    return isIpv4(literal) || (!/^\d+(\.\d+)*$/.test(literal) && GENERAL_LITERAL.test(literal));
  }
  return domain.length <= 255 && domain.split(".").every((label) => LABEL.test(label));
}

/** An RFC 5321 Mailbox: a dot-string or quoted local part (at most 64 octets) and a domain or address literal. */
export function isEmail(text: string): boolean {
  const at = text.lastIndexOf("@");
  if (at <= 0) return false;
  const local = text.slice(0, at);
  return local.length <= 64 && (DOT_STRING.test(local) || QUOTED_STRING.test(local)) && isDomain(text.slice(at + 1));
}
