/** RFC 6570 URI Templates (level 4), with the errata that allow an apostrophe in a literal. */
import { isPrivate, isUcschar } from "./format-uri.js";

/** ASCII literal characters: all but controls, space and `"%<>\^`{|}`. */
const ASCII_LITERAL = /^[\x21\x23\x24\x26-\x3b\x3d\x3f-\x5b\x5d\x5f\x61-\x7a\x7e]$/;
const VARCHAR = "(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})";
const VARSPEC = `${VARCHAR}(?:\\.?${VARCHAR})*(?::[1-9]\\d{0,3}|\\*)?`;
const EXPRESSION = new RegExp(`^\\{[+#./;?&=,!@|]?${VARSPEC}(?:,${VARSPEC})*\\}$`);

/** A URI Template: literals, percent-encodings and `{...}` expressions. */
export function isUriTemplate(text: string): boolean {
  for (let index = 0; index < text.length; ) {
    const char = text[index]!;
    if (char === "{") {
      const close = text.indexOf("}", index);
      if (close < 0 || !EXPRESSION.test(text.slice(index, close + 1))) return false;
      index = close + 1;
    } else if (char === "%") {
      if (!/^%[0-9A-Fa-f]{2}/.test(text.slice(index, index + 3))) return false;
      index += 3;
    } else {
      const code = text.codePointAt(index)!;
      if (code < 0x80 ? !ASCII_LITERAL.test(char) : !isUcschar(code) && !isPrivate(code)) return false;
      index += code > 0xffff ? 2 : 1;
    }
  }
  return true;
}
