/** The `format` checks: assertions (a documented choice), each linear in the length of the text. */
import { fullFormats } from "ajv-formats/dist/formats.js";
import { RE2JS } from "re2js";

/** One format check: the JSON type it applies to and the predicate. */
export interface FormatCheck {
  readonly type: "string" | "number";
  readonly check: (value: never) => boolean;
}

/** A WHATWG-parsed http(s)/ftp URL: linear in its length, unlike ajv-formats' `url` regex (quadratic on long input). */
function isWebUrl(text: string): boolean {
  if (!/^(?:https?|ftp):\/\//i.test(text) || /\s/.test(text)) return false;
  try {
    return new URL(text).hostname !== "";
  } catch {
    return false;
  }
}

/** ECMA-262 syntax (unicode mode, as `pattern` means it), judged by the engine's own parser without matching. */
function isEcmaRegex(text: string): boolean {
  try {
    new RegExp(text, "u");
    return true;
  } catch {
    return false;
  }
}

function fromAjvFormats(): Map<string, FormatCheck> {
  const formats = new Map<string, FormatCheck>();
  for (const [name, format] of Object.entries(fullFormats)) {
    if (format instanceof RegExp) {
      let check: (text: string) => boolean;
      try {
        // ajv-formats' regexes mostly backtrack; each one RE2 can run is moved onto RE2.
        const compiled = RE2JS.compile(RE2JS.translateRegExp(format.source), format.flags.includes("i") ? RE2JS.CASE_INSENSITIVE : 0);
        check = (text) => compiled.test(text);
      } catch {
        check = (text) => format.test(text); // lookaround: ajv-formats' own check, bounded by its anchors
      }
      formats.set(name, { type: "string", check });
    } else if (typeof format === "function") {
      formats.set(name, { type: "string", check: format as (text: string) => boolean });
    } else if (typeof format === "object") {
      const definition = format as { type?: string; validate: (value: never) => boolean };
      formats.set(name, { type: definition.type === "number" ? "number" : "string", check: definition.validate });
    } else {
      formats.set(name, { type: "string", check: () => true }); // password, binary: annotations
    }
  }
  formats.set("url", { type: "string", check: isWebUrl });
  formats.set("regex", { type: "string", check: isEcmaRegex });
  return formats;
}

/** Every format toolpact checks, by name. A format not listed here is an annotation (the loader warns). */
export const FORMATS: ReadonlyMap<string, FormatCheck> = fromAjvFormats();
