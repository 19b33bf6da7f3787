/**
 * U-labels (RFC 5890 section 2.3.2.1) as IDNA2008 registration checks them (RFC 5891 section 4.2): NFC,
 * hyphens, no leading combining mark, and every code point PVALID, or CONTEXTJ/CONTEXTO with its rule
 * from RFC 5892 appendix A satisfied. The Bidi rule (RFC 5893) concerns the whole name: bidi.ts.
 */
import { idnaTables } from "./tables-loaded.js";

const LEADING_MARK = /^\p{M}/u;
const GREEK = /^\p{Script=Greek}$/u;
const HEBREW = /^\p{Script=Hebrew}$/u;
const HIRAGANA_KATAKANA_HAN = /[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]/u;

const ZERO_WIDTH_NON_JOINER = 0x200c;
const MIDDLE_DOT = 0x00b7;
const GREEK_KERAIA = 0x0375;
const HEBREW_GERESH = 0x05f3;
const HEBREW_GERSHAYIM = 0x05f4;
const KATAKANA_MIDDLE_DOT = 0x30fb;
const LOWERCASE_L = 0x6c;
const HYPHEN = 0x2d;

const isArabicIndicDigit = (codePoint: number): boolean => codePoint >= 0x0660 && codePoint <= 0x0669;
const isExtendedArabicIndicDigit = (codePoint: number): boolean => codePoint >= 0x06f0 && codePoint <= 0x06f9;
const hasScript = (script: RegExp, codePoint: number | undefined): boolean => codePoint !== undefined && script.test(String.fromCodePoint(codePoint));

/** Appendix A.1 and A.2: ZERO WIDTH NON-JOINER and JOINER. */
function joinerAllowed(codePoints: readonly number[], index: number): boolean {
  const { virama, joining } = idnaTables();
  if (index > 0 && virama.get(codePoints[index - 1]!) === "V") return true;
  if (codePoints[index] !== ZERO_WIDTH_NON_JOINER) return false;
  // (Joining_Type:{L,D})(Joining_Type:T)*\u200C(Joining_Type:T)*(Joining_Type:{R,D})
  let before = index - 1;
  while (before >= 0 && joining.get(codePoints[before]!) === "T") before--;
  if (before < 0 || !"LD".includes(joining.get(codePoints[before]!))) return false;
  let after = index + 1;
  while (after < codePoints.length && joining.get(codePoints[after]!) === "T") after++;
  return after < codePoints.length && "RD".includes(joining.get(codePoints[after]!));
}

/** Appendix A.3 to A.9: the CONTEXTO code points. */
function contextAllowed(codePoints: readonly number[], index: number): boolean {
  const codePoint = codePoints[index]!;
  const before = codePoints[index - 1];
  const after = codePoints[index + 1];
  switch (codePoint) {
    case MIDDLE_DOT:
      return before === LOWERCASE_L && after === LOWERCASE_L;
    case GREEK_KERAIA:
      return hasScript(GREEK, after);
    case HEBREW_GERESH:
    case HEBREW_GERSHAYIM:
      return hasScript(HEBREW, before);
    case KATAKANA_MIDDLE_DOT:
      return codePoints.some((other) => hasScript(HIRAGANA_KATAKANA_HAN, other));
  }
  if (isArabicIndicDigit(codePoint)) return !codePoints.some(isExtendedArabicIndicDigit);
  if (isExtendedArabicIndicDigit(codePoint)) return !codePoints.some(isArabicIndicDigit);
  return false;
}

/** Whether `label` (with its code points) is a valid U-label, the Bidi rule aside. */
export function isULabel(label: string, codePoints: readonly number[]): boolean {
  if (codePoints.length === 0 || label.normalize("NFC") !== label) return false;
  const last = codePoints.length - 1;
  if (codePoints[0] === HYPHEN || codePoints[last] === HYPHEN || (codePoints[2] === HYPHEN && codePoints[3] === HYPHEN)) return false;
  if (LEADING_MARK.test(label)) return false;
  const { derived } = idnaTables();
  for (let index = 0; index <= last; index++) {
    switch (derived.get(codePoints[index]!)) {
      case "P":
        continue;
      case "J":
        if (joinerAllowed(codePoints, index)) continue;
        return false;
      case "O":
        if (contextAllowed(codePoints, index)) continue;
        return false;
      default:
        return false;
    }
  }
  return true;
}
