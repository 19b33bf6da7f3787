/**
 * Domain names as the `hostname`, `idn-hostname` and e-mail formats mean them: RFC 1123 labels, A-labels
 * that really are A-labels (RFC 5890 section 2.3.2.1: valid Punycode of a valid U-label, re-encoding to
 * itself), U-labels (IDNA2008, RFC 5891 section 4.2) where allowed, and the Bidi rule (RFC 5893) over the
 * whole name. Lengths count the name's ASCII form, as DNS does. Linear in the text: it is refused beyond
 * the most a valid name can be, and every label is bounded.
 */
import { isRightToLeftLabel, satisfiesBidiRule } from "./bidi.js";
import { decodePunycode, encodePunycode } from "./punycode.js";
import { isULabel } from "./u-label.js";

/** What a name may hold. */
export interface DomainNameRules {
  /** U-labels (non-ASCII labels) are allowed. */
  readonly unicode: boolean;
  /** What separates labels. */
  readonly separators: RegExp;
  /** Characters of the ASCII form at most: 253 for a host name, 255 for a mail domain (RFC 5321). */
  readonly maxLength: number;
}

/** An LDH label of at most 63 characters that neither starts nor ends with a hyphen (RFC 1123). */
const LDH_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const ASCII = /^[\x00-\x7f]*$/;
const ACE_PREFIX = /^xn--/i;
const MAX_LABEL = 63;

interface Label {
  readonly codePoints: readonly number[];
  /** Length of the label's ASCII form. */
  readonly length: number;
  /** `??--` but not an A-label: an RFC 1123 host name may hold it, an IDN may not (RFC 5890 section 2.3.1). */
  readonly reserved: boolean;
  readonly unicode: boolean;
}

function codePointsOf(text: string): number[] {
  return Array.from(text, (character) => character.codePointAt(0)!);
}

/** An A-label: its U-label is valid and contains a non-ASCII character, and it encodes back to the A-label. */
function aLabel(label: string): Label | undefined {
  const encoded = label.slice(4);
  const codePoints = decodePunycode(encoded);
  if (!codePoints || codePoints.every((codePoint) => codePoint < 0x80)) return undefined;
  if (encodePunycode(codePoints) !== encoded.toLowerCase()) return undefined;
  if (!isULabel(String.fromCodePoint(...codePoints), codePoints)) return undefined;
  return { codePoints, length: label.length, reserved: false, unicode: true };
}

function label(text: string, rules: DomainNameRules): Label | undefined {
  if (ASCII.test(text)) {
    if (!LDH_LABEL.test(text)) return undefined;
    if (ACE_PREFIX.test(text)) return aLabel(text);
    return { codePoints: codePointsOf(text), length: text.length, reserved: text.slice(2, 4) === "--", unicode: false };
  }
  if (!rules.unicode) return undefined;
  const codePoints = codePointsOf(text);
  // An A-label has "xn--" and at least one character per code point.
  if (codePoints.length > MAX_LABEL - 4 || !isULabel(text, codePoints)) return undefined;
  const encoded = encodePunycode(codePoints);
  if (encoded === undefined || encoded.length + 4 > MAX_LABEL) return undefined;
  return { codePoints, length: encoded.length + 4, reserved: false, unicode: true };
}

/** Whether `text` is a domain name under `rules`. */
export function isDomainName(text: string, rules: DomainNameRules): boolean {
  // No label's ASCII form is shorter than its code points, and each code point is at most two UTF-16 units.
  if (text.length > 2 * rules.maxLength) return false;
  const labels: Label[] = [];
  let length = -1;
  for (const part of text.split(rules.separators)) {
    const checked = label(part, rules);
    if (!checked) return false;
    length += checked.length + 1;
    if (length > rules.maxLength) return false;
    labels.push(checked);
  }
  if (labels.some((checked) => checked.unicode) && labels.some((checked) => checked.reserved)) return false;
  if (!labels.some((checked) => isRightToLeftLabel(checked.codePoints))) return true;
  return labels.every((checked) => satisfiesBidiRule(checked.codePoints));
}

/** `hostname`: RFC 1123 host names, whose `xn--` labels are A-labels. */
export const HOST_NAME: DomainNameRules = { unicode: false, separators: /\./, maxLength: 253 };

/** `idn-hostname`: host names with U-labels too; labels may also be separated by U+3002, U+FF0E and U+FF61 (RFC 3490 section 3.1). */
export const IDN_HOST_NAME: DomainNameRules = { unicode: true, separators: /[.\u3002\uff0e\uff61]/, maxLength: 253 };

/** `email`: the domain of a mail address (RFC 5321 section 4.1.2). */
export const MAIL_DOMAIN: DomainNameRules = { unicode: false, separators: /\./, maxLength: 255 };

/** `idn-email`: the domain of a mail address with U-labels (RFC 6531 section 3.3). */
export const IDN_MAIL_DOMAIN: DomainNameRules = { ...MAIL_DOMAIN, unicode: true };
