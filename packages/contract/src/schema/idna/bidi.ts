/** The Bidi rule for internationalized domain names (RFC 5893 section 2), on labels as code points. */
import { idnaTables } from "./tables-loaded.js";

/** Bidi classes in a right-to-left label (condition 2) and in a left-to-right one (condition 5). */
const RIGHT_TO_LEFT_ALLOWED = "RANESCTOBM";
const LEFT_TO_RIGHT_ALLOWED = "LESCTOBM";

/** An RTL label (section 1.4): one with a character of class R, AL or AN. A name with one is a Bidi domain name. */
export function isRightToLeftLabel(codePoints: readonly number[]): boolean {
  const { bidi } = idnaTables();
  return codePoints.some((codePoint) => "RAN".includes(bidi.get(codePoint)));
}

/** Whether a label of a Bidi domain name satisfies the six conditions of the Bidi rule. */
export function satisfiesBidiRule(codePoints: readonly number[]): boolean {
  const { bidi } = idnaTables();
  const classes = codePoints.map((codePoint) => bidi.get(codePoint));
  const first = classes[0];
  // 1: the first character is L, R or AL.
  if (first !== "L" && first !== "R" && first !== "A") return false;
  const rightToLeft = first !== "L";
  const allowed = rightToLeft ? RIGHT_TO_LEFT_ALLOWED : LEFT_TO_RIGHT_ALLOWED;
  // 2 and 5: only these classes.
  if (!classes.every((value) => allowed.includes(value))) return false;
  // 3 and 6: the last character other than NSM.
  let end = classes.length - 1;
  while (classes[end] === "M") end--;
  if (!(rightToLeft ? "RAEN" : "LE").includes(classes[end]!)) return false;
  // 4: European and Arabic-Indic digits do not mix in a right-to-left label.
  return !(rightToLeft && classes.includes("E") && classes.includes("N"));
}
