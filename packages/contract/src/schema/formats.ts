/** The `format` checks: assertions (a documented choice), each linear in the length of the text. */
import { fullFormats } from "ajv-formats/dist/formats.js";
import { RE2JS } from "re2js";
import { DURATION, isDateTime } from "./format-date-time.js";
import { isEmail, isIdnEmail } from "./format-email.js";
import { HOST_NAME, IDN_HOST_NAME, isDomainName } from "./idna/domain-name.js";
import { isUri } from "./format-uri.js";
import { isUriTemplate } from "./format-uri-template.js";

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

const UUID = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;

/** ajv-formats' checks, moved onto RE2 where they are regexes, then toolpact's own exact ones over them. */
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
  const own: Record<string, (text: string) => boolean> = {
    url: isWebUrl,
    regex: isEcmaRegex,
    uri: (text) => isUri(text, { absolute: true, iri: false }),
    "uri-reference": (text) => isUri(text, { absolute: false, iri: false }),
    iri: (text) => isUri(text, { absolute: true, iri: true }),
    "iri-reference": (text) => isUri(text, { absolute: false, iri: true }),
    "uri-template": isUriTemplate,
    email: isEmail,
    "idn-email": isIdnEmail,
    "date-time": isDateTime,
    duration: (text) => DURATION.test(text),
    uuid: (text) => UUID.test(text),
    hostname: (text) => isDomainName(text, HOST_NAME),
    "idn-hostname": (text) => isDomainName(text, IDN_HOST_NAME),
  };
  for (const [name, check] of Object.entries(own)) formats.set(name, { type: "string", check });
  return formats;
}

/** Every format toolpact checks, by name. A format not listed here is an annotation (the loader warns). */
export const FORMATS: ReadonlyMap<string, FormatCheck> = fromAjvFormats();
